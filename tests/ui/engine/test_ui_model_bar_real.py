"""The model bar on the real bundled model: choosing a draft model swaps it in while the target
stays loaded (the same engine host, no second target load); the reply then drafts with it, and
choosing n-gram closes it, again keeping the target."""

from __future__ import annotations

import shutil

import pytest

from draftlight.settings import load_settings
from draftlight.store.installed import add_local
from draftlight.ui.engine.loaded import Loaded, Loading
from draftlight.ui.engine.model_bar import NGRAM as NGRAM_CHOICE  # the draft box's
from tests.support.real_window import (cost_cache_file, real_window,  # noqa: F401
                                       send_and_wait_real, shared_cost_cache)
from tests.support.waiting import wait_until, window_state
from draftlight.modes import DRAFT, NGRAM

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow


def test_choosing_a_draft_keeps_the_loaded_target(qtbot, tmp_path, bundled_model, real_window):
    copy = tmp_path / "smol-draft.gguf"
    shutil.copyfile(bundled_model, copy)
    add_local(copy, name="smol-draft")
    window = real_window(load_settings()[0])
    wait_until(qtbot, lambda: window.ready and not window.loading, "the models to load", 120_000,
               lambda: window_state(window))
    worker = window.engine.worker
    engine, host = worker.engine, worker.engine.pid  # read, never called, from here
    assert engine.spec.draft is None and host is not None
    loads, loading = [], []
    worker.load_event.connect(lambda event: loads.append(event) if isinstance(event, Loaded)
                              else loading.append(event.words) if isinstance(event, Loading)
                              else None)

    window.set_mode(NGRAM)  # from n-gram, a draft model means draft mode (auto stays auto)
    bar = window.model_bar
    index = bar.draft_box.findData(str(copy))
    assert index > 0 and bar.draft_box.model().item(index).isEnabled()
    bar.draft_box.activated.emit(index)
    qtbot.waitUntil(lambda: window.draft_name == "smol-draft.gguf" and not window.loading,
                    timeout=120_000)
    assert worker.engine is engine and engine.pid == host
    assert engine.spec.draft == str(copy)
    assert loads == [] and loading == ["Loading draft smol-draft.gguf…"]
    assert window.current_mode() == DRAFT

    view = send_and_wait_real(qtbot, window)
    assert view.mode == "draft" and view.figures.stats.drafted > 0

    bar.draft_box.activated.emit(bar.draft_box.findData(NGRAM_CHOICE))
    qtbot.waitUntil(lambda: window.draft_name is None and not window.loading, timeout=60_000)
    assert worker.engine is engine and engine.pid == host and engine.spec.draft is None
    assert loads == [] and window.current_mode() == NGRAM
