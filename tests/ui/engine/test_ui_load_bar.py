"""The load bar says what loads (issue 75, point 8a): while a model loads, the status bar's bar
names the model and what is happening, busy or counting ("Loading default-model.gguf… 45%"),
from the load's steps; at 800x600 it has the room to say it. Scripted engine."""

from __future__ import annotations

from tests.support.scripted_engine import HeldLoadFactory


class HalfLoadedFactory(HeldLoadFactory):
    """A load that reports 45% (as llama.cpp's progress callback does), then waits."""

    def load_engine(self, spec, *, on_progress=None, **options):
        if on_progress is not None:
            on_progress(0.45)
        return super().load_engine(spec, **options)


def test_a_busy_load_bar_names_what_loads(qtbot, open_window):
    """llama.cpp's load reports no figures at first: Qt's busy bar shows no text of its own."""
    factory = HeldLoadFactory()
    window = open_window(factory, wait=False)
    window.resize(800, 600)
    try:
        qtbot.waitUntil(lambda: window.progress.isVisible() and window.models.steps.running,
                        timeout=5000)
        assert window.progress.maximum() == 0  # busy
        assert window.progress.text().startswith("Loading default-model.gguf…")
    finally:
        factory.release()
    qtbot.waitUntil(lambda: window.ready and not window.loading, timeout=10_000)
    assert window.progress.isHidden()


def test_the_load_bar_gives_the_percentage_with_the_name_at_800x600(qtbot, open_window):
    factory = HalfLoadedFactory()
    window = open_window(factory, wait=False)
    window.resize(800, 600)
    try:
        qtbot.waitUntil(lambda: window.progress.value() == 45, timeout=5000)
        qtbot.wait(50)
        text = window.progress.text()
        # the name whole (the bar has the room), then the figure; " (2 s)" once a second passed
        assert text.startswith("Loading default-model.gguf… 45%"), text
        assert window.progress.toolTip().startswith("Loading default-model.gguf…")
        bar = window.progress
        assert bar.fontMetrics().horizontalAdvance(text) <= bar.width()
        assert bar.mapTo(window, bar.rect().bottomRight()).x() <= window.width()
    finally:
        factory.release()
    qtbot.waitUntil(lambda: window.ready and not window.loading, timeout=10_000)
    assert window.progress.isHidden() and window.status_label.isVisible()


def test_a_narrow_bar_cuts_the_words_and_keeps_the_figure(qtbot):
    """A name longer than the bar is cut with "…" to its width, not wrapped onto a second line
    the bar's height cuts off, and its percentage stays; the tooltip has the words whole."""
    from draftlight.ui.engine.load_bar import LoadBar
    bar = LoadBar()
    qtbot.addWidget(bar)
    whole = "Loading ollama:qwen2.5-coder:1.5b (1.1 GB of weights)…"
    bar.show_step(whole)
    bar.show_percent(40)
    bar.resize(160, 22)
    text = bar.text()
    assert text.startswith("Loading ol") and text.endswith("… 40%") and whole not in text, text
    assert bar.fontMetrics().horizontalAdvance(text) <= 160
    assert bar.toolTip() == whole
    bar.resize(300, 22)
    bar.show_step("Loading a.gguf…", seconds=12)
    bar.show_percent(-1)  # busy again: the words and the time still show
    assert bar.maximum() == 0 and bar.text() == "Loading a.gguf… (12 s)"
