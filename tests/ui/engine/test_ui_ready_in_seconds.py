"""Ready in seconds (issue 54, item 1), in the window on the real bundled model and a fresh home:
the shipped file answers at once while its faster copy is made and the models are measured in
the background; a message sent meanwhile goes first, and the window then runs on the copy."""

from __future__ import annotations

import json

import pytest

from draftlight import paths
from draftlight.settings import load_settings
from draftlight.store.default_model import DEFAULT_TYPE
from draftlight.ui.engine.loaded import Measuring
from tests.support.real_window import window_opener
from tests.support.waiting import wait_until, window_state
from tests.support.window import send_and_wait

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow


def test_a_fresh_home_answers_first_and_measures_in_the_background(qtbot, bundled_model):
    with window_opener(qtbot) as open_window:
        window = open_window(load_settings()[0])
        steps: list[str] = []
        window.engine.worker.load_event.connect(
            lambda event: steps.append(event.words) if isinstance(event, Measuring) else None)
        titles: list[str] = []
        window.models.loaded.connect(titles.append)
        wait_until(qtbot, lambda: window.ready, "the bundled model to load", 60_000,
                   lambda: window_state(window))
        assert window.models.target_name == bundled_model.name  # the shipped file, at once
        sent_while = list(steps)
        view = send_and_wait(qtbot, window, "Say hello.", timeout=60_000)
        assert view.text.strip()
        answered_at = len(steps)
        wait_until(qtbot, lambda: steps and steps[-1] == "" and not window.models.measuring
                   and window.models.target_name.endswith(f"{DEFAULT_TYPE}.gguf")
                   and "timing passes of 1-16 tokens" in steps, "the background steps", 120_000,
                   lambda: f"steps {steps}, {window_state(window)}")
        # the reply did not wait for them: they were still to come when it ended
        assert "timing passes of 1-16 tokens" in steps[answered_at:], (sent_while, steps)
        assert any(step.startswith(f"making the faster {DEFAULT_TYPE} copy") for step in steps)
        assert titles[-1].endswith(f"{DEFAULT_TYPE}.gguf")
        costs = json.loads((paths.cache_dir() / "batch_costs.json").read_text())
        assert len(costs) >= 2  # the copy's cost curve and its v(8), kept for the next start
        # the next message runs on the copy, measured: still a reply
        assert send_and_wait(qtbot, window, "Say hello again.", timeout=60_000).text.strip()
