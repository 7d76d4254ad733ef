"""Auto says why it drafted little or nothing (issue 54, part 3): each step that drafts nothing
has a reason (nothing to copy; a copy not sure enough to pay; checking costs too much right
now), a reply counts them, and its note says why in measured terms, only where there was
something to copy (issue 74)."""

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
    context = [1, 2, 3, 4, 5, 6, 9, 9, 1, 2, 3, 4]  # a 4-token match: a copy
    assert auto.propose(context, 8, GREEDY, RNG).tokens == []
    assert auto.why_nothing == "too-short"
    assert auto.propose([1, 2, 3, 4, 9, 9, 2, 3], 8, GREEDY, RNG).tokens == []
    assert auto.why_nothing == "no-match"  # a 2-token match is no copy to speak of
    for _ in range(40):  # then long runs of right guesses: copying
        ngram.model.record(16, rejected=False)
    assert auto.propose(context, 8, GREEDY, RNG).tokens
    assert auto.why_nothing == ""


def test_passes_too_dear_to_draft_say_so():
    auto = AdaptiveDrafter(BUSY, [Candidate(NgramDrafter(), 0.0, 16)])
    assert auto.propose([1, 2, 3, 4, 5, 9, 1, 2, 3, 4], 8, GREEDY, RNG).tokens == []
    assert auto.why_nothing == "costly"
    assert auto.propose([1, 2, 3, 4, 5, 9, 7, 8], 8, GREEDY, RNG).tokens == []
    assert auto.why_nothing == "no-match"  # priced out, and nothing to copy either


def test_a_reply_auto_drafted_nothing_in_says_why_with_the_measured_cost():
    answer = b"The quick brown fox jumps over the lazy dog."
    engine = Engine(FakeChatModel(lambda conversation: answer), cost_source=busy_costs)
    messages = [{"role": "user", "content": "Say the motto."},
                {"role": "assistant", "content": answer.decode()},
                {"role": "user", "content": "Again, please."}]  # copyable, were it not so dear
    _, done = run(engine, messages, SamplingParams(temperature=0.0, max_tokens=30), AUTO)
    stats = done.stats
    assert stats.drafted == 0 and stats.undrafted.get("costly", 0) >= stats.target_passes // 2
    assert stats.pass_cost_2 == BUSY(2) and stats.pass_cost_8 == BUSY(8)
    assert stats.auto_note.startswith(
        "Auto drafted nothing: it found text to copy, but checking it costs more than it "
        f"saves on this machine (checking 8 tokens costs {BUSY(8):.1f}x one)")
    assert "N-gram drafts it anyway" in stats.auto_note
    assert stats.to_dict()["auto_note"] == stats.auto_note
    _, ngram = run(engine, messages, SamplingParams(temperature=0.0, max_tokens=30), NGRAM)
    assert ngram.text == done.text and ngram.stats.auto_note == ""  # n-gram mode: no note


def test_a_first_message_with_nothing_to_copy_gets_no_note_even_where_passes_are_dear():
    """Issue 74: "Name three primary colours." drafts nothing and is right to: no note; steps
    without a guess say "no-match", not "costly", even where every draft is priced out."""
    engine = Engine(FakeChatModel(lambda conversation: b"Red, yellow, blue."),
                    cost_source=busy_costs)
    _, done = run(engine, [{"role": "user", "content": "Name three primary colours."}],
                  SamplingParams(temperature=0.0, max_tokens=30), AUTO)
    assert done.stats.drafted == 0 and done.stats.undrafted.get("costly", 0) == 0
    assert done.stats.auto_note == ""


def test_an_attached_text_the_reply_did_not_copy_is_never_called_nothing_worth_copying():
    attached = "report.md\n" + "The harvest came in early this year. " * 20
    engine = Engine(FakeChatModel(lambda conversation: b"Mostly weather, fruit."),
                    cost_source=busy_costs)
    _, done = run(engine, [{"role": "user", "content": attached + "\nWhat is it about?"}],
                  SamplingParams(temperature=0.0, max_tokens=30), AUTO)
    assert done.stats.copy_source == "long message" and done.stats.drafted == 0
    note = done.stats.auto_note
    assert note and "worth copying" not in note and "Attach" not in note
    assert "did not repeat the attached or pasted text" in note


