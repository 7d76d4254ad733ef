"""A finished reply's figures as the window keeps them (ReplyFigures): typed in the window,
JSON only in the history; what comes back from there damaged is left out, not trusted."""

from __future__ import annotations

import json

from draftlight.engine.reply.events import Stats
from draftlight.ui.flash.reply_figures import Compared, ReplyFigures
from draftlight.ui.flash.run_origin import RunOrigin
from draftlight.modes import AUTO, NGRAM

FIGURES = ReplyFigures(
    Stats(new_tokens=6, target_passes=3, drafted=4, accepted=3, seconds=0.5, mode=AUTO,
          stop_reason="eos", undrafted={"no-match": 1}),
    passes=((5, 1, 0, 0), (12, 3, 2, 3), (19, 2, 1, 1)), passes_why=("no-match", "", ""),
    origins=(RunOrigin("message", message=0, start=3, end=9, role="user", at=0), None),
    prediction_from="greet.py", prediction_file=True,
    compared=Compared("auto", 1.42, 1.3, 1.55, 3, True, ""))


def test_the_history_gives_back_what_it_was_given():
    stored = json.loads(json.dumps(FIGURES.record()))  # as SQLite keeps it
    assert ReplyFigures.from_record(stored) == FIGURES
    assert stored["auto_note"] == FIGURES.stats.auto_note  # for readers of the JSON alone


def test_damaged_figures_are_left_out_and_a_users_message_has_none():
    stored = FIGURES.record()
    damaged = {**stored, "new_tokens": "six", "accepted": True, "seconds": [1],
               "passes": [[5, 1, 0]], "origins": "everywhere", "compared": {"speedup": "x"},
               "prediction_from": 7}
    figures = ReplyFigures.from_record(damaged)
    assert figures.stats.new_tokens == 0 and figures.stats.accepted == 0
    assert figures.stats.seconds == 0.0 and figures.stats.mode == AUTO
    assert figures.passes is None and figures.origins is None and figures.compared is None
    assert figures.prediction_from == "" and figures.prediction_file
    assert ReplyFigures.from_record({"attachments": [{"name": "a.txt"}]}) is None
    assert ReplyFigures.from_record("garbage") is None and ReplyFigures.from_record(None) is None


def test_a_continued_reply_adds_both_parts_and_keeps_what_drafted_the_first():
    later = ReplyFigures(Stats(new_tokens=4, target_passes=2, drafted=2, accepted=1, seconds=0.25,
                               mode=NGRAM, stop_reason="max_tokens"),
                         passes=FIGURES.passes + ((25, 2, 1, 2),), passes_why=("", "", "", ""),
                         origins=(None, None, None))
    whole = FIGURES.continued_by(later)
    assert (whole.stats.new_tokens, whole.stats.accepted, whole.stats.seconds) == (10, 4, 0.75)
    assert whole.stats.mode == NGRAM and whole.stats.stop_reason == "max_tokens"
    assert whole.passes == later.passes and whole.origins == later.origins
    assert (whole.prediction_from, whole.prediction_file) == ("greet.py", True)
    assert whole.compared == FIGURES.compared
