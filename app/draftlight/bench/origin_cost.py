"""What knowing the origins costs: the same greedy replies on the bundled model with the origins
of accepted drafts found (app/draftlight/engine/step/origins.py) and with a finder that finds none, alternating.
Prints tokens/s of each and the ratio, per mode.

    python -m draftlight.bench.origin_cost [--tokens 128] [--repeats 5] [--modes ngram,draft]

"draft" drafts with the target itself (the bundled model is its own draft), so its drafts are
long and nearly always accepted: the most origins per second a draft model gives.
"""

from __future__ import annotations

import argparse
import statistics

from draftlight.bench.runner import DEFAULT_QUESTIONS, load_questions
from draftlight.engine.reply import generator
from draftlight.engine.reply.events import Done
from draftlight.engine.step.origins import OriginFinder
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import Mode


class NoOrigins(OriginFinder):
    """The same engine with the origins left unknown (what the code did before them)."""

    def origin(self, draft, i):
        return None


def timed(engine, messages, params, mode) -> float:
    """Tokens per second of one reply, decoding only (prefill excluded)."""
    for event in engine.generate(messages, params, Mode.parse(mode)):
        if isinstance(event, Done):
            return event.stats.new_tokens / max(event.stats.decode_seconds, 1e-9)
    return 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.origin_cost")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--modes", default="ngram,draft")
    args = parser.parse_args(argv)
    from draftlight.engine.reply.generator import Engine
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.store.default_in_terminal import default_target_in_terminal

    target = default_target_in_terminal(None)  # converted on first use, as for chat
    modes = args.modes.split(",")
    engine = Engine.load(target, target if "draft" in modes else None, LoadOptions(n_ctx=4096))
    params = SamplingParams(temperature=0.0, max_tokens=args.tokens)
    copying = [q for q in load_questions(DEFAULT_QUESTIONS)
               if q["category"] in ("summarization", "document_qa", "code_editing")][:3]
    try:
        for mode in modes:
            rates = {"origins": [], "none": []}
            for repeat in range(args.repeats):
                for question in copying:
                    messages = [{"role": "user", "content": question["turns"][0]}]
                    order = ("origins", "none") if repeat % 2 == 0 else ("none", "origins")
                    for variant in order:
                        generator.OriginFinder = OriginFinder if variant == "origins" \
                            else NoOrigins
                        rates[variant].append(timed(engine, messages, params, mode))
            generator.OriginFinder = OriginFinder
            with_, without = (statistics.median(rates[v]) for v in ("origins", "none"))
            print(f"{mode}: {with_:.1f} tok/s with origins, {without:.1f} without: "
                  f"ratio {with_ / without:.3f} (median of {len(rates['none'])} replies each)")
    finally:
        generator.OriginFinder = OriginFinder
        engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
