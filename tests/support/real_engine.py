"""The engine on real models: prompts, a reply's tokens and where each came from, and the check
that greedy speculation on weights whose batched logits drift (K-quants) differs from plain
decoding only at near ties (tests/engine/auto/test_identity_kquant.py says why)."""

from __future__ import annotations

import numpy as np

from draftlight.engine.core.backend import sync_cache
from draftlight.engine.reply.compare import explain_divergence
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import AUTO, NGRAM, OFF
from tests.support.replies import reply

OPTIONS = LoadOptions(n_ctx=2048)
GREEDY = SamplingParams(temperature=0.0, max_tokens=48)

PROMPTS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Explain what a hash table is in two sentences.",
    "Repeat exactly: The United States of America declared independence in 1776.",
    "Translate to French: Good morning, my friend.",
    "What is 17 times 3? Show your work.",
    "Write a Python function that returns the square of a number.",
    "Summarize: The cat sat on the mat. The cat was happy. The mat was red and soft.",
    "List three primary colors.",
    "Fix the bug: def add(a, b): return a - b",
    "Quote the first sentence of this text: 'Water boils at 100 degrees Celsius at sea level. "
    "It freezes at zero.'",
]


def run(engine, messages, mode, params=GREEDY):
    answer = reply(engine, messages, params, mode)
    return answer.tokens, answer.sources, answer.done


NEAR_TIE = 1.0  # logits; a clear choice is several logits ahead


def end_of_text_gap(engine, messages, shorter: list[int], longer: list[int]) -> float:
    """Where one greedy reply ended and the other went on: the one-token logit of the best
    end-of-generation token minus that of the longer reply's next token (explain_divergence
    returns None here, as there is no token of the shorter reply to compare)."""
    prefix = engine.tokenize_chat(messages) + shorter
    sync_cache(engine.target, prefix[:-1])
    logits = engine.target.eval(prefix[-1:], n_logits=1)[0]
    ends = [int(t) for t in np.argsort(-logits)[:64] if engine.target.is_end_of_generation(int(t))]
    if not ends:  # no end token anywhere near the top: a clear choice to go on
        return float("inf")
    return float(logits[ends[0]] - logits[longer[len(shorter)]])


def assert_identical_but_for_near_ties(model_path, prompts, max_tokens, min_identical=0.6, *,
                                       draft_path=None, modes=(NGRAM, AUTO),
                                       options=OPTIONS, engine=None) -> list:
    """Returns the Done events of the speculative runs (their statistics). `engine`: one
    already loaded on `model_path` to use (and leave open) rather than loading one."""
    own = engine is None
    engine = Engine.load(model_path, draft_path, options) if own else engine
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens)
    identical, ended_apart, clear_differences, dones = 0, 0, [], []
    try:
        assert not engine.drift.exact
        for prompt in prompts:
            messages = [{"role": "user", "content": prompt}]
            plain, _, plain_done = run(engine, messages, OFF, params)
            for mode in modes:
                fast, _, done = run(engine, messages, mode, params)
                dones.append(done)
                assert done.stats.identity_note.startswith("greedy identity not guaranteed")
                if fast == plain:
                    identical += 1
                    continue
                divergence = explain_divergence(engine, messages, plain, fast)
                if divergence is not None:
                    if abs(divergence.logit_gap) > NEAR_TIE:
                        clear_differences.append(f"{mode} {prompt!r}: {divergence.describe()}")
                    continue
                # One reply is a prefix of the other: the shorter one stopped at end-of-text.
                ended_apart += 1
                shorter, longer, stopped = ((plain, fast, plain_done) if len(plain) < len(fast)
                                            else (fast, plain, done))
                assert stopped.stats.stop_reason == "eos", (mode, prompt, stopped.stats)
                gap = end_of_text_gap(engine, messages, shorter, longer)
                if abs(gap) > NEAR_TIE:
                    clear_differences.append(
                        f"{mode} {prompt!r}: ended after {len(shorter)} tokens where the other "
                        f"reply went on, end-of-text {gap:+.2f} logits ahead of its next token")
    finally:
        if own:
            engine.close()
    print(f"{identical} identical, {ended_apart} ended apart (end-of-text at a near tie), "
          f"of {len(modes) * len(prompts)} speculative replies")
    assert not clear_differences, "\n".join(clear_differences)
    assert identical >= min_identical * len(modes) * len(prompts)
    return dones
