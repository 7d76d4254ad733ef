"""A window closed while a draft model loads (issue 37, item 2): the draft's load is asked to
stop, as the target's is, so the window closes in seconds rather than after a load of minutes.
Before the fix the draft's load was given no way to stop, and closing waited for it."""

from __future__ import annotations

import time

from draftlight.engine.core.errors import ModelLoadError
from draftlight.settings import Settings
from draftlight.ui.engine.loaded import LoadFailed
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


class CancelledTargetFactory(CancelledDraftFactory):
    """Its target loads until the load is cancelled, as a large model loads for minutes."""

    def load_engine(self, spec, *, should_cancel=lambda: False, **options):
        self.loading_draft.set()
        while not should_cancel():
            time.sleep(0.01)
        self.cancelled.set()
        raise ModelLoadError(f"loading {spec.target_path} was cancelled")


def test_a_load_cancelled_by_closing_is_not_reported_as_failed(open_window, qtbot):
    """`draftlight --record` once failed after its GIF was written: the engine was being loaded
    again on the bundled model's faster copy when the window closed, and the cancelled load
    was told as a failure, which the run took for its own."""
    factory = CancelledTargetFactory()
    window = open_window(factory, Settings(target_path="t.gguf"), wait=False)
    failures = []
    window.engine.worker.load_event.connect(
        lambda event: failures.append(event) if isinstance(event, LoadFailed) else None)
    qtbot.waitUntil(factory.loading_draft.is_set, timeout=scaled(10_000))
    window.close()
    assert factory.cancelled.is_set()
    qtbot.wait(200)  # a queued signal would arrive by now
    assert failures == []
