"""What knowing a copy's start, or its end, is worth: auto told one thing the ceiling knows.

The n-gram ceiling (ceiling.py) knows before each pass how many of the guess's tokens the answer
will follow, r. That is two things auto does not know: whether a copy starts here (r ≥ 1), and,
once it does, where it ends (r). Each policy here is auto, replayed (replay.py) with its own
counts, curve and draft lengths, and told one of them before every step:

    start   told whether r ≥ 1: drafts nothing when the guess's first token is wrong; when it
            is right, weighs auto's own estimates given that it is:
                E(γ) = 1 + Σ_{i≤γ} S_i / S_1
    end     told r when r ≥ 1, not whether r ≥ 1: a draft of γ tokens is worth
                E(γ) = 1 + S_1 · min(γ, r)
            (S_1: auto's estimate that the first token is right); when r = 0 it decides as auto

(S_i: auto's estimate that the first i guesses are right, adaptive.AdaptiveDrafter). Each then
picks γ* = argmax E(γ) / v(γ + 1) over the lengths auto may draft. Evidence about a copy's start
(its end) can at best tell a policy what `start` (`end`) is told, so the share of the ceiling
each reaches bounds what any such evidence can buy auto (docs/replay.md, issue 60).

    python -m draftlight.bench.foreknowledge RECORDS.jsonl.gz ... [--curve NAME ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from draftlight.bench.ceiling import followed
from draftlight.bench.recorded_answers import load_records
from draftlight.bench.recorded_words import load_words
from draftlight.bench.replay import CURVES, parse_curve, replay
from draftlight.bench.replay_table import Replayed
from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.reply.generator import SpeculationConfig
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.engine.step.ngram_index import Fold

TOLD = ("start", "end")
COPY_CATEGORIES = ("code_editing", "summarization", "document_qa")


class Foreknowing(AdaptiveDrafter):
    """Auto, told before each step how many tokens of its n-gram guess the answer follows
    (`run`), and using only the part `told` names (the module's docstring)."""

    def __init__(self, costs: BatchCosts, candidates: list[Candidate], told: str) -> None:
        if told not in TOLD:
            raise ValueError(f"told {told!r}: one of {', '.join(TOLD)}")
        super().__init__(costs, candidates)
        self.told = told
        self.run: int | None = None  # None: told nothing this step

    def rate(self, candidate: Candidate, limit: int) -> tuple[float, int]:
        if self.run is None or not candidate.free or (self.told == "end" and self.run == 0):
            return super().rate(candidate, limit)
        if self.run == 0:
            return (1.0, 0)  # told the first guess is wrong: nothing pays
        expected = candidate.model.expected_tokens(limit, candidate.evidence, candidate.where)
        first = expected[1] - 1.0 if limit >= 1 else 0.0
        if self.told == "start":
            worth = [1.0] + [1.0 + (e - 1.0) / max(first, 1e-9) for e in expected[1:]]
        else:
            worth = [1.0 + first * min(gamma, self.run) for gamma in range(limit + 1)]
        best = (1.0, 0)
        for gamma in self.lengths(limit):
            rate = worth[gamma] / (self.costs(gamma + 1) + candidate.cost_per_token * gamma)
            if rate > best[0]:
                best = (rate, gamma)
        return best


def replay_told(records: list[dict], costs: BatchCosts, told: str, fold: Fold | None = None,
                step_overhead: float = 0.0,
                config: SpeculationConfig = SpeculationConfig(),
                watch: Callable[[dict, list[int], int, int], None] | None = None
                ) -> list[Replayed]:
    """The replay of a Foreknowing auto: before each step a lookup of its own (the same as the
    replayed drafter's, so the same guess) tells it how far the answer follows that guess.
    `watch` as replay.replay's."""
    lookup = NgramDrafter(config.ngram_max, config.ngram_min, fold=fold)

    def foresee(auto: AdaptiveDrafter, context: list[int], ahead: list[int]) -> None:
        guess = lookup.propose(context, config.auto_max_tokens).tokens[:len(ahead) - 1]
        auto.run = followed(guess, ahead, 0)

    return replay(records, costs, config, step_overhead, fold, watch,
                  policy=lambda c, candidates: Foreknowing(c, candidates, told), foresee=foresee)


def copy_share(rows: list[Replayed]) -> float:
    """Share of the ceiling over the copy categories, pooled (tokens / passes against the
    oracle's tokens / passes: the oracle's passes over the policy's)."""
    rows = [r for r in rows if r.category in COPY_CATEGORIES] or rows
    return sum(r.oracle for r in rows) / sum(r.passes for r in rows)


def shares(records: list[dict], costs: BatchCosts, fold: Fold | None,
           step_overhead: float = 0.01) -> dict[str, float]:
    """Auto's share of the ceiling on the copy categories, and each Foreknowing policy's."""
    out = {"auto": copy_share(replay(records, costs, step_overhead=step_overhead, fold=fold))}
    for told in TOLD:
        out[told] = copy_share(replay_told(records, costs, told, fold, step_overhead))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.foreknowledge",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", type=Path, nargs="+")
    parser.add_argument("--curve", action="append",
                        help=f"a name ({', '.join(CURVES)}) or k=v,...; repeatable (default: all)")
    args = parser.parse_args(argv)
    print("| answers | curve | auto / ceiling | told the start | told the end |")
    print("|---|---|---|---|---|")
    for path in args.records:
        records, fold = load_records(path), load_words(path)
        for name in args.curve or list(CURVES):
            row = shares(records, parse_curve(name), fold)
            print(f"| {path.parent.name}/{path.name.split('.jsonl')[0]} | {name} | "
                  f"{row['auto']:.3f} | {row['start']:.3f} | {row['end']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
