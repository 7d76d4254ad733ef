"""The record that crosses between the engine's host process (host_child.py) and the app
(hosted.py): each event of a reply as one JSON object, typed on both sides.

    line = encode(event)          # TextPiece, Notice, Progress or Done -> a JSON line (bytes)
    event = decode(json.loads(line)["event"])

Every object carries VERSION; a reader refuses one of another version with one line (the host
and the app are the same install, so they differ only when an update replaced one while the
other ran). A line is at most MAX_LINE_BYTES; what the app reads is checked for its shape by
host_answers.py. Stats travel as their fields (Stats.from_dict reads them back, ignoring what it
does not know); an origin as Origin.record's object.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from draftlight.engine.core.errors import EngineError
from draftlight.modes import Mode
from draftlight.engine.reply.events import Done, Event, Notice, Progress, Reading, Stats, TextPiece
from draftlight.engine.step.origins import Origin
from draftlight.engine.core.sampling import SamplingParams

VERSION = 1
# The longest line either side writes. The longest a host writes is a reply's last: its text
# (ASCII JSON: up to 12 bytes a character), each pass and each drafted run's origin; a reply of
# 131,072 tokens, a large context's whole, stays under 16 MiB of it.
MAX_LINE_BYTES = 64 << 20


class WireError(ValueError):
    """A line that is not a message of the wire, and why (one line)."""


class WireVersionError(EngineError):
    """A message of another version of the wire: the host and the app are not one install."""


def event_record(event: Event) -> dict:
    if isinstance(event, TextPiece):
        return {"type": "piece", "text": event.text, "source": event.source, "step": event.step,
                "token": event.token,
                "origin": event.origin.record() if event.origin is not None else None}
    if isinstance(event, Notice):
        return {"type": "notice", "message": event.message}
    if isinstance(event, Progress):
        return {"type": "progress", "stats": event.stats.to_dict(),
                "pass_drafted": event.pass_drafted, "pass_why": event.pass_why}
    if isinstance(event, Reading):
        return {"type": "reading", "read": event.read, "total": event.total,
                "seconds": event.seconds}
    if isinstance(event, Done):
        return {"type": "done", "text": event.text, "stats": event.stats.to_dict()}
    raise TypeError(f"not an engine event: {event!r}")


def event_from(record: dict) -> Event:
    kind = record["type"]
    if kind == "piece":
        return TextPiece(record["text"], record["source"], record["step"], record["token"],
                         Origin.from_record(record["origin"]))
    if kind == "notice":
        return Notice(record["message"])
    if kind == "progress":
        return Progress(Stats.from_dict(record["stats"]), record["pass_drafted"],
                        record["pass_why"])
    if kind == "reading":
        return Reading(int(record["read"]), int(record["total"]), float(record["seconds"]))
    if kind == "done":
        return Done(record["text"], Stats.from_dict(record["stats"]))
    raise ValueError(f"unknown event type {kind!r}")


def modes_from(texts: list[str]) -> tuple[Mode, ...]:
    """The modes an engine offers, as the host wrote them (str of each)."""
    return tuple(Mode.parse(text) for text in texts)


def params_record(params: SamplingParams) -> dict:
    return asdict(params)


def params_from(record: dict) -> SamplingParams:
    return SamplingParams(**record)


def encode(message: dict) -> bytes:
    """One line of the wire: `message` with the version, as ASCII JSON (lone surrogates in a
    reply's text survive)."""
    return json.dumps({"v": VERSION, **message}).encode("ascii") + b"\n"


def decode(line: bytes) -> dict:
    """One line of the wire as its message.

    Raises:
        WireError: the line is not a JSON object (not JSON, nested past the parser's reach,
            a list, a number, …).
        WireVersionError: an object of another version of the wire (or of none)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested 1,000 deep or more
        raise WireError(f"not JSON ({str(exc)[:80]})") from None
    if not isinstance(message, dict):
        raise WireError(f"a JSON {type(message).__name__}, not an object")
    if message.get("v") != VERSION:
        version = message.get("v")
        raise WireVersionError(f"the engine process speaks version "
                               f"{version if isinstance(version, int) else '(none)'} of the "
                               f"wire, this app {VERSION}: restart Draftlight")
    return message


def error_record(exc: BaseException) -> dict:
    """An exception raised in the host, as the app raises it again (hosted.py)."""
    return {"type": type(exc).__name__, "message": str(exc).splitlines()[0] if str(exc) else
            type(exc).__name__}


def error_from(record: dict) -> BaseException:
    """The engine's own error classes by name (ContextOverflowError, ChatTemplateError, …);
    anything else as an EngineError that names it."""
    from draftlight.engine.core import errors
    kind = getattr(errors, record["type"], None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        return kind(record["message"])
    if record["type"] == "MeasurementInterrupted":
        from draftlight.engine.auto.measuring import MeasurementInterrupted
        return MeasurementInterrupted()
    if record["type"] == "ValueError":  # a request the engine refused (sampling options)
        return ValueError(record["message"])
    return EngineError(f"the engine failed: {record['type']}: {record['message']}")
