"""A streamed reply as it arrives: its text and where each part came from. No Qt here.

Runs are [start, end, tokens]: character offsets (Python str indices) into the reply text of
one run of accepted draft tokens (consecutive "draft" pieces of the same target pass), and how
many tokens it holds. Text outside every run came from the target. This is also the format the
history stores.

Passes are [end, tokens, accepted, drafted]: one per target pass, in order, each ending at
character `end` (the next starts there). They go into the reply's figures
(reply_figures.ReplyFigures.passes), for the acceptance strip.

Origins are one per run (parallel to the runs; None = not known): where its drafted tokens came
from, merged over them (run_origin.RunOrigin). They go into the reply's figures
(ReplyFigures.origins); replies saved before origins existed have none, and show no origin.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING

from draftlight.ui.flash.run_origin import RunOrigin

if TYPE_CHECKING:
    from draftlight.engine.step.origins import Origin


class ReplyBuilder:
    def __init__(self, prediction_from: str | None = None, prediction_file: bool = False,
                 prediction_id: int | None = None) -> None:
        """`prediction_from`: what the reply's Predicted Output is ("greet.py", "your earlier
        answer (version 1)"; None: not said), `prediction_file` whether it is a file being
        edited: its runs' origins name it; `prediction_id` the history id of the earlier answer
        it is (its runs' origins point at it: a click shows that version)."""
        self.prediction_from, self.prediction_file = prediction_from, prediction_file
        self.prediction_id = prediction_id
        self._parts: list[str] = []
        self.length = 0  # characters so far
        self._runs: list[list[int]] = []
        self._origins: list[RunOrigin | None] = []  # one per entry of _runs
        self._open_run_step: int | None = None  # step of the run the next draft piece may extend
        self.tokens = 0
        self.accepted = 0  # draft tokens the target accepted
        self.passes = 0  # target passes seen (distinct steps)
        self._last_step: int | None = None
        self._recent: deque[float] = deque()  # times of the pieces of the last RATE_WINDOW s
        self.pass_table: list[list[int]] = []  # [end, tokens, accepted, drafted] per pass
        self.pass_why: list[str] = []  # auto's reason a pass drafted nothing ("": it drafted)
        self._pass_steps: list[int] = []
        self.first_piece_at: float | None = None
        self.last_piece_at: float | None = None

    def carry_on(self, text: str, runs: list[list[int]], origins: list[RunOrigin | None],
                 passes: list[list[int]]) -> None:
        """Start from a reply already written (Continue): what arrives is added after `text`,
        whose runs, their origins and its passes (the strip's cells) stay as they were. The
        counts (tokens, passes, accepted) are of what arrives."""
        self._parts, self.length = [text], len(text)
        self._runs = [list(run) for run in runs]
        self._origins = list(origins) if len(origins) == len(runs) else [None] * len(runs)
        self.pass_table = [list(row) for row in passes]
        self._pass_steps = [-1] * len(passes)  # no step the engine numbers now

    def add(self, text: str, source: str, step: int, origin: Origin | None = None,
            role: str | None = None, at: int | None = None) -> None:
        """One piece; a drafted one's `origin`, and for a copy of a message, that message's
        `role` and its index in the chat (`at`; None: the system prompt)."""
        now = time.perf_counter()
        if self.first_piece_at is None:
            self.first_piece_at = now
        self.last_piece_at = now
        self._recent.append(now)
        start = self.length
        self._parts.append(text)
        self.length += len(text)
        self.tokens += 1
        if step != self._last_step:
            self.passes += 1
            self._last_step = step
            self.pass_table.append([start, 0, 0, 0])
            self._pass_steps.append(step)
        row = self.pass_table[-1]
        row[0] = self.length
        row[1] += 1
        if source == "draft":
            row[2] += 1
        if source == "draft":
            self.accepted += 1
            if self._open_run_step == step and self._runs and self._runs[-1][1] == start:
                self._runs[-1][1] = self.length
                self._runs[-1][2] += 1
                if self._origins[-1] is not None:
                    self._origins[-1].merge(origin)
            else:
                self._runs.append([start, self.length, 1])
                self._origins.append(self._first_origin(origin, role, at))
            self._open_run_step = step
        else:
            self._open_run_step = None

    RATE_WINDOW = 1.0  # seconds over which "tokens per second now" is measured

    def rate_now(self, now: float | None = None) -> float:
        """Tokens per second over the last RATE_WINDOW seconds (the reply's own rate before)."""
        now = time.perf_counter() if now is None else now
        while self._recent and self._recent[0] < now - self.RATE_WINDOW:
            self._recent.popleft()
        started = self.first_piece_at or now
        span = min(self.RATE_WINDOW, now - started)
        return len(self._recent) / span if span > 0.05 else 0.0

    def note_drafted(self, step: int, drafted: int, why: str = "") -> None:
        """Pass `step` had `drafted` tokens proposed (told after its pieces); `why`: auto's
        reason where it drafted nothing."""
        if self._pass_steps and self._pass_steps[-1] == step:
            self.pass_table[-1][3] = drafted
            if why:
                self.pass_why += [""] * (len(self.pass_table) - len(self.pass_why))
                self.pass_why[-1] = why

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def runs(self) -> list[list[int]]:
        """Runs with at least one character (a token may be an incomplete UTF-8 character)."""
        return [list(run) for run in self._runs if run[1] > run[0]]

    @property
    def origins(self) -> list[RunOrigin | None]:
        """One per entry of `runs`: where that run's tokens came from (None: not known)."""
        return [origin for run, origin in zip(self._runs, self._origins) if run[1] > run[0]]

    def _first_origin(self, origin: Origin | None, role: str | None,
                      at: int | None) -> RunOrigin | None:
        if origin is None:
            return None
        if origin.kind == "message":
            return RunOrigin.first(origin, role=role, at=at)
        if origin.kind == "prediction" and self.prediction_from:
            return RunOrigin.first(origin, source=self.prediction_from,
                                   file=self.prediction_file, message_id=self.prediction_id)
        return RunOrigin.first(origin)
