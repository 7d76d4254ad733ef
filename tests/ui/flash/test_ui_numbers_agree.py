"""One source of truth (issue 36, item 2): on the real bundled model, in every mode and after
Regenerate, the footer is the stored statistics' line and the acceptance strip's cells add up to
the same statistics; plain decoding makes one token per pass."""

from __future__ import annotations

import pytest

from draftlight.engine.reply.events import Stats
from draftlight.settings import Settings
from draftlight.ui.flash.stats_text import footer_line
from draftlight.ui.chat.welcome_card import DEMO_PROMPT
from tests.support.real_window import (cost_cache_file, real_window,  # noqa: F401
                                       send_and_wait_real, shared_cost_cache)
from tests.support.waiting import wait_until, window_state
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow


def assert_agree(view) -> Stats:
    stats = view.figures.stats
    assert view.footer.text().startswith(
        footer_line(stats, prediction_from=view.figures.prediction_from or None,
                    copied=view.run_origins.summary()))
    cells = view.strip.passes
    # (a last pass that also made the end token counts it, as the footer's tokens/pass does)
    assert sum(p.tokens for p in cells) == stats.new_tokens + sum(p.ends for p in cells), cells
    assert sum(p.accepted for p in cells) == stats.accepted, cells
    assert sum(p.drafted for p in cells) == stats.drafted, cells
    assert len(cells) <= stats.target_passes
    # The coloured text is the accepted text: as many runs' tokens as the footer's accepted.
    assert sum(run[2] for run in view.runs) == stats.accepted
    return stats


def test_footer_strip_and_stats_agree_in_every_mode_and_after_regenerate(qtbot, bundled_model,
                                                                        real_window):
    # The bundled model drafts for itself: draft mode too (its drafts are always right).
    window = real_window(Settings(max_tokens=60, draft_path=str(bundled_model)))
    wait_until(qtbot, lambda: bool(window.ready and window.draft_name), "the models to load",
               60_000, lambda: window_state(window))
    seen = {}
    for mode in (OFF, NGRAM, DRAFT, AUTO):
        window.set_mode(mode)
        view = send_and_wait_real(qtbot, window, DEMO_PROMPT)
        seen[mode] = assert_agree(view)
        assert seen[mode].mode == mode
    plain = seen[OFF]
    assert plain.drafted == 0 and f"{plain.mean_accepted_length:.2f}" == "1.00"
    assert seen[NGRAM].accepted > 0 and seen[DRAFT].accepted > 0
    with qtbot.waitSignal(window.session.reply_finished, timeout=120_000):
        window.regenerate()
    again = assert_agree(window.chat.messages[-1])
    assert again.mode == AUTO and again.new_tokens == seen[AUTO].new_tokens


def test_a_greedy_retry_repeats_the_answer_drafted_by_it(qtbot, bundled_model, real_window):
    # issue 40, part 2, on the real model: Regenerate's new answer is the old one (greedy), and
    # the old one, sent as the Predicted Output, drafts most of it; the numbers still agree.
    window = real_window(Settings(max_tokens=48, mode=NGRAM))
    wait_until(qtbot, lambda: window.ready, "the model to load", 60_000,
               lambda: window_state(window))
    first = send_and_wait_real(qtbot, window, "Name three rivers in Europe and one fact about "
                                              "each.")
    text = first.text
    with qtbot.waitSignal(window.session.reply_finished, timeout=120_000):
        window.regenerate()
    again = window.chat.messages[-1]
    assert again.text == text
    stats = assert_agree(again)
    assert stats.prediction_accepted >= 0.6 * stats.new_tokens, stats
    # The footer counts the tokens of the runs whose hover names the earlier answer (issue 75).
    predicted = [i for i in range(len(again.runs))
                 if getattr(again.run_origins.origin(i), "kind", None) == "prediction"]
    assert predicted
    told = sum(again.runs[i][2] for i in predicted)
    words = "copied from your earlier answer (version 1)"
    assert (f", {told} of them {words}" in again.footer.text()  # the largest share
            or f", {told} {words}" in again.footer.text())  # after the largest
    assert again.run_origins.tip(predicted[0]) == words
