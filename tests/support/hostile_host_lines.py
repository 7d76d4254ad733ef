"""What a broken engine host could write on its pipe to the app (tests only), beside the GGUF
corpus (hostile_gguf.py): each case is its bytes, as chunks, and what the app must make of them
(host_lines.HostLines): the messages it still reads, then either the pipe's end or one
HostBroken whose line holds `says`.

The lines are packed here with json.dumps, not with wire.py, so a case is as hostile as its
recipe says; `good` lines are ones a real host writes (host_child.py's docstring).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MiB = 1 << 20
JUNK_BOUND = 16  # host_lines.MAX_JUNK_LINES, written here so the corpus stays its own


def line(message: dict, version=1) -> bytes:
    return json.dumps({"v": version, **message}).encode("ascii") + b"\n"


PIECE = {"type": "piece", "text": "Hi", "source": "target", "step": 0, "token": 17,
         "origin": None}
DONE = {"type": "done", "text": "Hi", "stats": {"new_tokens": 1, "seconds": 0.5, "mode": "off"}}
GOOD = [{"cpu": {"trying_extra": False}}, {"loading": 0.5},
        {"ready": {"modes": ["off", "ngram"], "n_ctx": 1024, "load_notices": []}},
        {"id": 1, "events": [PIECE]},
        {"id": 1, "events": [{"type": "progress", "stats": {"new_tokens": 1}, "pass_drafted": 0,
                              "pass_why": ""}, {"type": "reading", "read": 5, "total": 9,
                                                "seconds": 1}]},
        {"id": 1, "events": [DONE], "end": True}, {"id": 2, "result": [1, 2, 3]},
        {"id": 3, "error": {"type": "ContextOverflowError", "message": "too long"}}]
GOOD_BYTES = b"".join(line(m) for m in GOOD)

# Lines of the right version that no host writes: each is junk, counted
WRONG_SHAPES = {
    "cpu-a-number": {"cpu": 5},
    "loading-text": {"loading": "half"},
    "ready-without-n_ctx": {"ready": {"modes": [], "load_notices": []}},
    "ready-unknown-mode": {"ready": {"modes": ["warp"], "n_ctx": 1, "load_notices": []}},
    "id-text": {"id": "1", "result": 1},
    "id-true": {"id": True, "result": 1},
    "answer-of-nothing": {"id": 1},
    "events-an-object": {"id": 1, "events": {"type": "piece"}},
    "event-unknown": {"id": 1, "events": [{"type": "explode"}]},
    "piece-without-text": {"id": 1, "events": [{k: v for k, v in PIECE.items() if k != "text"}]},
    "piece-step-text": {"id": 1, "events": [{**PIECE, "step": "0"}]},
    "piece-without-origin": {"id": 1, "events": [{k: v for k, v in PIECE.items()
                                                  if k != "origin"}]},
    "done-stats-a-list": {"id": 1, "events": [{**DONE, "stats": [1]}]},
    "done-count-text": {"id": 1, "events": [{**DONE, "stats": {"new_tokens": "1"}}]},
    "done-time-true": {"id": 1, "events": [{**DONE, "stats": {"seconds": True}}]},
    "error-without-message": {"id": 1, "error": {"type": "EngineError"}},
    "failed-a-string": {"failed": "boom"},
    "no-known-key": {"hello": "world"},
}


@dataclass(frozen=True)
class HostileOutput:
    chunks: tuple[bytes, ...] | Iterable[bytes]  # what the host writes, in its writes
    reads: int = 0  # the good messages read before the end or the break
    says: str | None = None  # in HostBroken's line; None: the pipe just ends


def _repeat(chunk: bytes, times: int) -> Iterator[bytes]:
    for _ in range(times):
        yield chunk


def hostile_outputs() -> dict[str, HostileOutput]:
    junk = b"llama.cpp says hello\n"
    cases = {
        "good": HostileOutput((GOOD_BYTES,), len(GOOD)),
        "good-a-byte-at-a-time": HostileOutput(tuple(bytes([b]) for b in GOOD_BYTES), len(GOOD)),
        "junk-200k-lines": HostileOutput((junk * 200_000,), 0, "lines that are not its answers"),
        "junk-within-the-bound": HostileOutput((junk * JUNK_BOUND + GOOD_BYTES,), len(GOOD)),
        "junk-one-past-the-bound": HostileOutput((GOOD_BYTES + junk * (JUNK_BOUND + 1),),
                                                 len(GOOD), "lines that are not its answers"),
        "a-json-list": HostileOutput((b"[1, 2]\n" + GOOD_BYTES,), len(GOOD)),
        "a-json-number-string-null": HostileOutput((b'7\n"x"\nnull\ntrue\n' + GOOD_BYTES,),
                                                   len(GOOD)),
        "empty-lines": HostileOutput((b"\n\r\n \n" + GOOD_BYTES,), len(GOOD)),
        "nested-100k": HostileOutput((b"[" * 100_000 + b"\n" + GOOD_BYTES,), len(GOOD)),
        "nested-objects-100k": HostileOutput((b'{"a":' * 100_000 + b"\n" + GOOD_BYTES,),
                                             len(GOOD)),
        "not-utf8": HostileOutput((b'\xff\xfe{"v": 1}\n' + GOOD_BYTES,), len(GOOD)),
        "nul-bytes": HostileOutput((b'{"v": 1, "cpu": {}}\x00\n' + GOOD_BYTES,), len(GOOD)),
        "nan-and-infinity": HostileOutput((b'{"v": NaN}\n{"v": Infinity}\n' + GOOD_BYTES,), 0,
                                          "version (none) of the wire"),
        "wrong-version-first": HostileOutput((line(GOOD[0], 2) + GOOD_BYTES,), 0,
                                             "version 2 of the wire, this app 1"),
        "no-version": HostileOutput((json.dumps(GOOD[0]).encode() + b"\n",), 0,
                                    "version (none) of the wire"),
        "version-as-text": HostileOutput((line(GOOD[0], "1"),), 0, "version (none)"),
        "wrong-version-later": HostileOutput((GOOD_BYTES + line(GOOD[3], 0),), len(GOOD),
                                             "version 0 of the wire"),
        "last-line-cut": HostileOutput((GOOD_BYTES + b'{"v": 1, "id": 4, "res',), len(GOOD)),
        "every-wrong-shape": HostileOutput((b"".join(line(m) for m in WRONG_SHAPES.values())
                                            + GOOD_BYTES,), 0, "lines that are not its answers"),
        "a-line-of-100-mb-without-a-newline": HostileOutput(
            _repeat(b"x" * MiB, 100), 0, "a line over 64 MiB"),
        "a-line-of-8-mb": HostileOutput((b'{"v": 1, "id": 2, "result": "',
                                         *_repeat(b"x" * MiB, 8), b'"}\n' + GOOD_BYTES),
                                        len(GOOD) + 1),
    }
    for name, message in WRONG_SHAPES.items():
        cases[f"shape-{name}"] = HostileOutput((line(message) + GOOD_BYTES,), len(GOOD))
    return cases
