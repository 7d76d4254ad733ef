"""A text completion's prompt, read as given (raw_prompt.py), through Engine.generate's own
speculative steps, on the scripted chat model (no llama.cpp)."""

from __future__ import annotations

import pytest

from draftlight.engine.core.errors import ContextOverflowError, EngineError
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.reply.events import Done, TextPiece
from draftlight.engine.reply.generator import Engine
from draftlight.engine.text.raw_prompt import RawPrompt
from draftlight.modes import AUTO, NGRAM, OFF
from tests.support.fake_backend import BOS, FakeChatModel, scripted_costs

# The scripted model answers after its assistant header: the prompt writes it by hand
PROMPT = "Copy: one two three one two three<|assistant|>"
ANSWER = b"one two three one two three one two three"
GREEDY = SamplingParams(temperature=0.0, max_tokens=64)


class FimChatModel(FakeChatModel):
    """The scripted model with fill-in-the-middle tokens: three of its bytes stand in."""
    fim_tokens = (ord("P"), ord("S"), ord("M"))


def engine(model=None) -> Engine:
    return Engine(model or FakeChatModel(lambda prompt: ANSWER), cost_source=scripted_costs)


def reply(engine: Engine, prompt: RawPrompt, mode=OFF, params=GREEDY, **options) -> Done:
    events = list(engine.generate([], params, mode, raw_prompt=prompt, **options))
    assert "".join(e.text for e in events if isinstance(e, TextPiece)) == events[-1].text
    return events[-1]


def test_the_prompt_is_its_own_tokens_without_the_chat_template():
    tokens = engine().tokenize_raw(RawPrompt("ab<|assistant|>"))
    assert bytes(tokens) == b"ab<|assistant|>"  # no <|user|> header, no BOS (add_bos False)
    done = reply(engine(), RawPrompt(PROMPT))
    assert done.text == ANSWER.decode()
    assert done.stats.prompt_tokens == len(PROMPT)


def test_bos_where_the_vocabulary_asks_for_it_and_an_empty_prompt_starts_from_it():
    model = FakeChatModel(lambda prompt: ANSWER)
    model.add_bos = True
    assert engine(model).tokenize_raw(RawPrompt("ab")) == [BOS, ord("a"), ord("b")]
    assert engine().tokenize_raw(RawPrompt("")) == [BOS]


@pytest.mark.parametrize("mode", [NGRAM, AUTO])
def test_greedy_speculation_gives_plain_decodings_text(mode):
    plain = reply(engine(), RawPrompt(PROMPT))
    fast = reply(engine(), RawPrompt(PROMPT), mode)
    assert fast.text == plain.text
    assert fast.stats.accepted > 0  # n-gram lookup copied from the prompt and the reply


def test_a_prediction_drafts_for_a_raw_prompt_too():
    done = reply(engine(), RawPrompt(PROMPT), OFF, prediction=ANSWER.decode())
    assert done.text == ANSWER.decode()
    assert done.stats.prediction_accepted > 0


def test_fill_in_the_middle_reads_prefix_suffix_middle():
    tokens = engine(FimChatModel(lambda prompt: b"")).tokenize_raw(RawPrompt("ab", "cd"))
    assert bytes(tokens) == b"PabScdM"


def test_a_suffix_without_fim_tokens_is_refused_saying_why():
    with pytest.raises(EngineError, match="no FIM tokens"):
        engine().tokenize_raw(RawPrompt("ab", suffix="cd"))
    with pytest.raises(EngineError, match="no FIM tokens"):
        reply(engine(), RawPrompt("ab", suffix="cd"))


def test_a_prompt_is_never_cut_to_fit():
    model = FakeChatModel(lambda prompt: ANSWER, n_ctx=64)
    with pytest.raises(ContextOverflowError, match="the prompt is 60 tokens"):
        reply(engine(model), RawPrompt("x" * 60))


def test_origins_name_the_prompt_as_message_zero():
    events = list(engine().generate([], GREEDY, NGRAM, raw_prompt=RawPrompt(PROMPT)))
    copied = [e.origin for e in events if isinstance(e, TextPiece) and e.origin is not None
              and e.origin.kind == "message"]
    assert copied and all(o.message == 0 for o in copied)
    for origin in copied:
        assert PROMPT[origin.start:origin.end] in ANSWER.decode()
