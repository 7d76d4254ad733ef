"""A draft model whose context window fills before the target's (issue 25): a draft loaded with a
smaller context, or one of another vocabulary that needs more tokens for the same text. The draft
goes on from the latest part of the context that fits (drafters.draft_window), the reply is plain
decoding's, and the user is told once. Scripted models here (exact and fast); the real ones are
in tests/engine/step/test_draft_window_real.py."""

from __future__ import annotations

import pytest

from draftlight.engine.step.drafters import DRAFT_HEADROOM, draft_window
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.sampling import SamplingParams
from tests.support.fake_backend import WORDS, FakeChatModel, FakeWordChatModel, scripted_costs
from draftlight.modes import AUTO, DRAFT, OFF
from tests.support.replies import reply as run_reply

GREEDY = SamplingParams(temperature=0.0, max_tokens=600)
MOTTO = b"The quick brown fox jumps over the lazy dog. "
# Longer than the draft's window (in the draft's tokens) from the start: every proposal of the
# draft model drafts from a cut context.
QUESTION = "Say this twelve times: " + (MOTTO * 12).decode()
# Copied from nowhere: auto mode's n-gram lookup guesses poorly, so it tries the draft model.
ANSWER = (b"No. Here is a short story instead: a small robot named Pip lived in a lighthouse "
          b"by the cold northern sea, counting ships at night and writing their names down.")


def answer(conversation: bytes) -> bytes:
    return ANSWER


def run(engine, messages, mode):
    answer = run_reply(engine, messages, GREEDY, mode)
    return [p.token for p in answer.pieces], answer.notices, answer.done


def test_the_window_is_the_context_while_it_fits_then_its_first_and_latest_tokens():
    context = list(range(100))
    assert draft_window(context, None) == (context, 0)
    assert draft_window(context, 100 + DRAFT_HEADROOM) == (context, 0)
    window, left_out = draft_window(context, 64)  # 52 must go: two steps of half the window
    assert window[0] == 0 and window[1:] == context[1 + left_out:]
    assert left_out == 64 and len(window) + DRAFT_HEADROOM <= 64
    # The cut moves in steps of half the window: contexts that grow by less keep it, so the
    # draft's cache is reused from one proposal to the next.
    cuts = {draft_window(list(range(size)), 64)[1] for size in range(100, 132)}
    assert cuts == {64, 96}


PAIRS = {
    # The same vocabulary, the draft loaded with a smaller context than the target
    "same vocabulary, smaller draft context": (
        lambda: FakeChatModel(answer, n_ctx=2048), lambda: FakeChatModel(answer, n_ctx=128)),
    # Another vocabulary, the same context: the draft (one token per byte) needs about four
    # times the target's tokens (words) for the same text, as SmolLM2 does for Chinese text
    # next to Qwen
    "another vocabulary needing more tokens": (
        lambda: FakeWordChatModel(answer, WORDS, n_ctx=512),
        lambda: FakeChatModel(answer, n_ctx=512)),
}


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("mode", [DRAFT, AUTO], ids=str)
def test_a_full_draft_window_leaves_the_reply_unchanged_and_says_so_once(pair, mode):
    make_target, make_draft = PAIRS[pair]
    messages = [{"role": "user", "content": QUESTION}]
    plain, _, _ = run(Engine(make_target(), cost_source=scripted_costs), messages, OFF)
    engine = Engine(make_target(), make_draft(), cost_source=scripted_costs)
    tokens, notices, done = run(engine, messages, mode)
    assert tokens == plain
    assert done.stats.stop_reason == "eos" and done.text == ANSWER.decode()
    draft = engine.draft
    text = b"".join(engine.target.piece(t) for t in engine.target.tokens)
    prompt = engine.template.render(messages).encode()
    assert len(draft.tokens) <= draft.n_ctx < len(prompt)  # the draft: one token per byte
    assert draft.evaluated > 0  # it drafted (auto chose it at least once)
    assert len(notices) == 1 and "draft model's" in notices[0] and "full" in notices[0]
    # The draft evaluated what it drafted (up to 5 tokens a pass) and each token of its windows
    # once or twice, not the whole window again at every proposal.
    passes = done.stats.target_passes
    assert draft.evaluated < 5 * passes + 2 * len(text), (draft.evaluated, passes)


def test_a_draft_that_fits_says_nothing():
    messages = [{"role": "user", "content": QUESTION}]
    engine = Engine(FakeChatModel(answer, n_ctx=2048), FakeChatModel(answer, n_ctx=2048),
                    cost_source=scripted_costs)
    _, notices, done = run(engine, messages, DRAFT)
    assert not notices and done.stats.acceptance_rate == 1.0
    assert len(engine.draft.tokens) > 512  # the conversation above, in full
