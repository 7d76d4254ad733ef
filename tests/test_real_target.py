"""The engine on a real 1.5B K-quant target (Qwen2.5-Coder-1.5B-Instruct Q4_K_M): the load-time
invariance check and greedy speculation against plain decoding. The full real-target benchmark
is in docs/bench-cpu.md, with its command."""

from __future__ import annotations

import pytest

from app.engine.generator import Engine
from app.engine.llama_backend import LoadOptions
from tests.test_identity_kquant import assert_identical_but_for_near_ties

PROMPTS = [
    "Summarize in one sentence: The meeting moved from Monday to Wednesday because the room "
    "was booked. Everyone must bring the quarterly report to the meeting on Wednesday.",
    "Rename the variable x to count in this code: def f(items):\n    x = 0\n    for i in items:"
    "\n        x += 1\n    return x",
    "What is 12 times 12? Answer with the number and one sentence.",
]


@pytest.mark.slow
def test_the_load_time_check_finds_the_k_quant_target_not_batch_invariant(qwen_1_5b):
    engine = Engine.load(qwen_1_5b, None, LoadOptions(n_ctx=2048))
    try:
        assert engine.target.n_vocab > 150_000
        assert not engine.drift.exact
        assert "greedy identity not guaranteed here" in engine.drift.describe()
    finally:
        engine.close()


@pytest.mark.slow
def test_greedy_speculation_on_the_real_target_differs_only_at_near_ties(qwen_1_5b):
    assert_identical_but_for_near_ties(qwen_1_5b, PROMPTS, max_tokens=32, min_identical=0.5)
