"""`draftlight serve` without a model or a socket: request validation, stop sequences, and the
Predicted Outputs drafter (alone, and inside Engine.generate on the scripted chat model)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from draftlight.engine.step.drafters import Draft
from draftlight.engine.reply.generator import Engine
from draftlight.engine.step.prediction import PredictionDrafter
from draftlight.engine.core.sampling import SamplingParams
from draftlight.serve.schema import ApiError, parse_chat_request
from draftlight.serve.stops import StopFilter
from tests.support.fake_backend import FakeChatModel, scripted_costs
from draftlight.modes import AUTO, NGRAM, OFF
from tests.support.replies import reply as run_reply

MODEL = "smol"
HELLO = [{"role": "user", "content": "hi"}]


def parse(**fields):
    body = {"model": MODEL, "messages": HELLO, **fields}
    return parse_chat_request(json.dumps(body).encode(), model_id=MODEL, n_ctx=99)


def refused(body: bytes | dict, status: int = 400) -> ApiError:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with pytest.raises(ApiError) as caught:
        parse_chat_request(raw, model_id=MODEL, n_ctx=99)
    assert caught.value.status == status
    error = caught.value.body()["error"]
    assert error["message"] and error["type"]
    return caught.value


def test_sampling_parameters_are_mapped_and_unknown_fields_ignored():
    chat = parse(temperature=0, top_p=0.5, max_completion_tokens=7, seed=3, stop="\n\n",
                 user="someone", metadata={"x": 1}, stream=True,
                 stream_options={"include_usage": True})
    assert (chat.params.temperature, chat.params.top_p, chat.params.max_tokens,
            chat.params.seed) == (0.0, 0.5, 7, 3)
    assert chat.stop == ("\n\n",) and chat.stream and chat.include_usage
    defaults = parse()
    assert defaults.params.temperature == 1.0  # OpenAI's default
    assert defaults.params.max_tokens == 99 and not defaults.stream and defaults.stop == ()
    assert parse(max_tokens=5).params.max_tokens == 5


def test_messages_accept_text_parts_and_map_developer_to_system():
    chat = parse(messages=[{"role": "developer", "content": "be brief"},
                           {"role": "user", "content": [{"type": "text", "text": "a"},
                                                        {"type": "text", "text": "b"}]}])
    assert chat.messages == [{"role": "system", "content": "be brief"},
                             {"role": "user", "content": "ab"}]


def test_file_parts_are_attached_as_the_window_attaches_them():
    """OpenAI's file content parts (issue 39, part 7): a PDF sent as base64 (or a data: URL)
    becomes its text layer under a header naming it, before the message's text; data that is
    not base64, a file that is not text and a part of another type get a 400 naming the part."""
    import base64

    from tests.support.documents import pdf_bytes
    pdf = base64.b64encode(pdf_bytes([["Sales rose."], ["The plant reopened."]])).decode()
    chat = parse(messages=[{"role": "user", "content": [
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{pdf}",
                                  "filename": "report.pdf"}},
        {"type": "text", "text": "Where is the plant?"}]}])
    content = chat.messages[0]["content"]
    assert content.startswith("Attached file: report.pdf\n```\n--- page 1 ---\nSales rose.")
    assert "--- page 2 ---\nThe plant reopened." in content
    assert content.endswith("```\n\nWhere is the plant?")

    def with_part(part):
        return {"model": MODEL, "messages": [{"role": "user", "content": [part]}]}

    error = refused(with_part({"type": "file", "file": {"file_data": "not base64!"}}))
    assert error.param == "messages[0].content[0].file.file_data"
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n\0\0").decode()
    error = refused(with_part({"type": "file", "file": {"file_data": png,
                                                        "filename": "x.png"}}))
    assert "x.png is a PNG image, not text" in error.message
    error = refused(with_part({"type": "image_url", "image_url": {"url": "http://x"}}))
    assert "text and file parts" in error.message


def test_prediction_is_text_or_text_parts():
    assert parse(prediction={"type": "content", "content": "x = 1"}).prediction == "x = 1"
    parts = {"type": "content", "content": [{"type": "text", "text": "a"},
                                            {"type": "text", "text": "b"}]}
    assert parse(prediction=parts).prediction == "ab"
    refused({"model": MODEL, "messages": HELLO, "prediction": "x = 1"})
    refused({"model": MODEL, "messages": HELLO, "prediction": {"type": "content", "content": 3}})


@pytest.mark.parametrize("body, param", [
    (b"{not json", None),
    (b"[1, 2]", None),
    ({"messages": HELLO}, "model"),
    ({"model": MODEL, "messages": []}, "messages"),
    ({"model": MODEL}, "messages"),
    ({"model": MODEL, "messages": [{"role": "system", "content": "only a system prompt"}]},
     "messages"),
    ({"model": MODEL, "messages": [{"role": "function", "content": "x"}]}, "messages[0].role"),
    ({"model": MODEL, "messages": [{"role": "tool", "content": "x"}]},
     "messages[0].tool_call_id"),
    ({"model": MODEL, "messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
     "messages[0].content"),
    ({"model": MODEL, "messages": HELLO, "temperature": "hot"}, "temperature"),
    ({"model": MODEL, "messages": HELLO, "temperature": 3}, "temperature"),
    ({"model": MODEL, "messages": HELLO, "max_tokens": 1.5}, "max_tokens"),
    ({"model": MODEL, "messages": HELLO, "max_tokens": 0}, "max_tokens"),
    ({"model": MODEL, "messages": HELLO, "stream": "yes"}, "stream"),
    ({"model": MODEL, "messages": HELLO, "seed": True}, "seed"),
    ({"model": MODEL, "messages": HELLO, "stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"model": MODEL, "messages": HELLO, "n": 2}, "n"),
    ({"model": MODEL, "messages": HELLO, "tools": [{"type": "function"}]}, "tools[0]"),
    ({"model": MODEL, "messages": HELLO, "functions": [{"name": "f"}]}, "functions"),
    ({"model": MODEL, "messages": HELLO, "logprobs": True}, "logprobs"),
    ({"model": MODEL, "messages": HELLO, "response_format": {"type": "xml"}},
     "response_format"),
])
def test_bad_requests_are_400_with_the_parameter_named(body, param):
    assert refused(body).param == param


def test_an_unknown_model_is_404():
    error = refused({"model": "gpt-4o", "messages": HELLO}, status=404)
    assert error.code == "model_not_found"


def test_stop_sequences_split_across_pieces_are_caught_and_never_sent():
    stops: StopFilter[int] = StopFilter(["\n\n", "END"])
    sent = []
    for i, text in enumerate(["Hello", "\n", "world", " E", "N", "D!", "more"]):
        sent += stops.feed(text, i)
    assert sent == [("Hello", 0), ("\n", 1), ("world", 2), (" ", 3)]
    assert stops.stopped and stops.flush() == []


def test_stop_prefix_that_never_completes_is_flushed_with_its_provenance():
    stops: StopFilter[str] = StopFilter(["\n\n"])
    assert stops.feed("a\n", "draft") == []
    assert stops.feed("b", "target") == [("a\n", "draft"), ("b", "target")]
    assert stops.feed("c\n", "draft") == []
    assert stops.flush() == [("c\n", "draft")]
    assert StopFilter([]).feed("x", 1) == [("x", 1)]


# --- the Predicted Outputs drafter ----------------------------------------------------------

RNG = np.random.default_rng(0)
GREEDY = SamplingParams(temperature=0.0, max_tokens=200)


class Scripted:
    """A fallback drafter that records its calls."""

    def __init__(self) -> None:
        self.calls = []

    def propose(self, context, max_tokens, params, rng) -> Draft:
        self.calls.append(max_tokens)
        return Draft([7] * max_tokens)


def test_prediction_drafts_its_start_then_follows_the_reply_through_an_edit():
    prediction = [10, 11, 12, 13, 14, 15, 16, 17]
    drafter = PredictionDrafter(prediction, start=3)
    prompt = [1, 2, 3]
    assert drafter.propose(prompt, 4, GREEDY, RNG).tokens == [10, 11]  # no evidence yet: 2
    # The reply replaced 12 by 99 and went on with 13 14: found again after the edit, with a
    # match of 2 tokens, so 2 are drafted; the longer the match, the longer the draft.
    assert drafter.propose(prompt + [10, 11, 99, 13, 14], 8, GREEDY, RNG).tokens == [15, 16]
    assert drafter.from_prediction
    assert drafter.propose(prompt + [10, 11, 12, 13], 8, GREEDY, RNG).tokens == [14, 15, 16, 17]
    capped = PredictionDrafter(prediction, start=3, draft_tokens=3)
    assert capped.propose(prompt + [10, 11, 12, 13], 8, GREEDY, RNG).tokens == [14, 15, 16]


def test_one_token_where_the_prediction_expects_it_drafts_one():
    prediction = [10, 11, 12, 13, 14, 15, 16, 17]
    # A preamble (a code fence: 90 91), then the prediction's first token: its second is drafted
    # at once, one token (one token of evidence), not after a two-token n-gram.
    drafter = PredictionDrafter(prediction, start=0)
    assert drafter.propose([90, 91, 10], 8, GREEDY, RNG).tokens == [11]
    # The reply copied 11 12, inserted 95 96 and came back to 13: 14 is drafted.
    assert drafter.propose([90, 91, 10, 11, 12, 95, 96, 13], 8, GREEDY, RNG).tokens == [14]
    # It replaced 14 by 99 and went on with 15: 16 is drafted.
    assert drafter.propose([90, 91, 10, 11, 12, 95, 96, 13, 99, 15], 8, GREEDY,
                           RNG).tokens == [16]
    # A token the prediction has, but not where the reply is: nothing.
    assert PredictionDrafter(prediction, start=0).propose([90, 91, 15], 8, GREEDY,
                                                          RNG).tokens == []


def test_prediction_prefers_the_longest_match_and_then_the_next_occurrence():
    #             0  1  2  3  4  5  6  7  8  9
    prediction = [5, 1, 2, 8, 6, 1, 2, 9, 1, 2, 4]
    drafter = PredictionDrafter(prediction, start=0)
    assert drafter.match([6, 1, 2]) == (7, 3)  # "6 1 2" occurs once: its continuation is 9
    assert drafter.match([1, 2])[0] == 3  # equal matches: the first one ...
    drafter.propose([6, 1, 2], 1, GREEDY, RNG)
    assert drafter.match([1, 2])[0] == 10  # ... after the latest match (position 7)


def test_without_a_match_the_mode_drafts_and_learns_only_from_its_own_steps():
    fallback = Scripted()
    drafter = PredictionDrafter([10, 11, 12, 13], start=0, fallback=fallback, fallback_tokens=2)
    draft = drafter.propose([40, 41, 42], 8, GREEDY, RNG)
    assert draft.tokens == [7, 7] and fallback.calls == [2] and not drafter.from_prediction
    drafter.observe(2, 1, 0)
    assert (drafter.drafted, drafter.accepted) == (0, 0)
    drafter.propose([40, 10, 11], 3, GREEDY, RNG)
    drafter.observe(3, 2, 0)
    assert (drafter.drafted, drafter.accepted) == (3, 2)
    assert PredictionDrafter([10, 11], start=0).propose([40, 41], 5, GREEDY, RNG).tokens == []


CODE = b"def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n"
EDITED = CODE.replace(b"area", b"surface")


def generate(engine, prediction=None, mode=OFF, params=GREEDY):
    answer = run_reply(engine, [{"role": "user", "content": "rename"}], params, mode,
                       prediction=prediction)
    return answer.pieces, answer.done


@pytest.mark.parametrize("mode", [OFF, NGRAM, AUTO], ids=str)
def test_a_prediction_drafts_the_unchanged_parts_and_changes_no_token(mode):
    engine = Engine(FakeChatModel(lambda prompt: EDITED), cost_source=scripted_costs)
    _, plain = generate(engine, mode=OFF)
    pieces, done = generate(engine, prediction=CODE.decode(), mode=mode)
    assert done.text == plain.text == EDITED.decode()
    stats = done.stats
    assert stats.prediction_accepted > len(EDITED) // 2
    assert stats.prediction_drafted > stats.prediction_accepted  # the edits were rejected
    assert stats.target_passes < plain.stats.target_passes / 2
    assert any(p.source == "draft" for p in pieces)


def test_a_sampled_reply_with_a_prediction_is_the_seeded_plain_one_when_the_model_is_sure():
    # Confident model: sampling picks the scripted byte; the prediction only saves passes.
    engine = Engine(FakeChatModel(lambda prompt: EDITED, noise=0.5), cost_source=scripted_costs)
    sampled = SamplingParams(temperature=0.7, top_p=0.9, seed=4, max_tokens=200)
    _, plain = generate(engine, params=sampled)
    _, predicted = generate(engine, prediction=CODE.decode(), params=sampled)
    assert predicted.text == plain.text == EDITED.decode()
    assert predicted.stats.prediction_accepted > 0


# --- sampled: a prediction's drafts keep the target's distribution ---------------------------

def prediction_drafter():
    from tests.support.lossless import NGRAM_PROMPT
    # Likely tokens in the reply's order and not: long matches, many accepted, many rejected.
    return PredictionDrafter([2, 3, 2, 2, 4, 2, 2, 2, 3, 2] * 3, start=len(NGRAM_PROMPT),
                             draft_tokens=6)


def test_a_prediction_keeps_the_sampled_target_distribution_at_every_position():
    from tests.support.lossless import NGRAM_PROMPT, emitted, worst_position
    drafters = []

    def make():
        drafters.append(prediction_drafter())
        return drafters[-1]

    tokens = emitted(make, NGRAM_PROMPT, trials=2_000)
    assert worst_position(tokens) < 1.0
    # It drafted, and drafts were both accepted and rejected: the check saw both branches.
    drafted, accepted = sum(d.drafted for d in drafters), sum(d.accepted for d in drafters)
    assert drafted > 2_000 and 0.2 < accepted / drafted < 0.8


def test_the_check_catches_a_prediction_step_that_keeps_the_rejected_token():
    """Negative control: the same check, with a correction drawn from p itself after a
    rejected prediction token instead of from p without it."""
    from tests.support.lossless import EXPECTED, NGRAM_PROMPT, emitted, worst_position
    from draftlight.engine.core.sampling import sample
    from draftlight.engine.step.speculative import speculative_step

    def step_without_residual(target, drafter, last, gamma, params, rng):
        step = speculative_step(target, drafter, last, gamma, params, rng)
        if len(step.accepted) < step.drafted:
            step.token = sample(EXPECTED, rng)
        return step

    tokens = emitted(prediction_drafter, NGRAM_PROMPT, trials=2_000,
                     step_fn=step_without_residual)
    assert worst_position(tokens) > 1.0
