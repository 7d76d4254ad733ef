"""A streamed reply as it arrives: its text and where each part came from. No Qt here.

Runs are [start, end, tokens]: character offsets (Python str indices) into the reply text of
one run of accepted draft tokens (consecutive "draft" pieces of the same target pass), and how
many tokens it holds. Text outside every run came from the target. This is also the format the
history stores.
"""

from __future__ import annotations

import time


class ReplyBuilder:
    def __init__(self) -> None:
        self._parts: list[str] = []
        self.length = 0  # characters so far
        self._runs: list[list[int]] = []
        self._open_run_step: int | None = None  # step of the run the next draft piece may extend
        self.tokens = 0
        self.accepted = 0  # draft tokens the target accepted
        self.passes = 0  # target passes seen (distinct steps)
        self._last_step: int | None = None
        self.first_piece_at: float | None = None
        self.last_piece_at: float | None = None

    def add(self, text: str, source: str, step: int) -> None:
        now = time.perf_counter()
        if self.first_piece_at is None:
            self.first_piece_at = now
        self.last_piece_at = now
        start = self.length
        self._parts.append(text)
        self.length += len(text)
        self.tokens += 1
        if step != self._last_step:
            self.passes += 1
            self._last_step = step
        if source == "draft":
            self.accepted += 1
            if self._open_run_step == step and self._runs and self._runs[-1][1] == start:
                self._runs[-1][1] = self.length
                self._runs[-1][2] += 1
            else:
                self._runs.append([start, self.length, 1])
            self._open_run_step = step
        else:
            self._open_run_step = None

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def runs(self) -> list[list[int]]:
        """Runs with at least one character (a token may be an incomplete UTF-8 character)."""
        return [list(run) for run in self._runs if run[1] > run[0]]
