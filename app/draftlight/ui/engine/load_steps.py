"""A load as the steps it went through, each with its time: "✓ Making the faster Q8_0 copy of
the bundled model (once) 14 s", then "Loading SmolLM2-135M-Instruct… 3 s" while it runs. A first
run spends a minute or more here on a busy machine; a line that only says "Loading…" for that
long looks stuck. Plain Python: the window asks for its lines once a second."""

from __future__ import annotations

import re
import time

# A conversion's status ends with its percentage ("Making … 40%"): the same step, further on.
_PERCENT = re.compile(r"\s+\d{1,3}%$")


class LoadSteps:
    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self.steps: list[list] = []  # [what, started, finished or None]

    def begin(self, what: str) -> None:
        """A status arrived while loading: a new step, or the running one going on."""
        what = _PERCENT.sub("", what.strip())
        now = self.clock()
        if self.steps and self.steps[-1][2] is None:
            if self.steps[-1][0] == what:
                return
            self.steps[-1][2] = now
        self.steps.append([what, now, None])

    def finish(self) -> None:
        if self.steps and self.steps[-1][2] is None:
            self.steps[-1][2] = self.clock()

    def restart(self) -> None:
        """Another load begins: its steps only."""
        self.steps = []

    @property
    def running(self) -> bool:
        return bool(self.steps) and self.steps[-1][2] is None

    @property
    def current(self) -> str:
        """The running step's words ("Loading qwen2.5-coder-1.5b (1.1 GB of weights)…"), its
        percentage taken off; "" when none runs."""
        return self.steps[-1][0] if self.running else ""

    def lines(self) -> list[str]:
        now = self.clock()
        out = []
        for what, started, finished in self.steps:
            seconds = (finished if finished is not None else now) - started
            mark = "✓ " if finished is not None else ""
            out.append(f"{mark}{what.rstrip('…').rstrip('.')} · {_seconds(seconds)}"
                       + ("" if finished is not None else " so far"))
        return out

    def elapsed(self) -> float:
        """Seconds since the first step began."""
        return self.clock() - self.steps[0][1] if self.steps else 0.0


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"
