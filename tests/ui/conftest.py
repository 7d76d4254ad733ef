"""Fixtures shared by the window's tests: the window on a scripted engine, and the model
picker's dialog."""

from __future__ import annotations

import pytest

from tests.support.waiting import wait_until, window_state


@pytest.fixture
def open_window(qtbot):
    """open_(factory=None, settings=None, wait=True) -> a shown MainWindow on a scripted engine
    (a ScriptedFactory() unless `factory` is given; scripted=False passes `factory` as it is,
    None being the app's own engines), on load_settings() unless `settings` are given; waits
    until it is ready unless wait=False. See window_opener in tests/support/real_window.py."""
    from draftlight.settings import load_settings
    from tests.support.real_window import window_opener
    from tests.support.scripted_engine import ScriptedFactory

    with window_opener(qtbot) as opener:
        def open_(factory=None, settings=None, wait=True, scripted=True):
            if scripted:
                factory = factory or ScriptedFactory()
            window = opener(settings or load_settings()[0], factory=factory)
            if wait:
                wait_until(qtbot, lambda: window.ready, "the models to load", 10_000,
                           lambda: window_state(window))
            return window

        yield open_


@pytest.fixture
def make_dialog(qtbot):
    """make(url, **kwargs) -> a PickerDialog on the hub at `url`, with a download queue of its
    own; afterwards each queue is closed and each dialog done, its requests finished."""
    from draftlight.store.download_queue import DownloadQueue
    from draftlight.store.hub import HubClient
    from draftlight.ui.picker.dialog import PickerDialog
    made = []

    def make(url, **kwargs):
        queue = DownloadQueue()
        dialog = PickerDialog(None, hub=HubClient(url), queue=queue, **kwargs)
        qtbot.addWidget(dialog)
        made.append((dialog, queue))
        return dialog

    yield make
    for dialog, queue in made:
        queue.close()
        dialog.done(0)
        # its hub and disk calls end inside this test, whose DRAFTLIGHT_HOME they use
        dialog._requests.shutdown(wait=True)
