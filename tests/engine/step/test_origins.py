"""Where each accepted draft came from (app/draftlight/engine/step/origins.py): every copied token's span, sliced
out of the message (or reply, or prediction) it names, is that token's own text; a draft model's
tokens carry its name and belief. The scripted chat models, then the real bundled model."""

from __future__ import annotations

import pytest

from draftlight.engine.step.drafters import DraftOrigin, ModelDrafter
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.step.origins import Origin, OriginFinder, kept_messages
from draftlight.engine.core.sampling import SamplingParams
from tests.support.fake_backend import FakeChatModel, FakeWordChatModel, scripted_costs
from draftlight.modes import DRAFT, NGRAM, OFF
from tests.support.replies import reply as run_reply

GREEDY = SamplingParams(temperature=0.0, max_tokens=400)
DOCUMENT = ("The committee approved the budget for the new library on Tuesday. Construction "
            "starts in March and the library opens next autumn with twelve reading rooms.")
CONVERSATION = [
    {"role": "system", "content": "You are brief."},
    {"role": "user", "content": "Read this: " + DOCUMENT},
    {"role": "assistant", "content": "I have read it: the library opens next autumn."},
    {"role": "user", "content": "Quote its second sentence twice."},
]
SECOND = DOCUMENT[DOCUMENT.index("Construction"):]
OWN = "Twelve quiet rooms, built by spring, open by autumn."  # only the reply says this
REPLY = f"{SECOND} In short: {OWN} Again: {OWN}"


def pieces(engine, messages, mode=NGRAM, **options):
    return run_reply(engine, messages, GREEDY, mode, **options).pieces


def check_spans(found, messages, prediction=""):
    """Every drafted piece's origin names text equal to the piece's own; returns the kinds."""
    kinds, reply = [], ""
    for piece in found:
        origin = piece.origin
        if piece.source == "draft":
            assert origin is not None, piece
            kind = origin.kind
            kinds.append(kind)
            source = {"message": lambda: messages[origin.message]["content"],
                      "reply": lambda: reply, "prediction": lambda: prediction}.get(kind)
            if source is not None:
                assert source()[origin.start:origin.end] == piece.text, (piece, origin)
        else:
            assert origin is None
        reply += piece.text
    return kinds


def test_copied_tokens_point_at_their_own_text_in_the_message_or_the_reply():
    engine = Engine(FakeChatModel(lambda prompt: REPLY.encode()), cost_source=scripted_costs)
    found = pieces(engine, CONVERSATION)
    assert "".join(p.text for p in found) == REPLY
    kinds = check_spans(found, CONVERSATION)
    assert kinds.count("message") > len(SECOND) // 2  # the first quote, from the document
    assert kinds.count("reply") > len(OWN) // 2  # the second saying, from the reply's first
    assert {p.origin.message for p in found if p.origin and p.origin.kind == "message"} <= {1, 2}


def test_messages_left_out_of_the_context_keep_their_indices():
    long = [{"role": "system", "content": "Be brief."}]
    for i in range(12):
        long += [{"role": "user", "content": f"Question {i}: " + "x" * 300},
                 {"role": "assistant", "content": "ok"}]
    long += [{"role": "user", "content": "Read this: " + DOCUMENT}]
    engine = Engine(FakeChatModel(lambda prompt: SECOND.encode(), n_ctx=2048),
                    cost_source=scripted_costs)
    found = pieces(engine, long)
    kinds = check_spans(found, long)
    assert kinds.count("message") > len(SECOND) // 2
    assert kept_messages(long, 4)[:3] == [0, 5, 6]
    assert kept_messages(long[1:], 4)[:2] == [4, 5]


def test_a_prediction_draft_points_into_the_prediction():
    engine = Engine(FakeChatModel(lambda prompt: REPLY.encode()), cost_source=scripted_costs)
    messages = [{"role": "user", "content": "Say it."}]
    found = pieces(engine, messages, OFF, prediction=REPLY)
    kinds = check_spans(found, messages, prediction=REPLY)
    assert kinds.count("prediction") > len(REPLY) // 2


def test_a_draft_model_names_itself_and_its_belief_in_each_token():
    target = FakeChatModel(lambda prompt: REPLY.encode())
    engine = Engine(target, cost_source=scripted_costs)
    engine.draft = FakeChatModel(lambda prompt: REPLY.encode())
    engine.draft.path = "/models/tiny-draft.Q8_0.gguf"
    engine.model_drafter = ModelDrafter(engine.draft, target.n_vocab)
    found = pieces(engine, [{"role": "user", "content": "Say it."}], DRAFT)
    drafted = [p.origin for p in found if p.source == "draft"]
    assert len(drafted) > len(REPLY) // 2
    assert {o.kind for o in drafted} == {"model"}
    assert {o.name for o in drafted} == {"tiny-draft.Q8_0"}
    assert all(0.0 < o.p <= 1.0 for o in drafted)


def test_a_token_across_a_message_edge_is_clipped_to_the_message():
    # Multi-byte tokens: "|>Re" starts with the template's markup and ends inside the message.
    model = FakeWordChatModel(lambda prompt: b"", [b"|>Re", b"ad this", b"<|"])
    messages = [{"role": "user", "content": "Read this"}]
    prompt = model.tokenize("<|user|>Read this", add_bos=False)
    assert [model.piece(t) for t in prompt][:4] == [b"<|", b"u", b"s", b"e"]
    edge = [model.piece(t) for t in prompt].index(b"|>Re")
    finder = OriginFinder(model.piece, messages, [0], prompt)
    crossing = finder.origin(DraftOrigin("context", edge), 0)
    assert crossing == Origin("message", message=0, start=0, end=2)
    assert crossing.record() == {"kind": "message", "message": 0, "start": 0, "end": 2}
    assert "|>Re".endswith(messages[0]["content"][0:2])  # the token's text contains the slice
    assert finder.origin(DraftOrigin("context", 0), 0).record() == {"kind": "template"}
    assert finder.origin(DraftOrigin("context", edge), 1).start == 2  # "ad this"
    assert finder.origin(None, 0) is None


@pytest.fixture(scope="module")
def bundled_engine(bundled_model, module_home):
    engine = Engine.load(bundled_model, None, LoadOptions(n_ctx=1024))
    yield engine
    engine.close()


def test_on_the_real_model_a_repeated_phrase_is_copied_from_the_users_message(bundled_engine):
    phrase = "the United States of America declared independence in 1776"
    messages = [{"role": "user", "content": f"Repeat after me: {phrase}."}]
    found = run_reply(bundled_engine, messages, SamplingParams(temperature=0.0, max_tokens=40),
                      NGRAM).pieces
    kinds = check_spans(found, messages)
    assert kinds.count("message") >= 4, "".join(p.text for p in found)
    copied = [p.origin for p in found if p.origin and p.origin.kind == "message"]
    assert all(o.message == 0 and o.start >= messages[0]["content"].index(phrase[:3])
               for o in copied)
