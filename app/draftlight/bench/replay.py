"""Auto's n-gram policy replayed on recorded answers, under any cost curve, in seconds.

Greedy decoding on a target whose batches are exact (Q4_0/Q4_1/Q8_0 on llama.cpp's CPU kernels)
gives the same answer in every mode, and whether an n-gram guess is accepted depends only on
that answer. So once the plain answers are recorded (prompt and answer tokens of every turn),
auto's whole run can be replayed without the model: each step asks the real AdaptiveDrafter
for a draft, accepts its longest prefix that matches the answer, and charges the step v(k) of
the chosen cost curve (fed back to auto as the pass's time, as the engine does). The replay's
speedup, answer tokens / Σ v(k), is in the same units as the n-gram ceiling (ceiling.py), so
auto's share of the ceiling is measured exactly, for a policy change, on curves of machines
this one is not (another CPU, a GPU), without timing noise.

    python -m draftlight.bench.replay record --out answers.jsonl.gz [--target PATH] [--limit N]
    python -m draftlight.bench.replay run answers.jsonl.gz [--curve NAME|k=v,...] [--losses]
        [--hindsight [--fit-on OTHER.jsonl.gz ...]]
    python -m draftlight.bench.replay words --target PATH answers.jsonl.gz

N-gram lookup measures a match with the model's words (drafters.word_fold: "The" and " the"
agree), which need the tokenizer: `record` writes each recorded token's word beside the answers
(answers.words.json.gz, words_path); `words` writes it for answers recorded before. Without it
a match is measured by token ids alone.

What it leaves out: time outside the target's passes (auto's bookkeeping, about 1% of a pass
on the bundled model), the passes' own noise, and draft models (their acceptance depends on
the draft, not only on the answer).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from draftlight.bench import recorded_answers
from draftlight.bench.ceiling import followed, ngram_oracle_cost
from draftlight.bench.fit_priors import regions as chat_regions
from draftlight.bench.recorded_words import load_words_and_marks
from draftlight.bench.recorded_answers import load_records
from draftlight.bench.replay_table import Replayed, format_table, summarise
from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
from draftlight.engine.auto.costs import MEASURED_K, BatchCosts
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.engine.reply.generator import SpeculationConfig
from draftlight.engine.step.ngram_index import Fold

# Cost curves v(k) measured on this project's machines (docs/bench-cpu.md), and a flat one.
CURVES: dict[str, dict[int, float]] = {
    "smollm2-q8-xeon": {2: 1.48, 4: 1.94, 8: 4.42, 12: 5.26, 16: 6.98},
    "smollm2-q8-epyc": {2: 1.94, 4: 2.69, 8: 4.77, 16: 8.16},
    "smollm2-q4_1-epyc": {2: 1.72, 4: 2.43, 8: 4.23, 16: 9.40},
    "qwen1.5b-q4km-xeon": {2: 1.60, 4: 2.18, 8: 2.73, 16: 4.52},
    "qwen1.5b-q4km-epyc": {2: 1.76, 3: 2.38, 4: 2.61, 5: 3.44, 8: 6.34, 16: 8.64},
    "gpu-like": {2: 1.02, 4: 1.05, 8: 1.1, 16: 1.2},
}


def curve(points: dict[int, float]) -> BatchCosts:
    """A BatchCosts over MEASURED_K (the lengths auto may draft), interpolated from `points`."""
    given = BatchCosts({1: 1.0, **points}, token_seconds=0.01)
    return BatchCosts({k: round(given(k), 4) for k in MEASURED_K}, token_seconds=0.01)


def parse_curve(text: str) -> BatchCosts:
    if text in CURVES:
        return curve(CURVES[text])
    try:
        points = {int(k): float(v) for k, v in (p.split("=") for p in text.split(","))}
    except ValueError:
        raise SystemExit(f"--curve: a name ({', '.join(CURVES)}) or k=v,k=v,... not {text!r}")
    if any(k < 2 or v < 1.0 for k, v in points.items()):
        raise SystemExit(f"--curve {text!r}: each k must be 2 or more and each v(k) at least 1 "
                         "(a pass over k tokens costs no less than one over a single token)")
    return curve(points)


Policy = Callable[[BatchCosts, list[Candidate]], AdaptiveDrafter]


def replay(records: list[dict], costs: BatchCosts,
           config: SpeculationConfig = SpeculationConfig(),
           step_overhead: float = 0.0, fold: Fold | None = None,
           watch: Callable[[dict, list[int], int, int], None] | None = None,
           policy: Policy = AdaptiveDrafter,
           foresee: Callable[[AdaptiveDrafter, list[int], list[int]], None] | None = None
           ) -> list[Replayed]:
    """Auto (n-gram lookup only) over every record in order, learning across them as in one
    bench run. `step_overhead`: time outside the pass per drafting step, in one-token passes;
    `fold`: the recording's words (load_words), as the engine measures matches; `watch`, if
    given, sees every step before its tokens join the context: (record, context, drafted,
    accepted) (replay_losses.py). `policy` makes the drafter replayed (auto's by default);
    `foresee`, if given, is shown (that drafter, the context, the answer still to come) before
    each step: what a policy told something only the ceiling knows makes of it
    (foreknowledge.py)."""
    ngram = NgramDrafter(config.ngram_max, config.ngram_min, fold=fold)
    auto = policy(costs, [Candidate(ngram, 0.0, config.auto_max_tokens)])
    out = []
    for record in records:
        prompt, answer = record["prompt"], record["answer"]
        ngram.regions = chat_regions(prompt)  # as the engine sets them for each reply
        auto.new_reply()
        context, position, passes = list(prompt), 0, 0.0
        while position < len(answer):
            budget = len(answer) - position - 1
            gamma = max(0, min(config.auto_max_tokens, budget))
            if foresee is not None:
                foresee(auto, context, answer[position:])
            draft = auto.propose(context, gamma, None, None).tokens[:gamma] if gamma else []
            right = followed(draft, answer, position)
            seconds = costs(len(draft) + 1) * costs.token_seconds
            passes += costs(len(draft) + 1) + (step_overhead if draft else 0.0)
            auto.observe(len(draft), right, answer[position + right], seconds, 0.0)
            if watch is not None:
                watch(record, context, len(draft), right)
            context += answer[position:position + right + 1]
            position += right + 1
        oracle = ngram_oracle_cost(prompt, answer, costs, config.auto_max_tokens,
                                   NgramDrafter(config.ngram_max, config.ngram_min))
        out.append(Replayed(record["category"], record.get("question_id"), len(answer), passes,
                            oracle))
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "record":
        return recorded_answers.record(args.target, args.questions, args.out, args.max_tokens,
                                args.limit)
    if args.command == "words":
        return recorded_answers.write_words_of(args.target, args.records)
    for path in args.records:
        _replay_file(path, args)
    return 0


def _parser() -> argparse.ArgumentParser:
    from draftlight.bench.runner import DEFAULT_QUESTIONS

    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.replay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="record plain greedy answers")
    rec.add_argument("--target", type=Path)
    rec.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--max-tokens", type=int, default=128)
    rec.add_argument("--limit", type=int)
    run = commands.add_parser("run", help="replay auto on recorded answers")
    run.add_argument("records", type=Path, nargs="+")
    run.add_argument("--curve", action="append",
                     help=f"a name ({', '.join(CURVES)}) or k=v,...; repeatable (default: all)")
    run.add_argument("--overhead", type=float, default=0.01,
                     help="time outside the pass per drafting step, in passes (0.01)")
    run.add_argument("--hindsight", action="store_true",
                     help="also the best fixed match-length rule per category, in hindsight")
    run.add_argument("--fit-on", type=Path, nargs="+", metavar="RECORDS",
                     help="with --hindsight: also rules fitted on these recordings (not the "
                          "ones judged), one for all categories: does the fit hold out?")
    run.add_argument("--losses", action="store_true",
                     help="also where auto loses to the ceiling, per cause (replay_losses.py)")
    words = commands.add_parser("words", help="write the words of recorded answers' tokens")
    words.add_argument("--target", type=Path, help="the model that recorded them")
    words.add_argument("records", type=Path, nargs="+")
    return parser


def _replay_file(path: Path, args: argparse.Namespace) -> None:
    """`run` on one recording: auto's table for each curve, and with --hindsight and --losses
    the best fixed rules and where auto loses to the ceiling."""
    records, (fold, marks) = load_records(path), load_words_and_marks(path)
    for name in args.curve or list(CURVES):
        costs = parse_curve(name)
        print(f"\n## {path.name}, curve {name}: auto\n")
        print(format_table(summarise(replay(records, costs, step_overhead=args.overhead,
                                            fold=fold))))
        if args.hindsight:
            from draftlight.bench.hindsight import Recording, print_hindsight
            print_hindsight(Recording(records, fold, marks), costs, name, path.name,
                            [Recording(load_records(f), *load_words_and_marks(f))
                             for f in args.fit_on or ()])
        if args.losses:
            from draftlight.bench.replay_losses import LossWatcher, format_losses
            watcher = LossWatcher(costs)
            rows = replay(records, costs, fold=fold, watch=watcher)
            print(f"\n## {path.name}, curve {name}: where auto loses to the ceiling\n")
            print(format_losses(watcher.table(rows)))


if __name__ == "__main__":
    sys.exit(main())
