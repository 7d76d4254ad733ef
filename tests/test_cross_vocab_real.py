"""Cross-vocabulary drafting on real models: Gemma 3 270M (SentencePiece, 262k) drafts for the
bundled SmolLM2-135M (byte-level BPE, 49k), whose Q4_1 weights give batch-invariant logits, so
greedy speculation must be plain decoding token for token."""

from __future__ import annotations

import pytest

from app.engine.events import Done, TextPiece
from app.engine.generator import Engine
from app.engine.llama_backend import LoadOptions
from app.engine.sampling import SamplingParams

# One thread per model: on a loaded 2-core machine two 2-thread pools fight over the cores.
OPTIONS = LoadOptions(n_ctx=1024, n_threads=1)
GREEDY = SamplingParams(temperature=0.0, max_tokens=24)
PROMPTS = ["What is the capital of France?",
           "Repeat exactly: The United States of America declared independence in 1776.",
           "Write a Python function that returns the square of a number.",
           "Translate to French: Good morning, my friend. Café au lait, s'il vous plaît."]


def run(engine, messages, mode):
    tokens, done = [], None
    for event in engine.generate(messages, GREEDY, mode):
        if isinstance(event, TextPiece) and event.token >= 0:
            tokens.append(event.token)
        elif isinstance(event, Done):
            done = event
    return tokens, done


@pytest.fixture(scope="module")
def gemma_drafts_for_smollm2(bundled_model, gemma_model):
    engine = Engine.load(bundled_model, gemma_model, OPTIONS)
    yield engine
    engine.close()


def test_the_pair_is_accepted_as_cross_vocabulary(gemma_drafts_for_smollm2):
    compatibility = gemma_drafts_for_smollm2.compatibility
    assert not compatibility.same_vocabulary
    assert compatibility.note.startswith("different vocabularies: drafting through ")
    assert compatibility.vocab_map.shared > 40_000


def test_greedy_cross_vocabulary_drafting_is_plain_decoding(gemma_drafts_for_smollm2):
    engine = gemma_drafts_for_smollm2
    assert engine.drift.exact  # the precondition of token identity (Q4_1, flash attention)
    accepted = drafted = 0
    for prompt in PROMPTS:
        messages = [{"role": "user", "content": prompt}]
        plain, _ = run(engine, messages, "off")
        fast, done = run(engine, messages, "draft")
        assert fast == plain, prompt
        assert done.stats.draft_kind == "cross-vocabulary"
        accepted += done.stats.accepted
        drafted += done.stats.drafted
    print(f"cross-vocabulary acceptance {accepted}/{drafted}")
    assert accepted > 0.1 * drafted  # 41/160 measured: a base Gemma guessing a chat reply
