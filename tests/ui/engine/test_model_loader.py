"""ModelLoader without a window or a worker thread: what it asks the worker to do when the
settings change, and what it reports, in order, when the worker answers."""

from __future__ import annotations

from draftlight.engine_spec import EngineSpec
from draftlight.ui.engine.loaded import DraftChanged, Loaded, LoadFailed, Loading, Preparing
from draftlight.ui.engine.model_loader import ModelLoader
from tests.support.recording_engine import RecordingEngine
from draftlight.modes import AUTO


def loader_reporting(qtbot) -> tuple[ModelLoader, RecordingEngine, list]:
    engine = RecordingEngine()
    loader = ModelLoader(engine, EngineSpec(target_path="t.gguf"), (AUTO,))
    seen: list = []
    for name in ("changed", "status", "loaded", "failed", "problem", "about_to_change"):
        getattr(loader, name).connect(lambda *args, name=name: seen.append((name, *args)))
    return loader, engine, seen


def test_a_load_reports_status_problems_then_ready_in_that_order(qtbot):
    loader, engine, seen = loader_reporting(qtbot)
    loader.load()
    assert engine.calls == [("load", EngineSpec(target_path="t.gguf"))] and loader.loading
    engine.worker.load_event.emit(Loading("Loading t.gguf…"))
    engine.worker.load_event.emit(Loaded("t.gguf", draft_error="gone",
                                         notices=("No chat template.",)))
    assert seen == [("changed",), ("status", "Loading t.gguf…"),
                    ("changed",), ("status", "Ready: t.gguf"),
                    ("problem", "No chat template. Could not use the draft model: gone."),
                    ("loaded", "t.gguf")]
    assert loader.ready and not loader.loading and loader.draft_name is None


def test_making_the_default_model_shows_its_progress_then_loading_is_busy_again(qtbot):
    loader, engine, seen = loader_reporting(qtbot)
    percents = []
    loader.percent.connect(percents.append)
    engine.worker.load_event.emit(Preparing("Making the faster Q4_0 copy…", 40))
    engine.worker.load_event.emit(Loading("Loading SmolLM2.Q4_0.gguf…"))
    assert ("status", "Making the faster Q4_0 copy… 40%") in seen
    assert percents == [40, -1] and loader.loading


def test_settings_reload_the_target_swap_the_draft_or_change_nothing(qtbot):
    loader, engine, seen = loader_reporting(qtbot)
    engine.worker.load_event.emit(Loaded("t.gguf"))
    seen.clear()

    loader.apply(EngineSpec(target_path="t.gguf", n_ctx=4096))  # sampling-only changes: same spec
    assert engine.calls == [] and seen == [("changed",)]
    seen.clear()

    with_draft = EngineSpec(target_path="t.gguf", draft_path="d.gguf")
    loader.apply(with_draft)
    assert engine.calls == [("change_draft", with_draft)] and seen[0] == ("about_to_change",)
    engine.worker.load_event.emit(DraftChanged("d.gguf"))
    assert loader.draft_name == "d.gguf" and seen[-1] == ("status", "Ready: t.gguf + draft d.gguf")

    other_target = EngineSpec(target_path="u.gguf", draft_path="d.gguf")
    loader.apply(other_target)
    assert engine.calls[-1] == ("load", other_target) and not loader.ready


def test_a_target_that_failed_is_loaded_again_even_with_the_same_settings(qtbot):
    loader, engine, seen = loader_reporting(qtbot)
    engine.worker.load_event.emit(LoadFailed("model file not found: t.gguf"))
    assert seen[-2:] == [("status", "No model loaded"), ("failed", "model file not found: t.gguf")]
    loader.apply(EngineSpec(target_path="t.gguf"))
    assert engine.calls == [("load", EngineSpec(target_path="t.gguf"))]
