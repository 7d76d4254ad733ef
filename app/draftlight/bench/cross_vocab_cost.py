"""`python -m draftlight.bench.cross_vocab_cost --target T --draft D`: what cross-vocabulary drafting
costs besides the draft model: building the pair's byte tables (and their size on disk), loading
them from the cache, and the conversion work per drafted token at run time (syncing the draft's
context with the target's text, re-tokenising the draft's text for the target)."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from draftlight.engine.text.vocab_map import build_vocab_map, load_vocab_map, save_vocab_map
from draftlight.engine.reply.events import Done
from draftlight.engine.reply.generator import Engine
from draftlight.engine.llama.llama_backend import LlamaBackend
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import DRAFT

PROMPTS = ["Explain what a hash table is in three sentences.",
           "Write a Python function that checks whether a string is a palindrome.",
           "Translate to French: Good morning, my friend. The café opens at eight."]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, required=True)
    parser.add_argument("--draft", type=Path, required=True)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    options = LoadOptions(n_ctx=2048, n_threads=args.threads)
    target, draft = LlamaBackend(args.target, options), LlamaBackend(args.draft, options)
    start = time.perf_counter()
    vocab_map = build_vocab_map(target, draft)
    built = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "map.npz"
        save_vocab_map(vocab_map, path)
        start = time.perf_counter()
        load_vocab_map(path)
        loaded = time.perf_counter() - start
        size = path.stat().st_size
    print(f"target {target.n_vocab:,} tokens, draft {draft.n_vocab:,}: {vocab_map.describe()}")
    print(f"map: built in {built:.2f} s, {size / 1e6:.2f} MB on disk, loaded in {loaded:.3f} s")
    engine = Engine(target)
    engine.attach_draft(draft)
    drafter = engine.model_drafter
    drafted = accepted = 0
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens)
    first_steps = []  # each reply's first proposal also reads the whole prompt: kept apart
    for prompt in PROMPTS:
        first_steps.append(len(drafter.conversions))
        for event in engine.generate([{"role": "user", "content": prompt}], params, DRAFT):
            if isinstance(event, Done):
                drafted += event.stats.drafted
                accepted += event.stats.accepted
    steps = [c for i, c in enumerate(drafter.conversions) if i not in first_steps]
    seconds, tokens = sum(s for s, _ in steps), sum(n for _, n in steps)
    prompt_seconds = sum(drafter.conversions[i][0] for i in first_steps)
    print(f"run: {drafted} target tokens drafted, {accepted} accepted, {len(PROMPTS)} replies")
    print(f"conversion per drafted token: {1000 * seconds / max(tokens, 1):.3f} ms "
          f"({1000 * seconds:.1f} ms over {len(steps)} steps; the draft model's passes excluded)")
    print(f"first step of a reply (reads the prompt): {1000 * prompt_seconds / len(PROMPTS):.1f} ms")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
