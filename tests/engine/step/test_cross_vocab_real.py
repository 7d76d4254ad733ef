"""Cross-vocabulary drafting on real models: Gemma 3 270M (SentencePiece, 262k) drafts for the
bundled SmolLM2-135M (byte-level BPE, 49k), whose Q4_1 weights give batch-invariant logits, so
greedy speculation must be plain decoding token for token. The other way round, and SmolLM2
drafting for Qwen2.5-Coder-1.5B (151k), the targets are K-quants, whose batched logits drift
(app/draftlight/engine/auto/invariance.py): replies may differ only where the target's top two tokens nearly
tie, which a verification bug would not respect."""

from __future__ import annotations

import pytest

from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from tests.support.real_engine import PROMPTS as ENGINE_PROMPTS, assert_identical_but_for_near_ties
from draftlight.modes import DRAFT, OFF
from tests.support.replies import reply as run_reply

# One thread per model: on a loaded 2-core machine two 2-thread pools fight over the cores.
OPTIONS = LoadOptions(n_ctx=1024, n_threads=1)
GREEDY = SamplingParams(temperature=0.0, max_tokens=24)
PROMPTS = [*ENGINE_PROMPTS[:10],
           "Translate to French: Good morning, my friend. Café au lait, s'il vous plaît."]
# The 1.5B target decodes ~10x slower than the 270M: six prompts (a fact, a copy, code, a
# summary, a bug fix and the accented translation that tests the text bridge) check as much.
QWEN_PROMPTS = [PROMPTS[i] for i in (0, 3, 6, 7, 9, 10)]


def run(engine, messages, mode):
    answer = run_reply(engine, messages, GREEDY, mode)
    return answer.tokens, answer.done


@pytest.fixture(scope="module")
def gemma_drafts_for_smollm2(bundled_model, gemma_model, module_home):
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
        plain, _ = run(engine, messages, OFF)
        fast, done = run(engine, messages, DRAFT)
        assert fast == plain, prompt
        assert done.stats.draft_kind == "cross-vocabulary"
        accepted += done.stats.accepted
        drafted += done.stats.drafted
    print(f"cross-vocabulary acceptance {accepted}/{drafted}")
    assert accepted > 0.1 * drafted  # 41/160 measured: a base Gemma guessing a chat reply


def assert_drafts_were_accepted(dones) -> None:
    drafted = sum(d.stats.drafted for d in dones)
    accepted = sum(d.stats.accepted for d in dones)
    print(f"cross-vocabulary acceptance {accepted}/{drafted}")
    assert all(d.stats.draft_kind == "cross-vocabulary" for d in dones)
    assert accepted > 0.1 * drafted > 0


@pytest.mark.slow
def test_smollm2_drafting_for_gemma_differs_only_at_near_ties(bundled_model, gemma_model):
    dones = assert_identical_but_for_near_ties(gemma_model, PROMPTS, 24, 0.5,
                                               draft_path=bundled_model, modes=(DRAFT,),
                                               options=OPTIONS)
    assert_drafts_were_accepted(dones)


@pytest.mark.slow
def test_smollm2_drafting_for_qwen_1_5b_differs_only_at_near_ties(bundled_model, qwen_1_5b):
    """The pair that matters most: the tiny drafter shipped with the app, for a target users run."""
    dones = assert_identical_but_for_near_ties(qwen_1_5b, QWEN_PROMPTS, 24, 0.5,
                                               draft_path=bundled_model, modes=(DRAFT,),
                                               options=OPTIONS)
    assert_drafts_were_accepted(dones)

