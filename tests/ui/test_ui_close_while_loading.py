"""A window closed while a draft model loads (issue 37, item 2): the draft's load is asked to
stop, as the target's is, so the window closes in seconds rather than after a load of minutes.
Before the fix the draft's load was given no way to stop, and closing waited for it."""

from __future__ import annotations

import time

from draftlight.settings import Settings
from tests.support.scripted_engine import CancelledDraftFactory
from tests.support.waiting import scaled


def test_closing_while_the_draft_loads_stops_its_load(open_window, qtbot):
    factory = CancelledDraftFactory()
    window = open_window(factory, Settings(target_path="t.gguf", draft_path="d.gguf"),
                         wait=False)
    qtbot.waitUntil(factory.loading_draft.is_set, timeout=scaled(10_000))
    start = time.monotonic()
    window.close()
    assert factory.cancelled.is_set()
    assert time.monotonic() - start < scaled(5_000) / 1000
    assert not window.engine.thread.isRunning()