def test_the_note_names_each_reason_and_is_silent_where_auto_drafted_enough():
    quiet = Stats(mode=AUTO, new_tokens=40, target_passes=40, undrafted={"no-match": 40})
    assert quiet.auto_note == ""  # nothing to copy, nothing given to copy: plain was right
    given = Stats(mode=AUTO, new_tokens=40, target_passes=40, undrafted={"no-match": 40},
                  copy_source="prediction")
    assert given.auto_note == ("Auto drafted nothing: the reply did not repeat the text it was "
                               "given to edit or retry.")
    short = Stats(mode=AUTO, new_tokens=40, target_passes=38, drafted=3, accepted=2,
                  undrafted={"too-short": 30, "no-match": 5}, pass_cost_2=1.9, pass_cost_8=6.9)
    assert short.auto_note.startswith(
        "Auto drafted little (2 of 40 tokens): it found text to copy, but checking it costs "
        "more than it saves on this machine (checking 8 tokens costs 6.9x one).")
    before_timing = Stats(mode=AUTO, new_tokens=40, target_passes=40, untimed=True,
                          undrafted={"too-short": 40})
    assert before_timing.auto_note == (
        "Auto drafted nothing: it found text to copy, but checking it costs more than it saves "
        "on this machine. It is still timing this machine's passes (once, in the background) "
        "and until then drafts only copies it is nearly sure of. N-gram drafts it anyway, "
        "whatever it costs.")
    enough = Stats(mode=AUTO, new_tokens=40, target_passes=20, drafted=25, accepted=20)
    assert enough.auto_note == ""
    assert Stats(mode=OFF, new_tokens=40, target_passes=40).auto_note == ""


def test_a_mode_slower_than_plain_says_why_in_its_footer():
    """N-gram at 5 tokens a pass and still slower than plain (issue 74): the figures say why,
    against this reply's own undrafted passes; a faster one, or one within noise, says nothing."""
    slow = Stats(mode=NGRAM, new_tokens=100, target_passes=20, drafted=80, accepted=80,
                 seconds=10.5, verify_seconds=9.0, draft_seconds=1.0,
                 single_passes=5, single_pass_seconds=0.4)  # plain: 12.5 passes a second
    assert slow.slower_note.startswith("Slower than plain decoding here (about 10.0 against "
                                       "12.5 tokens a second of passes): 80 of 80 drafted "
                                       "tokens were kept, 5.0 tokens a pass")
    assert slow.slower_note in slow.summary()
    fast = Stats(mode=NGRAM, new_tokens=100, target_passes=20, drafted=80, accepted=80,
                 seconds=5.0, verify_seconds=4.0, single_passes=5, single_pass_seconds=0.4)
    assert fast.slower_note == ""
    level = Stats(mode=NGRAM, new_tokens=100, target_passes=20, drafted=80, accepted=80,
                  seconds=9.0, verify_seconds=8.3, single_passes=5, single_pass_seconds=0.4)
    assert level.slower_note == ""  # 0.96 of plain's pace: noise
    # no undrafted passes of its own: auto's timed one-token pass stands in
    timed = Stats(mode=NGRAM, new_tokens=100, target_passes=20, drafted=80, accepted=80,
                  seconds=10.0, verify_seconds=10.0, plain_token_seconds=0.05)
    assert "against 20.0 tokens a second" in timed.slower_note
    assert Stats(mode=OFF, new_tokens=100, target_passes=100, seconds=10.0, verify_seconds=10.0,
                 plain_token_seconds=0.05).slower_note == ""
    # a short reply, or one that barely drafted, is noise: nothing said
    short = Stats(mode=AUTO, new_tokens=12, target_passes=11, drafted=2, accepted=1,
                  seconds=2.5, verify_seconds=2.46, single_passes=10, single_pass_seconds=1.9)
    assert short.slower_note == ""
    barely = Stats(mode=AUTO, new_tokens=100, target_passes=99, drafted=3, accepted=1,
                   seconds=20.0, verify_seconds=20.0, single_passes=96, single_pass_seconds=9.6)
    assert barely.slower_note == ""
