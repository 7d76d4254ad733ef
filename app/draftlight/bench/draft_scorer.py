"""A draft model's greedy choice over auto's n-gram guess, as evidence of where a copy starts
and ends, and what that evidence costs (issue 60).

Replaying auto told where each copy starts or ends (foreknowledge.py) bounds what any evidence
can buy; this asks what a real one buys. Before each step of the replay, a small model (the
scorer, of any vocabulary) reads the context and the guess as text, in one batched pass after
the tokens it has already read, and the guess is taken as far as the scorer's greedy choice
follows it (`r̂`, in the target's tokens). Auto is then told r̂ where foreknowledge told it the
true r (Foreknowing: `start` from r̂ ≥ 1, `end` from r̂), so the share of the ceiling it reaches
"free" is what the evidence is worth, and "priced" charges each step the scorer's pass, timed as
it runs, in the target's one-token passes (given: timed beside it on the same machine). A
reply's first pass over its prompt is left out of the price (a draft model reads the prompt
alongside the target's own prefill).

    python -m draftlight.bench.draft_scorer RECORDS.jsonl.gz --vocab TARGET.gguf \\
        --scorer SMALL.gguf --token-seconds S [--curve NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from draftlight.bench.ceiling import followed
from draftlight.bench.foreknowledge import COPY_CATEGORIES, Foreknowing, copy_share
from draftlight.bench.recorded_answers import load_records
from draftlight.bench.recorded_words import load_words
from draftlight.bench.replay import CURVES, parse_curve, replay
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.reply.generator import SpeculationConfig
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.engine.step.ngram_index import Fold

PROMPT_READ = 64  # a pass over more tokens than this already read is a reply's prefill


class GuessScorer:
    """The scorer's greedy choice over a guess: `agreed(context, guess)` is how many of the
    guess's tokens (the target's) lie within the text the scorer's argmax follows. The scorer
    is the engine's own LlamaBackend, computing only the guess's rows, as a drafter would.
    One thread owns it; `close()` frees both models."""

    def __init__(self, vocab: Path, scorer: Path, n_ctx: int = 8192) -> None:
        from llama_cpp import Llama
        from draftlight.engine.core.load_options import LoadOptions
        from draftlight.engine.llama.llama_backend import LlamaBackend
        self._vocab = Llama(str(vocab), vocab_only=True, verbose=False)
        self._scorer = LlamaBackend(scorer, LoadOptions(n_ctx=n_ctx))
        self.step_seconds, self.steps, self.prefill_seconds = 0.0, 0, 0.0
        # what was found for a (context, guess) already scored, its pass's time with it: the
        # replays of several curves and policies meet the same steps again
        self._found: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, float, bool]] = {}

    def agreed(self, context: list[int], guess: list[int]) -> tuple[int, float, bool]:
        """(r̂, the scorer's pass in seconds, whether that pass read a prompt)."""
        key = (tuple(context), tuple(guess))
        if key not in self._found:
            self._found[key] = self._score(context, guess)
        return self._found[key]

    def _score(self, context: list[int], guess: list[int]) -> tuple[int, float, bool]:
        scorer = self._scorer
        read = scorer.tokenize(self._text(context), add_bos=False, special=True)
        guessed = scorer.tokenize(self._text(guess), add_bos=False, special=False)
        cached = scorer.token_view
        kept = 0
        while kept < min(len(cached), len(read) - 1) and cached[kept] == read[kept]:
            kept += 1
        scorer.truncate(kept)
        start = time.perf_counter()
        rows = scorer.eval(read[kept:] + guessed, n_logits=len(guessed) + 1)
        seconds = time.perf_counter() - start
        prefill = kept < len(read) - PROMPT_READ
        if prefill:
            self.prefill_seconds += seconds
        else:
            self.step_seconds, self.steps = self.step_seconds + seconds, self.steps + 1
        picks = np.asarray(rows).argmax(axis=1)  # row i predicts guessed[i]
        right = 0
        while right < len(guessed) and picks[right] == guessed[right]:
            right += 1
        length = sum(len(scorer.piece(token)) for token in guessed[:right])
        return within(self._vocab, guess, length), seconds, prefill

    def _text(self, tokens: list[int]) -> str:
        return self._vocab.detokenize(tokens, special=True).decode("utf-8", errors="replace")

    def close(self) -> None:
        self._scorer.close()
        self._vocab.close()


def within(vocab, guess: list[int], length: int) -> int:
    """How many of `guess`'s leading tokens end within its text's first `length` bytes (as
    the scorer's tokens spell it: a character cut at the guess's end is one replacement)."""
    count, end = 0, 0
    for token in guess:
        end += len(vocab.detokenize([token], special=True))
        if end > length:
            break
        count += 1
    return count


@dataclass
class Scored:
    free: float  # share of the ceiling, copy categories pooled, the scorer's time not charged
    priced: float  # the same, each step charged the scorer's pass
    oracle: float  # the ceiling's passes over the copy categories
    charged: int  # scored steps charged a pass there (a reply's first, reading its prompt, not)
    pairs: list[tuple[int, int]] = field(default_factory=list)  # (r̂, r) at each scored step

    def break_even(self, auto: float) -> float:
        """What a charged step's pass may cost, in the target's one-token passes, for the
        evidence to leave auto's share (`auto`) where it is: the passes it saves, per step."""
        saved = self.oracle / auto - self.oracle / self.free
        return saved / max(self.charged, 1)


def replay_scored(records: list[dict], costs: BatchCosts, told: str, scorer: GuessScorer,
                  token_seconds: float, fold: Fold | None = None,
                  config: SpeculationConfig = SpeculationConfig()) -> Scored:
    """Auto told r̂ (as Foreknowing is told r) before each step that has a guess."""
    lookup = NgramDrafter(config.ngram_max, config.ngram_min, fold=fold)
    charged: dict[int, tuple[float, int]] = {}  # reply -> (its scorer passes, how many)
    pairs: list[tuple[int, int]] = []
    replies = iter(range(len(records)))
    now = {"reply": -1}

    class Scoring(Foreknowing):
        def new_reply(self) -> None:
            now["reply"] = next(replies)
            super().new_reply()

    def foresee(auto: Foreknowing, context: list[int], ahead: list[int]) -> None:
        guess = lookup.propose(context, config.auto_max_tokens).tokens[:len(ahead) - 1]
        auto.run = None
        if guess:
            auto.run, seconds, prefill = scorer.agreed(context, guess)
            pairs.append((auto.run, followed(guess, ahead, 0)))
            if not prefill:
                passes, steps = charged.get(now["reply"], (0.0, 0))
                charged[now["reply"]] = (passes + seconds / token_seconds, steps + 1)

    rows = replay(records, costs, config, 0.01, fold,
                  policy=lambda c, candidates: Scoring(c, candidates, told), foresee=foresee)
    copies = [(i, row) for i, row in enumerate(rows)
              if row.category in COPY_CATEGORIES] or list(enumerate(rows))  # as copy_share
    oracle = sum(row.oracle for _, row in copies)
    scored = [charged.get(i, (0.0, 0)) for i, _ in copies]
    return Scored(copy_share(rows),
                  oracle / (sum(row.passes for _, row in copies) + sum(p for p, _ in scored)),
                  oracle, sum(n for _, n in scored), pairs)


def evidence_lines(pairs: list[tuple[int, int]]) -> list[str]:
    """How well r̂ foretells r: the copy's start, and its length where both say it starts."""
    r_hat, r = (np.array([p[i] for p in pairs]) for i in (0, 1))
    both = (r_hat >= 1) & (r >= 1)
    return [f"steps scored: {len(pairs)}",
            f"copy starts (r >= 1): {np.mean(r[r_hat >= 1] >= 1):.2f} where the scorer follows "
            f"the first token, {np.mean(r[r_hat == 0] >= 1):.2f} where it does not",
            f"where both start: r̂ = r {np.mean(r_hat[both] == r[both]):.2f}, short "
            f"{np.mean(r_hat[both] < r[both]):.2f}, long {np.mean(r_hat[both] > r[both]):.2f}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.draft_scorer",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", type=Path)
    parser.add_argument("--vocab", type=Path, required=True,
                        help="the recording's target (only its vocabulary is read)")
    parser.add_argument("--scorer", type=Path, required=True, help="the small model")
    parser.add_argument("--token-seconds", type=float, required=True,
                        help="the target's one-token pass on this machine, seconds")
    parser.add_argument("--curve", action="append",
                        help=f"a name ({', '.join(CURVES)}) or k=v,...; repeatable (default: all)")
    args = parser.parse_args(argv)
    records, fold = load_records(args.records), load_words(args.records)
    scorer = GuessScorer(args.vocab, args.scorer)
    try:
        print("| curve | auto | scorer as start: free | priced | break-even | scorer as end: "
              "free | priced | break-even |")
        print("|---|---|---|---|---|---|---|---|")
        pairs: list[tuple[int, int]] = []
        for name in args.curve or list(CURVES):
            costs = parse_curve(name)
            auto = copy_share(replay(records, costs, step_overhead=0.01, fold=fold))
            start = replay_scored(records, costs, "start", scorer, args.token_seconds, fold)
            end = replay_scored(records, costs, "end", scorer, args.token_seconds, fold)
            pairs = pairs or start.pairs
            print(f"| {name} | {auto:.3f} | {start.free:.3f} | {start.priced:.3f} | "
                  f"{start.break_even(auto):.3f} | {end.free:.3f} | {end.priced:.3f} | "
                  f"{end.break_even(auto):.3f} |", flush=True)
        print()
        print("\n".join(evidence_lines(pairs)))
        if scorer.steps:
            print(f"the scorer's pass: {scorer.step_seconds / scorer.steps * 1000:.1f} ms a step, "
                  f"{scorer.step_seconds / scorer.steps / args.token_seconds:.2f} of the "
                  f"target's one-token pass (break-even: what it may cost for the share to stay "
                  f"auto's); prompts read, not charged: {scorer.prefill_seconds:.1f} s")
    finally:
        scorer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
