"""Where one accepted run of a reply came from, as the window keeps it: the engine's Origin of
its first token (engine/step/origins.py), placed in the chat (which message, by role and index), told
what drafted it where a Predicted Output did, and merged over the run's tokens (`merge`). No
Qt here.

The history keeps each run's `record()` in the reply's stored figures ("origins",
reply_figures.py), and `from_record` reads it back; that JSON is the only form in which an
origin is a dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from draftlight.engine.step.origins import Origin

COPIES = ("message", "reply", "prediction")  # kinds with a span of their source
_JSON_NAMES = {"source": "from"}  # the stored key of a field, where it differs


@dataclass
class RunOrigin:
    kind: str  # Origin.kind: "message", "reply", "prediction", "template" or "model"
    message: int | None = None  # "message": its index in what the engine was given
    start: int | None = None  # copies: the run's characters in its source, [start, end)
    end: int | None = None
    name: str | None = None  # "model": the draft model's name
    p: list[float] | None = None  # "model": the probability it gave each token of the run
    text: str | None = None  # "model" of another vocabulary: the text it drafted
    role: str | None = None  # "message": the role of the message copied from
    at: int | None = None  # "message": that message's index in the chat (None: system prompt)
    source: str | None = None  # "prediction": what drafted ("greet.py", an earlier answer)
    file: bool | None = None  # "prediction": whether that is a file being edited
    message_id: int | None = None  # "prediction": the earlier answer's history id
    # while the run grows: its first token's end, and whether a later token left the source
    _first_end: int | None = field(default=None, repr=False, compare=False)
    _broken: bool = field(default=False, repr=False, compare=False)

    @classmethod
    def first(cls, origin: Origin, **placed) -> "RunOrigin":
        """A run's origin from its first token's, with what the window adds (`placed`: role
        and at, source, file, message_id)."""
        run = cls(origin.kind, message=origin.message, start=origin.start, end=origin.end,
                  name=origin.name, p=[origin.p] if origin.p is not None else None,
                  text=origin.text, **placed)
        run._first_end = origin.end if origin.kind in COPIES else None
        return run

    def merge(self, token: Origin | None) -> None:
        """One more token. Copies keep the first token's kind and message; their span runs
        from the first token's start to the last one's end while all the tokens are contiguous
        in one source, and is the first token's alone once they are not. A draft model's
        guesses collect their p's (or, for a draft of another vocabulary, its text)."""
        if self.kind in COPIES:
            if self._broken:
                return
            if (token is not None and token.kind == self.kind
                    and token.message == self.message and token.start == self.end):
                self.end = token.end
            else:
                self.end, self._broken = self._first_end, True
            return
        if token is None or token.kind != self.kind:
            return
        if self.kind == "model" and self.name == token.name:
            if self.p is not None and token.p is not None:
                self.p.append(token.p)
            elif self.text is not None and token.text is not None:
                self.text += token.text

    @property
    def has_source_in_chat(self) -> bool:
        """Whether a click can show where it came from: this reply, a message of the chat, or
        an earlier answer kept in the history."""
        return (self.kind == "reply" or self.kind == "message" and self.at is not None
                or self.kind == "prediction" and self.message_id is not None)

    def record(self) -> dict:
        """As the history stores it: the fields set, "from" for `source`."""
        return {_JSON_NAMES.get(f.name, f.name): getattr(self, f.name) for f in fields(self)
                if f.name[0] != "_" and getattr(self, f.name) is not None}

    @classmethod
    def from_record(cls, record) -> "RunOrigin | None":
        """A stored origin (record()'s form, or an older reply's); None for what is not one.
        Values of the wrong type are left out rather than trusted."""
        if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
            return None
        values = {}
        for f in fields(cls):
            value = record.get(_JSON_NAMES.get(f.name, f.name))
            if f.name[0] != "_" and value is not None and _fits(f.name, value):
                values[f.name] = list(value) if f.name == "p" else value
        return cls(**values)


def _fits(name: str, value) -> bool:
    if name in ("message", "start", "end", "at", "message_id"):
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "file":
        return isinstance(value, bool)
    if name == "p":
        return isinstance(value, list) and all(isinstance(v, (int, float)) for v in value)
    return isinstance(value, str)
