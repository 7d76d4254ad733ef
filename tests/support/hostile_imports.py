"""Hostile conversation exports (tests only), beside the GGUF corpus (hostile_gguf.py): each is
the bytes of a file handed to File > Import, and what the import must make of it: a new
conversation (with `notes`, lines for figures left out, holding `says`), or one ExportError
holding `says` with the history unchanged.

The files are written here as bytes and with json.dumps, never with export.py, so each is as
hostile as its recipe says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

MiB = 1 << 20
FORMAT = "draftlight-conversation"


def export(messages, version=2, **fields) -> bytes:
    return json.dumps({"format": FORMAT, "version": version, "title": "t",
                       "shown": len(messages) if isinstance(messages, list) else 1,
                       "messages": messages, **fields}).encode()


def reply(**fields) -> dict:
    """A version 2 export's second message, after a question."""
    return {"id": 2, "parent": 1, "role": "assistant", "text": "hello", **fields}


QUESTION = {"id": 1, "parent": None, "role": "user", "text": "hi"}


def with_reply(**fields) -> bytes:
    return export([QUESTION, reply(**fields)])


def raw_reply(fields: str) -> bytes:
    """An export whose reply holds `fields` as JSON text (what json.dumps cannot write)."""
    return (b'{"format": "draftlight-conversation", "version": 2, "shown": 2, "messages": ['
            + json.dumps(QUESTION).encode() + b', {"id": 2, "parent": 1, "role": "assistant", '
            b'"text": "hello", ' + fields.encode() + b"}]}")


@dataclass(frozen=True)
class HostileImport:
    data: bytes
    imported: bool  # a new conversation (else one ExportError)
    says: str = ""  # in the error, or in the notes of what was left out


def hostile_imports() -> dict[str, HostileImport]:
    deep = b"[" * 100_000 + b"]" * 100_000
    cases = {
        "good": HostileImport(with_reply(runs=[[0, 5, 2]], stats={"new_tokens": 2}), True),
        "nested-100k": HostileImport(deep, False, "nested more than 64 levels"),
        # the file, its messages and the reply are three levels; stats the rest
        "nested-65-deep-in-stats": HostileImport(with_reply(stats=_nest(62)), False,
                                                 "nested more"),
        "nested-64-deep-in-stats": HostileImport(with_reply(stats=_nest(61)), True),
        "brackets-in-a-string": HostileImport(with_reply(text="[" * 100_000), True),
        "escaped-quotes-hiding-brackets": HostileImport(
            raw_reply('"mode": "\\\\\\"' + "[" * 100 + '"'), True),
        "backslashes-then-brackets": HostileImport(
            raw_reply('"mode": "' + "\\\\" * 50 + '", "stats": ' + "[" * 70 + "]" * 70), False,
            "nested more"),
        "a-4000-digit-count": HostileImport(raw_reply('"stats": {"new_tokens": 1' + "0" * 3999
                                                      + "}"), True, "4,000 digits"),
        "a-5000-digit-count": HostileImport(raw_reply('"stats": {"new_tokens": 1' + "0" * 4999
                                                      + "}"), False, "not JSON"),
        "infinity-and-nan": HostileImport(raw_reply('"stats": {"seconds": Infinity, '
                                                    '"prefill_seconds": NaN}'), True, "inf"),
        "a-huge-float": HostileImport(raw_reply('"stats": {"seconds": 1e308}'), True, "1e+308"),
        "a-huge-run": HostileImport(with_reply(runs=[[0, 5, 10 ** 30]]), False, "runs"),
        "a-run-past-the-text": HostileImport(with_reply(runs=[[0, 99, 1]]), False, "runs"),
        "lone-surrogates": HostileImport(raw_reply('"mode": "\\udfff", "stats": {"\\ud800": '
                                                   '"\\ud800"}').replace(b'"hello"',
                                                                         b'"a\\ud800b"'), True),
        "a-lone-surrogate-title": HostileImport(export([QUESTION], title="\ud800"), True),
        "not-utf8": HostileImport(b'{"format": "\xff"}', False, "not JSON"),
        "a-utf8-bom": HostileImport(b"\xef\xbb\xbf" + with_reply(), False, "not JSON"),
        "binary": HostileImport(bytes(range(256)) * 10, False, "not JSON"),
        "empty": HostileImport(b"", False, "not JSON"),
        "a-list": HostileImport(b"[]", False, "not a Draftlight export"),
        "messages-an-object": HostileImport(export({"0": QUESTION}), False, "not a list"),
        "a-message-a-list": HostileImport(export([[1, 2]]), False, "not an object"),
        "role-a-number": HostileImport(export([{**QUESTION, "role": 1}]), False, "role"),
        "text-a-list": HostileImport(export([{**QUESTION, "text": ["x"]}]), False, "text"),
        "stats-a-list": HostileImport(with_reply(stats=[1]), False, "stats"),
        "status-a-number": HostileImport(with_reply(status=1), False, "status"),
        "parent-later": HostileImport(export([{**QUESTION, "parent": 2}, reply()]), False,
                                      "parent"),
        "parent-itself": HostileImport(export([{**QUESTION, "parent": 1}]), False, "parent"),
        "id-text": HostileImport(export([{**QUESTION, "id": "1"}]), False, "id"),
        "shown-outside": HostileImport(export([QUESTION], shown=7), False, "shown"),
        "shown-a-list": HostileImport(export([QUESTION], shown=[1]), False, "shown"),
        "version-huge": HostileImport(export([QUESTION], version=10 ** 100), False, "version"),
        "a-nul-in-text": HostileImport(export([{**QUESTION, "text": "a\x00b"}]), True),
        "a-long-title": HostileImport(export([QUESTION], title="t" * 1_000_000), True),
        "many-keys": HostileImport(with_reply(stats={str(n): n for n in range(100_000)}), True),
        "a-string-of-8-mb": HostileImport(export([{**QUESTION, "text": "x" * (8 * MiB)}]), True),
        "many-escapes": HostileImport(export([{**QUESTION, "text": "\n\"\\" * MiB}]), True),
    }
    return cases


def _nest(depth: int):
    """{"a": {"a": … {} …}} `depth` objects deep."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value
