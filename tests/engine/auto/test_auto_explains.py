"""Auto says why it drafted little or nothing (issue 54, part 3): each step that drafts nothing
has a reason (no match; a match too short to pay; checking costs too much right now), a reply
counts them, and its note says why in measured terms and what would pay."""

from __future__ import annotations

import numpy as np

from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.engine.reply.events import Stats
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.sampling import SamplingParams
from tests.support.fake_backend import FakeChatModel, busy_costs
from tests.support.fake_engine import run
from draftlight.modes import AUTO, NGRAM, OFF

CPU_LIKE = BatchCosts({1: 1.0, 2: 1.6, 3: 2.1, 4: 2.7, 5: 3.2, 8: 4.3, 16: 8.6}, 0.015)
BUSY, _ = busy_costs(None, None, "target")
GREEDY = SamplingParams(temperature=0.0)
RNG = np.random.default_rng(0)


def test_a_step_without_any_match_says_no_match():
    auto = AdaptiveDrafter(CPU_LIKE, [Candidate(NgramDrafter(), 0.0, 16)])
    assert auto.propose([5, 6, 7, 8, 9], 8, GREEDY, RNG).tokens == []
    assert auto.why_nothing == "no-match"


def test_a_match_that_does_not_pay_says_too_short_and_one_that_drafts_says_nothing():
    auto = AdaptiveDrafter(CPU_LIKE, [Candidate(NgramDrafter(), 0.0, 16)])
    ngram = auto.candidates[0]
    for _ in range(40):  # its guesses have kept failing at once
        ngram.model.record(0, rejected=True)
    context = [1, 2, 3, 4, 9, 9, 1, 2, 3]
    assert auto.propose(context, 8, GREEDY, RNG).tokens == []
    assert auto.why_nothing == "too-short"
    for _ in range(40):  # then long runs of right guesses: copying
        ngram.model.record(16, rejected=False)
    assert auto.propose(context, 8, GREEDY, RNG).tokens
    assert auto.why_nothing == ""


def test_passes_too_dear_to_draft_say_so():
    auto = AdaptiveDrafter(BUSY, [Candidate(NgramDrafter(), 0.0, 16)])
    assert auto.propose([1, 2, 3, 4, 9, 1, 2, 3], 8, GREEDY, RNG).tokens == []
    assert auto.why_nothing == "costly"


def test_a_reply_auto_drafted_nothing_in_says_why_with_the_measured_cost():
    answer = b"The quick brown fox jumps over the lazy dog."
    engine = Engine(FakeChatModel(lambda conversation: answer), cost_source=busy_costs)
    messages = [{"role": "user", "content": "Say the motto."},
                {"role": "assistant", "content": answer.decode()},
                {"role": "user", "content": "Again, please."}]  # copyable, were it not so dear
    _, done = run(engine, messages, SamplingParams(temperature=0.0, max_tokens=30), AUTO)
    stats = done.stats
    assert stats.drafted == 0 and stats.undrafted == {"costly": stats.target_passes}
    assert stats.pass_cost_2 == BUSY(2)
    assert stats.auto_note.startswith("Auto drafted nothing: checking 2 tokens costs 2.6x one "
                                      "on this machine now")
    assert "try N-gram" in stats.auto_note
    assert stats.to_dict()["auto_note"] == stats.auto_note
    _, ngram = run(engine, messages, SamplingParams(temperature=0.0, max_tokens=30), NGRAM)
    assert ngram.text == done.text and ngram.stats.auto_note == ""  # n-gram mode: no note


def test_the_note_names_each_reason_and_is_silent_where_auto_drafted_enough():
    quiet = Stats(mode=AUTO, new_tokens=40, target_passes=40, undrafted={"no-match": 40})
    assert quiet.auto_note == ("Auto drafted nothing: nothing in this conversation was worth "
                               "copying. Attach the file you are asking about, or try N-gram.")
    short = Stats(mode=AUTO, new_tokens=40, target_passes=38, drafted=3, accepted=2,
                  undrafted={"too-short": 30, "no-match": 5})
    assert short.auto_note.startswith("Auto drafted little (2 of 40 tokens): the matches it "
                                      "found were too short to pay, and nothing")
    before_timing = Stats(mode=AUTO, new_tokens=40, target_passes=40, untimed=True,
                          undrafted={"too-short": 40})
    assert before_timing.auto_note == (
        "Auto drafted nothing: the matches it found were too short to pay. It is still timing "
        "this machine's passes (once, in the background) and until then drafts only copies it "
        "is nearly sure of. Attach the file you are asking about, or try N-gram.")
    enough = Stats(mode=AUTO, new_tokens=40, target_passes=20, drafted=25, accepted=20)
    assert enough.auto_note == ""
    assert Stats(mode=OFF, new_tokens=40, target_passes=40).auto_note == ""
