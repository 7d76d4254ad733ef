"""`draftlight bench hosted [--target FILE] [--modes off,auto] [--rounds 5]`: what running the
engine in a process of its own (engine/host/hosted.py) costs a reply, against the same engine in
this process.

Both load the same target with the same options; the host's replies cross the pipe as
wire.py's records. Each round answers the same questions (the first turn of one question per
category) in both, alternating which goes first, greedily, with the same token limit, and
times each reply as a window sees it: from its first piece to its Done (the prompt's read
apart, which the pipe does not touch). Per mode the row gives the rounds' ratios of hosted
over in-process tokens per second: their median and their lowest and highest. The last line
is exactly `hosted: X.XXx in-process tokens/s (median of every mode's rounds)`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from draftlight.modes import Mode


def add_hosted_parser(subcommands) -> None:
    hosted = subcommands.add_parser(
        "hosted", help="the engine's own process against the engine in this one",
        description="Times the same greedy replies in the engine host (a child process) and "
                    "in this process, alternating; last line: 'hosted: X.XXx in-process "
                    "tokens/s (median of every mode's rounds)'.")
    hosted.add_argument("--target", type=Path, help="GGUF (default: the bundled model)")
    hosted.add_argument("--modes", default="off,auto",
                        help="comma-separated: off, ngram, auto (default off,auto)")
    hosted.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    hosted.add_argument("--max-tokens", type=int, default=96, help="tokens per reply")
    hosted.add_argument("--limit", type=int, default=4, help="questions per round (default 4)")
    hosted.add_argument("--threads", type=int, default=0, help="CPU threads (0 = default)")
    hosted.set_defaults(run=run_hosted)


def run_hosted(args: argparse.Namespace) -> int:
    from draftlight.bench.runner import DEFAULT_QUESTIONS, first_of_each_category, load_questions
    from draftlight.engine.reply.generator import Engine
    from draftlight.engine.host.hosted import HostedEngine, HostSpec
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.engine.core.sampling import SamplingParams
    from draftlight.store.default_in_terminal import default_target_in_terminal
    from draftlight.user_messages import UserError

    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    if not modes or any(mode not in ("off", "ngram", "auto") for mode in modes):
        raise UserError(f"--modes: off, ngram or auto, comma-separated, not {args.modes!r}")
    if args.rounds < 1 or args.max_tokens < 8 or args.limit < 1:
        raise UserError("--rounds and --limit must be at least 1, --max-tokens at least 8")
    target = str(default_target_in_terminal(args.target))
    options = LoadOptions(n_threads=args.threads)
    questions = [[{"role": "user", "content": q["turns"][0]}]
                 for q in first_of_each_category(load_questions(DEFAULT_QUESTIONS), 1)][:args.limit]
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens)
    local = Engine.load(target, None, options)
    hosted = None
    try:
        if "auto" in modes:
            local.prepare_auto()  # timed once per machine and cached: the host reads it
        hosted = HostedEngine(HostSpec(target, None, options, options, time_auto="auto" in modes))
        print(f"target: {Path(target).name}; {args.rounds} rounds of {len(questions)} "
              f"questions, {args.max_tokens} tokens, greedy")
        every: list[float] = []
        for mode in modes:
            ratios = []
            for round_ in range(args.rounds):
                order = (local, hosted) if round_ % 2 == 0 else (hosted, local)
                rates = {id(engine): tokens_per_second(engine, questions, params, mode)
                         for engine in order}
                ratios.append(rates[id(hosted)] / rates[id(local)])
            ratios.sort()
            every += ratios
            print(f"{mode:>5}: hosted {statistics.median(ratios):.3f}x in-process tokens/s "
                  f"(rounds {ratios[0]:.3f}-{ratios[-1]:.3f})")
    finally:
        local.close()
        if hosted is not None:
            hosted.close()
    print(f"hosted: {statistics.median(every):.3f}x in-process tokens/s (median of every "
          "mode's rounds)")
    return 0


def tokens_per_second(engine, questions, params, mode: str) -> float:
    """Tokens over seconds from each reply's first piece to its Done, summed over the
    questions."""
    from draftlight.engine.reply.events import Done, TextPiece
    tokens, seconds = 0, 0.0
    for messages in questions:
        first = None
        for event in engine.generate(messages, params, Mode.parse(mode)):
            if isinstance(event, TextPiece) and first is None:
                first = time.perf_counter()
            elif isinstance(event, Done):
                if first is not None:
                    seconds += time.perf_counter() - first
                    tokens += max(event.stats.new_tokens - 1, 0)  # those after the first
    return tokens / seconds if seconds > 0 else 0.0
