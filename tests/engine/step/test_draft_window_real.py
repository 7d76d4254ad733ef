"""A draft model whose context window fills first, on real models (issue 25): it drafts from the
latest part of the conversation (drafters.draft_window) and the reply is plain decoding's, where
it used to end with "context window is full" from the draft's eval.

The targets whose replies are compared token for token are the bundled SmolLM2 (Q4_1: batched
and one-token logits are bit-identical, so greedy speculation is exactly plain decoding). The
user's own case, a K-quant target (Qwen2.5-Coder-1.5B) with SmolLM2 drafting through text for a
Chinese text, has Gemma 3 270M in its place in the command-line test (the same shape: a 262k
vocabulary that needs far fewer tokens for Chinese than SmolLM2's 49k, at 30x less cost)."""

from __future__ import annotations

import json
import subprocess
import sys

from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.reply.generator import Engine
from draftlight.engine.llama.llama_backend import LlamaBackend
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.settings import Settings, save_settings
from tests.support.replies import reply as run_reply
from draftlight.modes import AUTO, DRAFT, OFF

GREEDY = SamplingParams(temperature=0.0, max_tokens=48)
# One thread per model: on a loaded 2-core machine two threads wait on each other
TARGET = LoadOptions(n_ctx=1024, n_threads=1)
SMALL_DRAFT = LoadOptions(n_ctx=256, n_threads=1)
PASSAGE = ("The old lighthouse keeper climbed the stairs every evening at dusk. He wound the "
           "clockwork, polished the great lens, and wrote the weather in a leather book: wind "
           "from the north-west, light rain, three fishing boats returning before dark. ") * 5
# An earlier turn of about 300 tokens (SmolLM2's or Gemma's): more than a 256-token draft holds.
# The new question is answered in new words, so auto mode cannot copy it with n-gram lookup.
MESSAGES = [{"role": "user", "content": "Remember this log:\n" + PASSAGE},
            {"role": "assistant", "content": "I will remember it."},
            {"role": "user", "content": "Write a short poem about a cat."}]
# Chinese text: Gemma 3 needs 175 tokens for it, SmolLM2 431 (byte-level BPE of few Chinese merges)
CHINESE = ("请逐字重复下面这段文字：春天来了，山上的雪慢慢融化，小河里的水变得清澈起来。农民们早早地来到田里，"
           "开始翻土、播种，希望今年能有一个好收成。孩子们在草地上放风筝，笑声传得很远很远。城市里的公园也热闹"
           "起来，老人们在树下下棋、喝茶、聊天，年轻人沿着湖边跑步。到了夏天，天气越来越热，蝉在树上不停地叫，"
           "人们喜欢在傍晚的时候出门散步，吃一碗冰凉的西瓜。秋天是收获的季节，稻田变成了金黄色，果园里挂满了"
           "苹果和梨。冬天到了，北方下起了大雪，家家户户围坐在一起包饺子，准备迎接新的一年。")


def run(engine, messages, mode):
    answer = run_reply(engine, messages, GREEDY, mode)
    return answer.tokens, answer.notices, answer.done


def assert_plain_decoding_with_one_notice(engine, modes):
    plain, notices, _ = run(engine, MESSAGES, OFF)
    assert not notices
    draft = engine.draft
    assert len(engine.tokenize_chat(MESSAGES)) < TARGET.n_ctx
    for mode in modes:
        draft.truncate(0)  # emptied, to see below that the draft model drafted (auto chose it)
        tokens, notices, done = run(engine, MESSAGES, mode)
        assert tokens == plain, mode
        assert 0 < len(draft.tokens) <= draft.n_ctx, mode
        assert len(notices) == 1 and "draft model's 256-token context is full" in notices[0]
        assert done.stats.accepted > 0, mode
    return done


def cheap_draft_costs(model, probe, role):
    """A GPU-like cost curve and a draft that costs next to nothing: auto mode then drafts with
    the model from the first step (on this CPU's measured curve it would hardly ever)."""
    curve = BatchCosts({1: 1.0, 2: 1.02, 4: 1.05, 8: 1.1, 16: 1.3}, 0.01)
    return curve, (1e-4 if role == "draft" else 0.01)


def test_a_same_vocabulary_draft_with_a_smaller_context_drafts_on(bundled_model, module_home):
    """SmolLM2 drafting for itself from a 256-token window, in draft and auto mode."""
    target = LlamaBackend(bundled_model, TARGET)
    engine = Engine(target, LlamaBackend(bundled_model, SMALL_DRAFT),
                    cost_source=cheap_draft_costs)
    try:
        assert_plain_decoding_with_one_notice(engine, (DRAFT, AUTO))
    finally:
        engine.close()


def test_a_draft_of_another_vocabulary_with_a_smaller_context_drafts_on(bundled_model,
                                                                        gemma_model, module_home):
    engine = Engine.load(bundled_model, gemma_model, TARGET, SMALL_DRAFT)
    try:
        assert not engine.compatibility.same_vocabulary
        assert_plain_decoding_with_one_notice(engine, (DRAFT,))
    finally:
        engine.close()


def test_chat_goes_on_when_the_draft_needs_more_tokens_than_its_context(bundled_model,
                                                                       gemma_model):
    """The reported command, with Gemma 3 270M as the target: `draftlight chat --mode draft
    --ctx 256` and a Chinese text that fits the target's context but not SmolLM2's. It ended with
    a traceback and exit code 1. Gemma is a K-quant, whose greedy replies may differ from plain
    decoding at near ties (test_identity_kquant.py): what is checked here is that the reply
    completes, with one notice and no traceback."""
    save_settings(Settings(n_threads=1))  # in this test's own DRAFTLIGHT_HOME
    proc = subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", "--json", "--mode", "draft",
                           "--ctx", "256", "--max-tokens", "24", "--target", str(gemma_model),
                           "--draft", str(bundled_model), CHINESE],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    notices = [line for line in lines if line["type"] == "notice"]
    assert len(notices) == 1 and "context is full" in notices[0]["message"]
    done = lines[-1]
    assert done["type"] == "done" and done["stats"]["new_tokens"] == 24
    assert done["stats"]["drafted"] > 0 and done["stats"]["draft_kind"] == "cross-vocabulary"
