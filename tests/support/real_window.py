"""Fixtures for tests that open the window on real models (import them by name), and a
send_and_wait with a real model's prompt and patience.

Loading a model for the window also times it for auto mode (in the window's engine host, a
child process); the timings are cached per model file in the cache folder, which each test has
to itself. `shared_cost_cache` keeps one cache
for the whole session, so each model is timed once rather than once per test.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from tests.support.window import send_and_wait

# Greedy SmolLM2 repeats itself on this prompt, so n-gram lookup gets long accepted runs.
REPEATING_PROMPT = ("Repeat this line three times: the cat sat on the mat, the dog sat on the "
                    "log.")


@pytest.fixture(scope="session")
def cost_cache_file(tmp_path_factory):
    return tmp_path_factory.mktemp("costs") / "batch_costs.json"


@pytest.fixture
def shared_cost_cache(cost_cache_file, monkeypatch):
    """By the environment, which the window's engine host inherits."""
    from draftlight.engine.core import disk_cache
    monkeypatch.setenv(disk_cache.FILE_VARIABLE, str(cost_cache_file))
    return cost_cache_file


@contextmanager
def window_opener(qtbot):
    """open_(settings, history=None, factory=None) -> a shown MainWindow with its own history
    file (on the real engine unless a factory is given); on leaving, every window is closed,
    its engine thread joined and its history closed."""
    from draftlight.store.history import History
    from draftlight.ui.chat.main_window import MainWindow
    opened = []

    def open_(settings, history=None, factory=None):
        history = history or History()
        window = MainWindow(settings, history, factory=factory)
        qtbot.addWidget(window)
        window.show()
        opened.append((window, history))
        return window

    yield open_
    for window, history in opened:
        window.close()
        assert not window.engine.thread.isRunning()
        history.close()


@pytest.fixture
def real_window(qtbot, shared_cost_cache):
    """open_(settings, history=None) -> a shown MainWindow on the real engine."""
    with window_opener(qtbot) as open_:
        yield open_


def send_and_wait_real(qtbot, window, text=REPEATING_PROMPT, timeout=120_000):
    """send_and_wait for a window on a real model: a slower reply, to the repeating prompt
    unless told otherwise."""
    return send_and_wait(qtbot, window, text, timeout)
