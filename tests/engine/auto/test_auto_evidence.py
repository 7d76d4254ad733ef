"""Auto sees the obvious (issue 35): after a session whose drafts failed, a reply that copies the
message being answered is drafted within its first steps, because a match in that message is
evidence of its own (acceptance.py: counts per place, priors fitted on recorded answers), not
only the drafter's streak; and what a run of misses taught rises again when guesses come right."""

from __future__ import annotations

import re

from draftlight.engine.auto.acceptance import AcceptanceModel, bucket, evidence_key
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.reply.events import Progress
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.sampling import SamplingParams

from tests.support.fake_backend import FakeWordChatModel
from tests.support.cpu_curve import CURVE, cpu_costs
from tests.support.fake_engine import run
from draftlight.modes import AUTO, NGRAM, OFF
from tests.support.replies import reply as run_reply

GREEDY = SamplingParams(temperature=0.0, max_tokens=200)
DEMO = "Repeat after me: the United States of America declared independence in 1776."
COPY = "The United States of America declared independence in 1776."
# Free writing that keeps picking up two words of the question and going elsewhere: n-gram
# lookup guesses from 2-word matches in the message being answered, and is wrong.
FREE = {
    "Tell me about the sea and the sky.": "Well, the sea is calm, the sky is clear, and the sea "
                                          "is wide and the sky grey.",
    "Write about the cat and the hat.": "So the cat sat down, the hat fell, and the cat ran off "
                                        "with the hat on.",
    "Describe the red and the blue.": "Hmm, the red glows, the blue fades, and the red wins over "
                                      "the blue again.",
    "Say something on the moon and the sun.": "Sure, the moon wanes, the sun rises, and the moon "
                                              "hides from the sun.",
}


def answer(conversation: bytes) -> bytes:
    asked = conversation.rsplit(b"<|user|>", 1)[-1].decode()
    for question, reply in FREE.items():
        if question in asked:
            return reply.encode()
    return COPY.encode() if "Repeat after me" in asked else b"Fine."


WORDS = sorted({w for text in [DEMO, COPY, *FREE, *FREE.values()]
                for w in re.findall(rb" ?[A-Za-z0-9]+|[^ A-Za-z0-9]", text.encode())}
               | {b"<|user|>", b"<|assistant|>", b"<|system|>"})


def model():
    return FakeWordChatModel(answer, WORDS)


def reply(engine, text, mode):
    _, done = run(engine, [{"role": "user", "content": text}], GREEDY, mode)
    return done


def test_after_a_session_of_failed_drafts_auto_drafts_a_copy_of_the_message_at_once():
    engine = Engine(model(), cost_source=cpu_costs)
    for question in list(FREE) * 3:  # the pessimistic corner: guesses fail, reply after reply
        done = reply(engine, question, AUTO)
        assert done.stats.accepted <= done.stats.drafted // 2
    learnt = next(c.model for c in engine.prepare_auto().candidates)
    assert learnt.p(2, "message") < 0.3  # it learnt that short matches in the message fail

    steps = passes(engine, AUTO)
    ngram = passes(Engine(model(), cost_source=cpu_costs), NGRAM)
    plain = cost(passes(Engine(model(), cost_source=cpu_costs), OFF))
    # From "The United States" on, n-gram lookup copies the message: auto drafts at the step
    # n-gram mode first does, because "The" and the message's " the" are one word, so the match
    # is 3 words long where 2-word ones failed all session (drafters.word_fold), and its reply
    # costs, in target passes priced by the curve, no more than n-gram mode's (6.88 against
    # 7.42) and far less than plain decoding's. (Measured by token ids alone auto drafted one
    # step later: 7.65 passes; before places were told apart, three steps later: 9.42.)
    assert first_draft(steps) == first_draft(ngram), (steps, ngram)
    assert cost(steps) <= cost(ngram), (steps, ngram)
    assert cost(steps) < 0.8 * plain


def passes(engine, mode) -> list[int]:
    """The tokens drafted for each target pass of the demo's reply (its text checked)."""
    answer = run_reply(engine, [{"role": "user", "content": DEMO}], GREEDY, mode)
    assert answer.done.text == COPY
    return [e.pass_drafted for e in answer.events if isinstance(e, Progress)]


def first_draft(steps: list[int]) -> int:
    return next(i for i, drafted in enumerate(steps) if drafted)


def cost(steps: list[int]) -> float:
    curve = BatchCosts(CURVE, 0.01)
    return sum(curve(drafted + 1) for drafted in steps)


def test_greedy_text_is_the_same_in_every_mode_after_the_session():
    engine = Engine(model(), cost_source=cpu_costs)
    for question in FREE:
        texts = {mode: reply(engine, question, mode).text for mode in (AUTO, NGRAM, OFF)}
        assert set(texts.values()) == {FREE[question]}


def test_what_misses_taught_rises_again_once_guesses_come_right():
    learnt = AcceptanceModel()
    prior = learnt.p(3, "reply")
    for _ in range(60):
        learnt.record(0, rejected=True, evidence=3, where="reply")
    low = learnt.p(3, "reply")
    assert low < prior / 2
    for _ in range(200):
        learnt.record(1, rejected=False, evidence=3, where="reply")
        learnt.streak = 0
    assert learnt.p(3, "reply") > max(low + 0.3, 0.6)
    # ... and each place keeps its own counts: the message's estimate was never lowered
    assert learnt.p(3, "message") == AcceptanceModel().p(3, "message")
    assert bucket(3) == bucket(4)


def test_a_guess_whose_earlier_occurrences_split_is_priced_apart_from_one_that_agree():
    """Fitted priors: after a 2-token match in the reply, occurrences that went on the same way
    are right far more often than ones that split; misses of split guesses lower only theirs."""
    learnt = AcceptanceModel()
    split, agree = evidence_key("reply", "split"), evidence_key("reply", "agree")
    assert (split, agree, evidence_key("reply", "one")) == ("reply/split", "reply/agree", "reply")
    assert evidence_key("", "split") == "" and evidence_key("prediction", "") == "prediction"
    assert learnt.p(2, split) < learnt.p(2, "reply") < learnt.p(2, agree)
    before = learnt.p(2, agree)
    for _ in range(30):
        learnt.record(0, rejected=True, evidence=2, where=split)
    assert learnt.p(2, agree) == before


def test_a_match_is_measured_in_words_so_a_copy_that_starts_a_sentence_is_seen_whole():
    """N-gram lookup finds a match by token ids and measures it in words: "The United States"
    copies the message's " the United States" (3 words, not 2); a word that differs ends it."""
    from draftlight.engine.step.drafters import NgramDrafter, word_fold

    backend = model()
    words = word_fold(backend.piece)
    message = backend.tokenize(" Repeat after me: the United States of America", add_bos=False)
    for reply, in_words, in_ids in (("The United States", 3, 2), ("A United States", 2, 2),
                                    (": the United States", 4, 4)):
        context = message + backend.tokenize(reply, add_bos=False)
        guess = NgramDrafter(fold=words).propose(context, 3)
        assert backend.piece(guess.tokens[0]) == b" of"
        assert guess.match_length == in_words, reply
        assert NgramDrafter().propose(context, 3).match_length == in_ids, reply
