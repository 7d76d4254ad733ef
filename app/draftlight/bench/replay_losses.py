"""Where auto loses to the n-gram ceiling, step by step, on recorded answers.

The replay (replay.py) runs auto over recorded answers; at every step a LossWatcher compares
what auto did with what the oracle (ceiling.py) would do from the same position, and charges the
difference to one of five causes:

    start   nothing drafted where a copy that pays begins (the step before accepted nothing)
    held    nothing drafted in the middle of a copy (the step before accepted some)
    short   every drafted token right, and the copy went on past the draft
    long    drafted past the copy's end: the oracle's guess ends where auto's did
    source  auto's guess failed where the oracle's (the same lookup, matched by token ids)
            went on: another occurrence would have been right

A step's loss is its cost less what the tokens it produced cost the oracle at that position:

    loss = v(d + 1) − (r + 1) · c*,    c* = v(R + 1) / (R + 1), or 1 where the oracle's R
                                        right guesses do not pay for their pass

(d drafted, r accepted, R = how many of the oracle's guess the answer follows). The losses sum
to auto's passes less Σ (r + 1)·c*, close to (not exactly) auto's passes less the oracle's, as
the two walk the answer in different steps; the report gives both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from draftlight.bench.ceiling import followed
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.engine.reply.generator import SpeculationConfig

CAUSES = ("start", "held", "short", "long", "source")


@dataclass
class Losses:
    """One category's lost passes per cause, with its totals."""

    passes: float = 0.0  # auto's Σ v(k)
    oracle: float = 0.0  # the oracle's
    tokens: int = 0
    lost: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CAUSES, 0.0))

    def share(self, cause: str) -> float:
        """That cause's loss as a share of auto's time."""
        return self.lost[cause] / self.passes if self.passes else 0.0

    @property
    def gap(self) -> float:
        """Auto's time the oracle would not spend, as a share of auto's."""
        return (self.passes - self.oracle) / self.passes if self.passes else 0.0


def classify(drafted: int, accepted: int, oracle_right: int, before: int) -> str | None:
    """The cause a step's loss is charged to (CAUSES), None for a step that did its best."""
    if drafted == 0:
        if oracle_right == 0:
            return None
        return "held" if before > 0 else "start"
    if accepted == drafted:
        return "short" if oracle_right > drafted else None
    return "long" if accepted >= oracle_right else "source"


class LossWatcher:
    """Watches a replay (replay.replay's `watch`) and charges each step's loss to its cause;
    `table` then adds the replay's totals per category and overall."""

    def __init__(self, costs: BatchCosts,
                 config: SpeculationConfig = SpeculationConfig()) -> None:
        self.costs, self.config = costs, config
        self.oracle = NgramDrafter(config.ngram_max, config.ngram_min)  # the ceiling's lookup
        self.lost: dict[str, dict[str, float]] = {}
        self.before = 0  # what the step before accepted

    def __call__(self, record: dict, context: list[int], drafted: int, accepted: int) -> None:
        answer, costs = record["answer"], self.costs
        position = len(context) - len(record["prompt"])
        if position == 0:
            self.before = 0
        room = min(self.config.auto_max_tokens, len(answer) - position - 1)
        guess = self.oracle.propose(context, room).tokens if room > 0 else []
        right = followed(guess, answer, position)
        if right and (right + 1) / costs(right + 1) < 1.0:
            right = 0  # the oracle would not draft them
        loss = costs(drafted + 1) - (accepted + 1) * costs(right + 1) / (right + 1)
        cause = classify(drafted, accepted, right, self.before) or "none"
        for name in (record["category"], "overall"):
            lost = self.lost.setdefault(name, {})
            lost[cause] = lost.get(cause, 0.0) + loss
        self.before = accepted

    def table(self, rows) -> dict[str, Losses]:
        """Per category, then overall, from the replay's rows (replay_table.Replayed)."""
        table: dict[str, Losses] = {}
        for row in rows:
            for name in (row.category, "overall"):
                entry = table.setdefault(name, Losses())
                entry.passes += row.passes
                entry.oracle += row.oracle
                entry.tokens += row.tokens
        for name, entry in table.items():
            entry.lost.update(self.lost.get(name, {}))
        overall = table.pop("overall")
        return {**table, "overall": overall}


def format_losses(table: dict[str, Losses]) -> str:
    """A Markdown table: auto's share of the ceiling, its time the oracle would not spend, and
    that time per cause (each as a share of auto's time)."""
    head = " | ".join(CAUSES)
    lines = [f"| category | auto / ceiling | gap | {head} |",
             "|---|---|---|" + "---|" * len(CAUSES)]
    for name, row in table.items():
        causes = " | ".join(f"{row.share(c):.1%}" for c in CAUSES)
        share = row.oracle / row.passes if row.passes else 1.0
        lines.append(f"| {name} | {share:.2f} | {row.gap:.1%} | {causes} |")
    return "\n".join(lines)
