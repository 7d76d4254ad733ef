"""The random-weight models of tests/support/synthetic_models.py load in llama.cpp as the memory
kind they stand for, talk (varied greedy text through the ChatML template), and give bit-identical
logits whether tokens are evaluated one at a time or in one batch, with logits that depend on
more than the last few tokens."""

from __future__ import annotations

from contextlib import closing

import numpy as np
import pytest

import llama_cpp
from llama_cpp import _internals

from draftlight.engine.reply.generator import Engine
from draftlight.engine.llama.llama_backend import LlamaBackend
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from tests.support.synthetic_models import ARCHS, write_model
from draftlight.modes import OFF
from tests.support.replies import reply as run_reply

# arch -> (llama_model_is_recurrent, llama_model_is_hybrid, can cut a sequence natively)
MEMORY = {
    "lfm2": (False, True, True),  # with n_rs_seq > 0 (llm_arch_supports_rs_rollback)
    "mamba": (True, False, False),
    "qwen3moe": (False, False, True),  # a plain KV cache
    "qwen3": (False, False, True),
}


@pytest.fixture(scope="module", params=list(ARCHS))
def backend(request, tmp_path_factory, module_home):
    path = write_model(request.param, tmp_path_factory.mktemp("synthetic") / "model.gguf")
    # One thread: a model this small gains nothing from two, and where other processes share
    # the cores, two threads wait on each other at every op (~1 s a token instead of ~3 ms).
    with LlamaBackend(path, LoadOptions(n_ctx=1024, n_threads=1)) as loaded:
        yield request.param, loaded


def test_memory_kind(backend):
    arch, model = backend
    recurrent, hybrid, cuts = MEMORY[arch]
    assert llama_cpp.llama_model_is_recurrent(model._model.model) == recurrent
    assert llama_cpp.llama_model_is_hybrid(model._model.model) == hybrid
    assert model.metadata()["general.architecture"] == arch
    if arch == "qwen3moe":
        assert model.metadata()["qwen3moe.expert_count"] == "8"
        assert model.metadata()["qwen3moe.expert_used_count"] == "2"
    # A context that keeps recurrent-state snapshots: can the last tokens be cut?
    params = llama_cpp.llama_context_default_params()
    params.n_ctx, params.n_batch, params.n_ubatch, params.n_rs_seq = 64, 16, 16, 4
    params.n_threads = params.n_threads_batch = 1
    with closing(_internals.LlamaContext(model=model._model, params=params,
                                         verbose=False)) as context:
        tokens = (llama_cpp.llama_token * 8)(*range(100, 108))  # the batch only points here
        batch = llama_cpp.llama_batch_get_one(tokens, 8)
        assert llama_cpp.llama_decode(context.ctx, batch) == 0
        assert llama_cpp.llama_memory_seq_rm(context.memory, 0, 6, -1) == cuts


def test_greedy_reply_varies(backend):
    arch, model = backend
    engine = Engine(model)
    answer = run_reply(engine, [{"role": "user", "content": "Tell me about the sea."}],
                       SamplingParams(temperature=0.0, max_tokens=40), OFF)
    done, tokens = answer.done, answer.tokens
    assert len(tokens) >= 30, (arch, done.stats.stop_reason)
    assert len(set(tokens)) >= 10, (arch, done.text)  # not one token repeated forever


def test_batched_logits_are_bit_identical(backend):
    arch, model = backend
    text = "The quick brown fox jumps over the lazy dog while the sea rolls in. " * 30
    tokens = model.tokenize(text, add_bos=False)
    context, extra = tokens[:300], tokens[300:308]
    model.truncate(0)
    model.eval(context, n_logits=0)
    one_at_a_time = np.stack([model.eval([t])[0] for t in extra])
    model.truncate(0)  # a fresh start: recurrent memories cannot all cut at 300
    model.eval(context, n_logits=0)
    batched = model.eval(extra, n_logits=len(extra))
    model.truncate(0)
    assert np.abs(one_at_a_time - batched).max() == 0.0, arch
    top2 = np.sort(batched, axis=1)[:, -2:]
    assert np.median(top2[:, 1] - top2[:, 0]) > 0.05, arch  # logits are not degenerate


def test_the_past_changes_the_logits(backend):
    """Beyond the last few tokens (which convolutions see): a wrong recurrent state or KV cache
    must show in the logits, or the models could not catch a broken rollback."""
    arch, model = backend
    suffix = " It was a sunny day, and then the children went to the park"
    rows = []
    for past in ("The cat sat on the mat.", "Quantum physics is hard to explain."):
        model.truncate(0)
        rows.append(model.eval(model.tokenize(past + suffix, add_bos=False))[0])
    model.truncate(0)
    assert np.abs(rows[0] - rows[1]).mean() > 0.25, arch  # measured: 0.75 (lfm2) to 3.3
