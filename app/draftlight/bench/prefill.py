"""`draftlight bench prefill [--target FILE] [--lengths 1000,8000]`: how fast a long prompt is
read, against a bare llama.cpp decode of the same tokens in the same process.

For each length: the engine's read (LlamaBackend.eval of the prompt, n_logits=0: what a new
conversation, an attachment or a serve request costs before its first token) and llama.cpp's
own: one llama_context with its default cache (f16 keys and values, flash attention), the same
weights, threads and batches of 512, nothing else. The two alternate, the engine first on odd
repeats. `--ordinary` also times the engine with fast_prefill off (every token down the exact
cache's per-row attention: how it read prompts before). Then a second request sharing all but
the last 128 tokens: only those are read again. The load's first long read (which finds how
llama.cpp turns the keys it quantises, fast_prefill.py) is made and printed before the timings.

Each row ends with the ratio engine / bare; the last line is exactly
`prefill: X.XXx llama.cpp's time at the longest length`.
"""

from __future__ import annotations

import argparse
import random
import time
from contextlib import closing
from dataclasses import replace
from pathlib import Path

CHANGED = 128  # tokens a second request adds after the shared prefix


def add_prefill_parser(subcommands) -> None:
    prefill = subcommands.add_parser(
        "prefill", help="how fast a long prompt is read, against bare llama.cpp",
        description="Times reading prompts of several lengths in the engine and in a bare "
                    "llama.cpp context with its default cache (same weights, threads and "
                    "batches); last line: 'prefill: X.XXx llama.cpp's time at the longest "
                    "length'.")
    prefill.add_argument("--target", type=Path, help="GGUF (default: the bundled model)")
    prefill.add_argument("--lengths", default="1000,8000",
                         help="prompt lengths in tokens, comma-separated (default 1000,8000)")
    prefill.add_argument("--repeats", type=int, default=1, help="timings per length and side")
    prefill.add_argument("--ordinary", action="store_true",
                         help="also time the engine without its fast prompt path")
    prefill.add_argument("--threads", type=int, default=0, help="CPU threads (0 = default)")
    prefill.set_defaults(run=run_prefill)


def run_prefill(args: argparse.Namespace) -> int:
    from draftlight.engine.llama.llama_backend import LlamaBackend
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.store.default_in_terminal import default_target_in_terminal
    from draftlight.user_messages import UserError

    try:
        lengths = sorted({int(part) for part in args.lengths.split(",") if part.strip()})
    except ValueError:
        raise UserError(f"--lengths: whole numbers, comma-separated, not {args.lengths!r}")
    if not lengths or lengths[0] < CHANGED * 2 or args.repeats < 1:
        raise UserError(f"--lengths must be at least {CHANGED * 2} tokens, --repeats at least 1")
    target = default_target_in_terminal(args.target)
    options = LoadOptions(n_ctx=-(-(max(lengths) + 16) // 256) * 256, n_threads=args.threads)
    sides = {"engine": options}
    if args.ordinary:
        sides["ordinary"] = replace(options, fast_prefill=False)
    ratio = 0.0
    with LlamaBackend(target, options) as model:
        print(f"target: {Path(target).name}, {model.description}; "
              f"{model.options.n_threads or 'default'} threads, batches of {options.n_batch}")
        tokens = prompt_tokens(model, max(lengths))
        started = time.perf_counter()  # once per load: how this build turns quantised keys
        time_engine(model, tokens[:CHANGED * 2])
        print(f"first long read of this load (finds how llama.cpp turns the keys it quantises; "
              f"not counted below): {time.perf_counter() - started:.2f} s")
        for length in lengths:
            prompt = tokens[:length]
            times: dict[str, list[float]] = {"engine": [], "bare": []}
            for repeat in range(args.repeats):
                order = ("engine", "bare") if repeat % 2 == 0 else ("bare", "engine")
                for side in order:
                    times[side].append(time_engine(model, prompt) if side == "engine"
                                       else time_bare(model, prompt))
            row = {side: min(values) for side, values in times.items()}
            for side, side_options in sides.items():
                if side != "engine":
                    with LlamaBackend(target, side_options) as other:
                        row[side] = min(time_engine(other, prompt) for _ in range(args.repeats))
            again = time_shared_prefix(model, prompt)
            ratio = row["engine"] / row["bare"]
            extra = "".join(f", {side} {row[side]:.2f} s ({row[side] / row['bare']:.2f}x)"
                            for side in sides if side != "engine")
            print(f"{length:>6} tokens: engine {row['engine']:.2f} s "
                  f"({length / row['engine']:.0f} tok/s), llama.cpp {row['bare']:.2f} s "
                  f"({length / row['bare']:.0f} tok/s){extra}; again after a shared prefix: "
                  f"{again:.2f} s for {CHANGED} new tokens | {ratio:.2f}x")
    print(f"prefill: {ratio:.2f}x llama.cpp's time at the longest length")
    return 0


def prompt_tokens(model, length: int) -> list[int]:
    """A made-up inventory, the kind of text an attached spreadsheet becomes (seeded)."""
    rng = random.Random(0)
    items = ["bolts", "washers", "hinges", "brackets", "screws", "rivets", "clamps", "valves"]
    lines, tokens = [], []
    while len(tokens) < length:
        lines += [f"Item {len(lines):05d}: {rng.choice(items)}, size {rng.randint(1, 99)} mm, "
                  f"aisle {rng.randint(1, 40)}, count {rng.randint(0, 5000)}."
                  for _ in range(200)]
        tokens = model.tokenize("\n".join(lines), add_bos=True)
    return tokens[:length]


def time_engine(model, prompt: list[int]) -> float:
    model.truncate(0)
    started = time.perf_counter()
    model.eval(prompt, n_logits=0)
    seconds = time.perf_counter() - started
    model.truncate(0)
    return seconds


def time_shared_prefix(model, prompt: list[int]) -> float:
    model.truncate(0)
    model.eval(prompt[:-CHANGED], n_logits=0)
    started = time.perf_counter()
    model.eval(prompt[-CHANGED:], n_logits=0)
    seconds = time.perf_counter() - started
    model.truncate(0)
    return seconds


def time_bare(model, prompt: list[int]) -> float:
    """llama.cpp's own prompt path: a context with its default cache types on the same weights."""
    import llama_cpp
    from llama_cpp import _internals
    from draftlight.engine.llama.fast_prefill import fill_batch
    from draftlight.engine.core.load_options import default_threads

    params = llama_cpp.llama_context_default_params()
    params.n_ctx = model.n_ctx
    params.n_batch = params.n_ubatch = model.options.n_batch
    params.n_threads = params.n_threads_batch = model.options.n_threads or default_threads()
    params.no_perf = True
    n_batch = model.options.n_batch
    with closing(_internals.LlamaContext(model=model._model, params=params, verbose=False)) as ctx, \
            closing(_internals.LlamaBatch(n_tokens=n_batch, embd=0, n_seq_max=1,
                                          verbose=False)) as batch:
        started = time.perf_counter()
        for start in range(0, len(prompt), n_batch):
            chunk = prompt[start:start + n_batch]
            fill_batch(batch.batch, chunk, start, len(chunk))
            if llama_cpp.llama_decode(ctx.ctx, batch.batch) != 0:
                raise RuntimeError("llama_decode failed")
        return time.perf_counter() - started
