"""A question answered, then answered again, with the first answer as the draft (issue 40).

    draftlight bench --retry [--target PATH] [--questions FILE] [--limit N] [--max-tokens N]
                             [--repeats N] [--temps 0,0.7]

What the window does on Regenerate and on an Edit: the earlier answer of that turn is a
Predicted Output for the new one (the target never sees it). Two scenarios per question (the
first turn of the first --limit questions of each category):

- unchanged: the question, answered; then the same question again (Regenerate, /retry);
- edited: the question with a typo (two letters of one word swapped), answered; then the
  question as it should be (Edit, /edit): a small edit.

The second answer is decoded three ways, interleaved, from the same seed: plain (mode off, no
prediction: the baseline), `retry` (auto with the first answer as its prediction: what the
window does in its default mode) and `retry, off` (only the first answer drafts). At temperature
0 the retried answers must be plain decoding's text (lossless). The report gives, per scenario
and temperature, tokens/s (decoding; prefill excluded), the ratio to plain with a 95% bootstrap
interval over the questions (what the figure could be on other questions), and the share of the
new answer that the first answer drafted. At temperature > 0 the first answer and the retry
use different seeds, as a user's retry would.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

from draftlight.bench.report import speedup_interval
from draftlight.bench.runner import DEFAULT_QUESTIONS, first_of_each_category, load_questions
from draftlight.engine.reply.events import Done
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import AUTO, OFF, Mode

# name: (engine mode, whether the first answer is the prediction)
RUNS = {"plain": (OFF, False), "retry": (AUTO, True), "retry, off": (OFF, True)}
SCENARIOS = ("unchanged", "edited")


def with_typo(question: str) -> str:
    """The question with the 2nd and 3rd letters of its longest word near the end swapped (the
    end: a question with a document attached ends with what is asked): the edit a user makes
    when they fix a typo. A question with no word of 4+ letters is returned as it is."""
    tail_at = max(0, len(question) - 400)
    words = list(re.finditer(r"[A-Za-z]{4,}", question[tail_at:]))
    if not words:
        return question
    word = max(words, key=lambda m: len(m.group()))
    at = tail_at + word.start() + 1
    return question[:at] + question[at + 1] + question[at] + question[at + 2:]


def answer(engine, question: str, params, mode: Mode, prediction: str | None) -> Done:
    done = None
    for event in engine.generate([{"role": "user", "content": question}], params, mode,
                                 prediction=prediction):
        if isinstance(event, Done):
            done = event
    return done


def run_retries(engine, questions: list[str], temps, max_tokens: int, repeats: int) -> dict:
    """{(scenario, temp): {run: [(question index, text, new_tokens, decode_seconds,
    prediction_accepted)]}}."""
    rows: dict = {}
    for repeat in range(repeats):
        for temp in temps:
            for scenario in SCENARIOS:
                table = rows.setdefault((scenario, temp), {name: [] for name in RUNS})
                for index, question in enumerate(questions):
                    seed = 1000 * repeat + index
                    first = question if scenario == "unchanged" else with_typo(question)
                    old = answer(engine, first, SamplingParams(temperature=temp,
                                 max_tokens=max_tokens, seed=seed), OFF, None).text
                    # a retry at temperature > 0 draws again; at 0 the seed does not matter
                    params = SamplingParams(temperature=temp, max_tokens=max_tokens,
                                            seed=seed + 1 if temp > 0 else seed)
                    for name, (mode, predict) in RUNS.items():
                        done = answer(engine, question, params, mode, old if predict else None)
                        s = done.stats
                        table[name].append((index, done.text, s.new_tokens, s.decode_seconds,
                                            s.prediction_accepted))
    return rows


def report(rows: dict) -> bool:
    """Print one table per scenario and temperature; whether every greedy retry was plain
    decoding's text."""
    lossless = True
    for (scenario, temp), table in rows.items():
        plain = table["plain"]

        def turns(rs):
            return [SimpleNamespace(question_id=r[0], new_tokens=r[2], decode_seconds=r[3])
                    for r in rs]

        rate = {name: sum(r[2] for r in rs) / max(sum(r[3] for r in rs), 1e-9)
                for name, rs in table.items()}
        print(f"\n{scenario}, temperature {temp:g}: {len(plain)} second answers")
        print(f"  {'run':<11} {'tok/s':>7} {'vs plain':>9} {'95% interval':>14} "
              f"{'drafted by the first answer':>28} {'identical':>10}")
        for name, rs in table.items():
            low, high = speedup_interval(turns(rs), turns(plain)) or (float("nan"),) * 2
            share = sum(r[4] for r in rs) / max(sum(r[2] for r in rs), 1)
            same = sum(a[1] == b[1] for a, b in zip(rs, plain))
            identical = f"{same}/{len(rs)}" if temp == 0 else "-"
            if temp == 0:
                lossless &= same == len(rs)
            print(f"  {name:<11} {rate[name]:>7.1f} {rate[name] / rate['plain']:>8.2f}x "
                  f"{f'{low:.2f}-{high:.2f}':>14} {100 * share:>27.0f}% {identical:>10}")
    return lossless


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="draftlight bench --retry", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", type=Path, help="target GGUF (default: the default model)")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--limit", type=int, default=1,
                        help="first N questions of each category (1)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--temps", default="0,0.7", help="comma-separated temperatures")
    args = parser.parse_args(argv)

    from draftlight.engine_spec import EngineSpec
    from draftlight.launch import open_engine
    from draftlight.store.default_in_terminal import default_target_in_terminal

    temps = [float(t) for t in args.temps.split(",") if t.strip()]
    questions = [q["turns"][0] for q in
                 first_of_each_category(load_questions(args.questions), args.limit)]
    target = default_target_in_terminal(args.target)
    engine = open_engine(EngineSpec(target_path=str(target), n_ctx=4096,
                                    time_auto=True))
    try:
        print(f"{Path(target).name}: {len(questions)} questions, {args.max_tokens} tokens, "
              f"temperatures {', '.join(f'{t:g}' for t in temps)}, x{args.repeats}")
        rows = run_retries(engine, questions, temps, args.max_tokens, args.repeats)
    finally:
        engine.close()
    lossless = report(rows)
    print(json.dumps({"identical_at_temperature_0": lossless}))
    return 0 if lossless else 1


if __name__ == "__main__":
    sys.exit(main())
