"""`draftlight bench rollback --target FILE`: what a rejected draft costs a model, in one-token
passes, at 500 and 2,000 tokens of context.

A rejected step, as the engine runs one whose first guess is wrong: take a checkpoint (a
recurrent model copies its state; a KV cache does nothing), one verify pass over the last token
and DRAFTED guesses, then roll back to the last token. Its cost is the checkpoint and the
rollback, over the median one-token pass at that context: about 0 for a KV cache or llama.cpp's
native snapshots, about 1 for a recurrent model restored from its checkpoint (the kept token is
evaluated again), and the whole context's prefill with `--no-checkpoints` (how every recurrent
model rolled back before checkpoints). The verify pass itself is not counted: plain decoding
would have made one too.

The last line is exactly `rejected step: X passes at 500 tokens, Y passes at 2000 tokens`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

CONTEXTS = (500, 2000)
DRAFTED = 4  # guesses in the rejected verify pass
REPEATS = 7  # rejected steps timed per context (the median is reported)
CURVE_K = (2, 4, 8)  # v(k) printed beside it, timed at the first context


def add_rollback_parser(subcommands) -> None:
    rollback = subcommands.add_parser(
        "rollback", help="what a rejected draft costs a model, in one-token passes",
        description="Times rejected speculative steps at 500 and 2,000 tokens of context and "
                    "prints their cost in one-token passes (last line: 'rejected step: X "
                    "passes at 500 tokens, Y passes at 2000 tokens').")
    rollback.add_argument("--target", type=Path, help="GGUF (default: the bundled model)")
    rollback.add_argument("--no-checkpoints", action="store_true",
                          help="roll back as before checkpoints: a recurrent model evaluates "
                               "the whole kept context again")
    rollback.add_argument("--no-snapshots", action="store_true",
                          help="do not ask llama.cpp for per-token state snapshots (n_rs_seq): "
                               "a model that has them rolls back from checkpoints instead")
    rollback.add_argument("--threads", type=int, default=0, help="CPU threads (0 = default)")
    rollback.set_defaults(run=run_rollback)


def run_rollback(args: argparse.Namespace) -> int:
    from draftlight.engine.llama.llama_backend import LlamaBackend
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.store.default_in_terminal import default_target_in_terminal

    target = default_target_in_terminal(args.target)
    options = LoadOptions(n_ctx=max(CONTEXTS) + 2 * REPEATS + 64, n_threads=args.threads,
                          rollback_tokens=0 if args.no_checkpoints or args.no_snapshots
                          else LoadOptions.rollback_tokens)
    with LlamaBackend(target, options) as model:
        tokens = probe_tokens(model, max(CONTEXTS) + 2 * REPEATS + DRAFTED + 1)
        model.eval(tokens[:1], n_logits=0)  # a state to measure the size of
        print(f"target: {Path(target).name}, {model.description}")
        print(f"rollback: {describe(model, args.no_checkpoints)}")
        costs = []
        for context in CONTEXTS:
            cost = rejected_step_cost(model, tokens, context, not args.no_checkpoints)
            costs.append(cost)
            line = (f"context {context}: one-token pass {cost.token_seconds * 1000:.1f} ms, "
                    f"rejected step {cost.passes:.2f} passes (checkpoint "
                    f"{cost.checkpoint_passes:.2f}, rollback {cost.rollback_passes:.2f})")
            if context == CONTEXTS[0]:
                line += "; " + ", ".join(f"v({k}) {v:.2f}" for k, v in
                                         batch_curve(model, tokens, context).items())
            print(line, flush=True)
    print(f"rejected step: {costs[0].passes:.2f} passes at {CONTEXTS[0]} tokens, "
          f"{costs[1].passes:.2f} passes at {CONTEXTS[1]} tokens")
    return 0


def describe(model, no_checkpoints: bool) -> str:
    if model.rollback == "cut":
        return "KV cache, cut in place"
    from draftlight.units import format_bytes
    state = f"recurrent ({format_bytes(model.checkpoint_bytes())} of state)"
    if no_checkpoints:
        return f"{state}, re-evaluated from the start"
    if model.rollback == "native":
        return (f"{state}, llama.cpp's snapshots of the last {model.native_rollback} tokens "
                f"(n_rs_seq: {model.native_rollback} more copies of the state)")
    return f"{state}, copied before each verify pass"


def probe_tokens(model, length: int) -> list[int]:
    from draftlight.engine.auto.costs import repeat_to
    from draftlight.engine.reply.generator import PROBE_TEXT
    return repeat_to(model.tokenize(PROBE_TEXT, add_bos=False), length)[:length]


class StepCost:
    def __init__(self, token_seconds: float, checkpoint: float, rollback: float) -> None:
        self.token_seconds = token_seconds
        self.checkpoint_passes = checkpoint / token_seconds
        self.rollback_passes = rollback / token_seconds
        self.passes = self.checkpoint_passes + self.rollback_passes


def rejected_step_cost(model, tokens: list[int], context: int, checkpoints: bool) -> StepCost:
    """Median of REPEATS rejected steps from `context` tokens on (see the module docstring).
    Each is followed by the one-token pass that plain decoding would make next, which gives
    the unit; the context grows by two tokens a step."""
    model.truncate(0)
    model.eval(tokens[:context], n_logits=0)
    singles, takes, backs = [], [], []
    for _ in range(REPEATS):
        last = len(model.tokens)  # tokens[last] is the step's last token, not yet evaluated
        step = tokens[last:last + 1 + DRAFTED]
        start = time.perf_counter()
        if checkpoints:
            model.checkpoint(len(step))
        takes.append(time.perf_counter() - start)
        model.eval(step, n_logits=len(step))
        start = time.perf_counter()
        model.truncate(last + 1)  # the first guess was wrong: keep the last token only
        backs.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.eval(tokens[last + 1:last + 2], n_logits=1)
        singles.append(time.perf_counter() - start)
    model.truncate(0)
    return StepCost(statistics.median(singles), statistics.median(takes),
                    statistics.median(backs))


def batch_curve(model, tokens: list[int], context: int) -> dict[int, float]:
    """v(k) for CURVE_K after `context` tokens: the median k-token pass over the median
    one-token pass (rolled back from a checkpoint between passes, outside the timing)."""
    model.truncate(0)
    model.eval(tokens[:context], n_logits=0)
    model.checkpoint()
    seconds: dict[int, list[float]] = {k: [] for k in (1, *CURVE_K)}
    for _ in range(REPEATS):
        for k in seconds:
            start = time.perf_counter()
            model.eval(tokens[context:context + k], n_logits=k)
            seconds[k].append(time.perf_counter() - start)
            model.truncate(context)
    one = statistics.median(seconds[1])
    model.truncate(0)
    return {k: statistics.median(seconds[k]) / one for k in CURVE_K}
