"""What a host's answer looks like (host_child.py's docstring lists them), checked before the
app reads a field of it: a line of the right version but the wrong shape (an event without its
text, an `id` that is a string, `cpu` a number) raised KeyError or AttributeError deep in
hosted.py; it is now one WireError naming the field, and counts as junk (host_lines.py)."""

from __future__ import annotations

from dataclasses import fields

from draftlight.engine.host.wire import WireError
from draftlight.engine.reply.events import Stats
from draftlight.modes import Mode, ModeError

_NUMBER = (int, float)
# The fields each event record must hold, by its type, and what each holds (wire.event_record)
_EVENTS = {"piece": {"text": str, "source": str, "step": int, "token": int, "origin": object},
           "notice": {"message": str},
           "progress": {"stats": dict, "pass_drafted": int, "pass_why": str},
           "reading": {"read": int, "total": int, "seconds": _NUMBER},
           "done": {"text": str, "stats": dict}}
_ERROR = {"type": str, "message": str}
# What each key of an answer holds, where it is there
_TOP = {"id": int, "events": list, "error": dict, "failed": dict, "cpu": dict,
        "loading": _NUMBER, "ready": dict}
_READY = {"modes": list, "n_ctx": int, "load_notices": list}
# Stats' fields and their types, from its defaults (a time may be an int; batch_drift None)
_STATS = {f.name: (_NUMBER if isinstance(getattr(Stats(), f.name), float) else
                   type(getattr(Stats(), f.name))) for f in fields(Stats)}
_STATS.update(mode=str, batch_drift=(*_NUMBER, type(None)))


def check_answer(message: dict) -> dict:
    """`message` (wire.decode's) if it has an answer's shape; WireError naming what is not."""
    for key, kind in _TOP.items():
        if key in message:
            _holds(message, key, kind)
    for record in message.get("events", ()):
        _check_event(record)
    for key in ("error", "failed"):
        if key in message:
            _check_fields(message[key], _ERROR, key)
    if "ready" in message:
        ready = _check_fields(message["ready"], _READY, "ready")
        if not all(isinstance(text, str) for text in ready["modes"] + ready["load_notices"]):
            raise WireError("ready's modes and notices are not all text")
        try:
            [Mode.parse(text) for text in ready["modes"]]
        except ModeError as exc:
            raise WireError(f"ready names a mode this app does not know ({exc})") from None
    about = "id" in message and bool({"events", "result", "error"} & message.keys())
    if not about and not ({"cpu", "loading", "ready", "failed"} & message.keys()):
        raise WireError(f"no answer's keys (it has {', '.join(sorted(message))[:80]})")
    return message


def _check_event(record) -> None:
    if not isinstance(record, dict) or record.get("type") not in _EVENTS:
        raise WireError("an event that is not one of piece, notice, progress, reading, done")
    _check_fields(record, _EVENTS[record["type"]], f"a {record['type']} event")
    if "stats" in record:
        for name, kind in _STATS.items():
            if name in record["stats"]:
                _holds(record["stats"], name, kind, "its stats' ")


def _check_fields(record, shape: dict, what: str) -> dict:
    if not isinstance(record, dict):
        raise WireError(f"{what} is not an object")
    for name, kind in shape.items():
        if name not in record:
            raise WireError(f"{what} has no {name}")
        _holds(record, name, kind, f"{what}'s ")
    return record


def _holds(record: dict, name: str, kind, where: str = "") -> None:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    value = record[name]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise WireError(f"{where}{name} is a {type(value).__name__}, not "
                        f"{' or '.join(k.__name__ for k in kinds)}")
