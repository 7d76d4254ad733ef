"""Stop sequences over a stream of text pieces that each carry where they came from.

A piece is held back while the text so far ends with the beginning of a stop sequence, so a
stop split across tokens ("\\n\\n" as two "\\n") is still caught and never half-sent.
"""

from __future__ import annotations

from typing import Generic, TypeVar

Meta = TypeVar("Meta")


class StopFilter(Generic[Meta]):
    def __init__(self, stops: tuple[str, ...] | list[str]) -> None:
        self.stops = [s for s in stops if s]
        self._held: list[tuple[str, Meta]] = []
        self.stopped = False

    def feed(self, text: str, meta: Meta) -> list[tuple[str, Meta]]:
        """The pieces that can be sent now. After a stop sequence, `stopped` is True and the
        pieces returned end just before it."""
        if self.stopped:
            return []
        if not self.stops:
            return [(text, meta)]
        self._held.append((text, meta))
        held = "".join(t for t, _ in self._held)
        found = [i for i in (held.find(s) for s in self.stops) if i >= 0]
        if found:
            self.stopped = True
            return self._take(min(found), cut=True)
        return self._take(len(held) - self._partial(held))

    def flush(self) -> list[tuple[str, Meta]]:
        """Whatever is held at the end of the reply (a stop's beginning that never finished)."""
        out, self._held = ([] if self.stopped else self._held), []
        return out

    def _partial(self, held: str) -> int:
        """Length of the longest tail of `held` that begins some stop sequence."""
        for length in range(min(len(held), max(map(len, self.stops)) - 1), 0, -1):
            tail = held[-length:]
            if any(s.startswith(tail) for s in self.stops):
                return length
        return 0

    def _take(self, end: int, *, cut: bool = False) -> list[tuple[str, Meta]]:
        """Release the held pieces that lie before character `end`; with `cut`, the piece
        that crosses it is shortened and everything after is dropped."""
        out, position = [], 0
        while self._held and position + len(self._held[0][0]) <= end:
            text, meta = self._held.pop(0)
            out.append((text, meta))
            position += len(text)
        if cut:
            if self._held and end > position:
                text, meta = self._held[0]
                out.append((text[:end - position], meta))
            self._held = []
        return [(t, m) for t, m in out if t]
