"""The flash, measured in pixels: a run arrives in the flash colour and fades to its resting
tint; with the flash or the highlights off no intermediate colour ever shows. The scripted
engine (tests/support/scripted_engine.py) stands in for llama.cpp; the flash driver's clock is
set by the test, so each frame is grabbed at a known age of the run."""

from __future__ import annotations

import threading


import pytest

from PySide6.QtGui import QColor

from draftlight.settings import Settings
from draftlight.ui.flash.driver import DURATION
from draftlight.ui.flash.palette import DEFAULT
from tests.support.pixels import FakeClock, distance, plain_background, run_background
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import TickRecorder, send_and_wait
from tests.support.waiting import scaled

SETTLED = DURATION + 0.5


def frame_at(window, clock: FakeClock, age: float, born: float, view, index=0) -> QColor:
    clock.now = born + age
    window.chat.flasher.tick()
    return run_background(view, index)


def open_with_clock(open_window, settings=None):
    window = open_window(ScriptedFactory(), settings=settings)
    clock = FakeClock()
    window.chat.flasher.clock = clock
    return window, clock


def test_a_run_arrives_in_the_flash_colour_and_fades_to_its_tint(qtbot, open_window):
    window, clock = open_with_clock(open_window)
    born = clock.now
    view = send_and_wait(qtbot, window)  # the whole reply arrives at `born`
    flash = DEFAULT.flash_colour()
    arrived = frame_at(window, clock, 0.0, born, view)
    middle = frame_at(window, clock, DURATION / 2, born, view)
    last = frame_at(window, clock, DURATION - 0.02, born, view)
    settled = frame_at(window, clock, SETTLED, born, view)
    plain = plain_background(view)
    assert distance(last, settled) <= 6  # the fade ends on the tint: no jump
    assert distance(arrived, flash) <= 8, (arrived.name(), flash.name())
    assert distance(settled, flash) > 60
    assert distance(settled, plain) > 20  # the resting tint stays
    # Mid-fade: neither the flash nor the rest, somewhere between them.
    assert distance(middle, arrived) > 20 and distance(middle, settled) > 20
    for a, m, s in zip(arrived.getRgb()[:3], middle.getRgb()[:3], settled.getRgb()[:3]):
        assert min(a, s) - 2 <= m <= max(a, s) + 2
    assert not window.chat.flasher.active  # the timer stops when nothing fades
    # The stored text and runs are what arrived, untouched by the overlay.
    stored = window.history.messages(window.session.conversation_id)[-1]
    assert stored.text == view.text == "Hello world! Bye." and stored.runs == view.runs


def test_the_resting_tint_is_the_same_with_and_without_the_flash(qtbot, open_window):
    window, clock = open_with_clock(open_window, Settings(flash_drafts=False))
    born = clock.now
    view = send_and_wait(qtbot, window)
    frames = [frame_at(window, clock, age, born, view) for age in (0.0, DURATION / 2, SETTLED)]
    # Flash off: the run shows its resting tint from the first frame, no intermediate colour.
    assert all(distance(frame, frames[-1]) <= 2 for frame in frames)
    assert distance(frames[0], plain_background(view)) > 20
    assert window.chat.flasher.ticks == 3 and not window.chat.flasher.active


def test_with_highlights_off_there_is_no_flash_either(qtbot, open_window):
    window, clock = open_with_clock(open_window, Settings(show_highlights=False))
    born = clock.now
    view = send_and_wait(qtbot, window)
    plain = plain_background(view)
    for age in (0.0, DURATION / 2, SETTLED):
        assert distance(frame_at(window, clock, age, born, view), plain) <= 2


def test_a_run_flashes_while_the_reply_is_still_streaming(qtbot, open_window):
    # The run arrives, then the target thinks for a while: the flash shows mid-reply.
    script = [("Hello", "target", 0), (" wor", "draft", 1), ("ld", "draft", 1),
              ("!", "target", 1)] + [(" x", "target", i) for i in range(2, 40)]
    factory = ScriptedFactory(script, delay=0.02)
    window = open_window(factory)
    clock = FakeClock()
    window.chat.flasher.clock = clock
    window.send("go")
    view = window.chat.messages[-1]
    qtbot.waitUntil(lambda: len(view.text) > 14, timeout=5000)
    assert view.streaming
    born = clock.now
    assert distance(frame_at(window, clock, 0.0, born, view), DEFAULT.flash_colour()) <= 8
    middle = frame_at(window, clock, DURATION / 2, born, view)
    settled = frame_at(window, clock, SETTLED, born, view)
    assert distance(middle, settled) > 20 and distance(middle, DEFAULT.flash_colour()) > 20
    with qtbot.waitSignal(window.session.reply_finished, timeout=10_000):
        pass


@pytest.mark.parametrize("flash", [True, False])
def test_gui_stays_responsive_with_flashes_running_during_a_3000_token_burst(qtbot, open_window,
                                                                            flash):
    script = [(f" w{i}", "draft" if i % 3 else "target", i // 3) for i in range(3000)]
    window = open_window(ScriptedFactory(script, delay=0.0005),
                         settings=Settings(flash_drafts=flash))
    ticks = TickRecorder()
    try:
        ticks.longest = 0.0
        window.send("go")
        if flash:
            qtbot.waitUntil(lambda: window.chat.flasher.active, timeout=5000)
        with qtbot.waitSignal(window.session.reply_finished, timeout=60_000):
            pass
        streamed = ticks.longest
        print(f"longest GUI stall while streaming with flashes: {streamed * 1000:.0f} ms, "
              f"flash ticks {window.chat.flasher.ticks}")
        assert (window.chat.flasher.ticks > 5) == flash
        assert streamed < scaled(400) / 1000
    finally:
        ticks.stop()
    assert threading.active_count() >= 1
