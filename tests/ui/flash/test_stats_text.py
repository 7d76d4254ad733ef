"""The reply footer's words: what it says about speed and about exactness."""

from __future__ import annotations

from draftlight.engine.reply.events import Stats
from draftlight.ui.flash.stats_text import footer_line, stored_footer_line
from draftlight.modes import AUTO, DRAFT


def test_the_footer_says_when_greedy_identity_is_not_guaranteed():
    stats = Stats(new_tokens=20, target_passes=10, drafted=12, accepted=10, seconds=1.0,
                  mode=AUTO, stop_reason="eos", batch_drift=0.31)
    line = footer_line(stats)
    assert "greedy identity not guaranteed here: max logit difference 0.31" in line
    exact = stored_footer_line(Stats(new_tokens=20, target_passes=10, seconds=1.0, mode=AUTO,
                              batch_drift=0.0).to_dict())
    assert "identity" not in exact


def test_the_footer_says_when_the_draft_drafts_through_another_vocabulary():
    cross = stored_footer_line(Stats(new_tokens=20, target_passes=10, drafted=12, accepted=10,
                              seconds=1.0, mode=DRAFT, draft_kind="cross-vocabulary").to_dict())
    assert "(cross-vocabulary)" in cross
    same = stored_footer_line(Stats(new_tokens=20, target_passes=10, drafted=12, accepted=10,
                             seconds=1.0, mode=DRAFT).to_dict())
    assert "vocabulary" not in same


def test_a_damaged_comparison_in_the_history_is_left_out_of_the_footer():
    from draftlight.ui.flash.reply_figures import Compared
    from draftlight.ui.flash.stats_text import compared_line
    figures = {"new_tokens": 3, "target_passes": 3, "mode": "off"}
    for damaged in ("fast", {"speedup": "x", "low": 1, "high": 2}, {"speedup": 1.2}, None):
        assert stored_footer_line({**figures, "compared": damaged}) == stored_footer_line(
            figures)
    compared = {"speedup": 1.0, "low": 0.8, "high": 1.3, "rounds": 3, "identical": True,
                "inconclusive": "the rounds disagree"}
    assert compared_line(Compared.from_record(compared)).endswith(
        "; inconclusive: the rounds disagree")
    assert "Compared with" in stored_footer_line({**figures, "compared": compared})


def test_every_count_after_accepted_is_of_the_accepted_tokens():
    """Issue 75, point 7a: "127/132 · 72 from inventory.py … 20% of this reply was copied from
    inventory.py" mixed drafts, accepted tokens and characters; now one unit, tokens."""
    stats = Stats(new_tokens=150, target_passes=40, drafted=132, accepted=127,
                  prediction_drafted=80, prediction_accepted=72, seconds=1.0, mode=AUTO)
    line = footer_line(stats, prediction_from="inventory.py")
    assert "accepted 127 of 132 drafted tokens (96%), 72 of them copied from inventory.py" in line
    # The runs' origins, where the reply has them, say it instead (and once).
    told = footer_line(stats, prediction_from="inventory.py",
                       copied="99 of them copied from inventory.py")
    assert "(96%), 99 of them copied from inventory.py · " in told
    assert told.count("inventory.py") == 1
