"""The engine's host keeps the conversation's prompt (engine/llama/kept_prompt.py) whenever it
ends but by a crash: when its input closes (HostedEngine.close) and on a SIGTERM (the system
shutting down); the next host then reads only the new message. On the real bundled model."""

from __future__ import annotations

import os
import signal

import pytest

from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.host.hosted import HostedEngine, HostSpec
from draftlight.engine.llama import kept_prompt
from draftlight.modes import OFF
from tests.support.replies import reply

pytest.importorskip("llama_cpp")

LOG = "Read this log.\n\n" + " ".join(
    f"Paragraph {i}: the lighthouse keeper wrote down the tide, the wind and the ships that "
    f"passed the cape on day {i}." for i in range(12))  # about 350 tokens


FIRST = [{"role": "user", "content": LOG}]


def host(model) -> HostedEngine:
    return HostedEngine(HostSpec(str(model), options=LoadOptions(n_ctx=1024),
                                 measure_later=True))


def answer(engine, messages):
    return reply(engine, messages, SamplingParams(max_tokens=8), OFF).done


@pytest.mark.parametrize("ending", ["input closed", "SIGTERM"])
def test_a_host_that_ends_keeps_the_prompt_for_the_next(bundled_model, ending):
    engine = host(bundled_model)
    try:
        first = answer(engine, FIRST)
        read = first.stats.prompt_tokens
        assert read > kept_prompt.MIN_TOKENS
        if ending == "SIGTERM":
            process = engine._process
            os.kill(process.pid, signal.SIGTERM)
            assert process.wait(timeout=30) == 0  # ended as its input's end ends it
    finally:
        engine.close()

    again = host(bundled_model)
    try:
        stats = answer(again, FIRST + [{"role": "assistant", "content": first.text},
                                       {"role": "user", "content": "Which cape was it?"}]).stats
    finally:
        again.close()
    assert stats.reused_prompt_tokens >= read - 1, stats  # all but the new message
