"""Choosing the engine in the window, fast: the Settings section, what reloads, the modes and
features each engine offers, the server log, and a build of llama-server that the closing
window cancels. A scripted server engine stands in for llama-server (test_ui_engine_server.py
runs the real one); the window, worker thread, loader and dialogs are the real code."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QPoint

from draftlight.engine.core.errors import EngineError
from draftlight.settings import Settings, load_settings, save_settings
from draftlight.ui.chat.settings_dialog import SettingsDialog
from draftlight.engine_spec import EngineSpec
from draftlight.ui.engine.loaded import Capabilities, Loaded
from draftlight.ui.engine.model_loader import ModelLoader
from draftlight.ui.engine.server_log import MAX_LINES
from tests.support.recording_engine import RecordingEngine
from tests.support.scripted_engine import ScriptedEngine, ScriptedFactory
from tests.support.window import send_and_wait
from tests.support.waiting import wait_until, window_state
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF, REMOTE, Mode

SERVER_MODES = tuple(Mode.llama(t) for t in ("none", "draft-simple", "ngram-simple", "ngram-mod"))


class ScriptedServerEngine(ScriptedEngine):
    modes = SERVER_MODES


class ScriptedServerFactory(ScriptedFactory):
    """ScriptedFactory that also opens a "llama-server": it reports a build, prints log lines
    from a thread of its own (as llama-server's log reader does), and can wait, as a long
    build does, until it is cancelled."""

    def __init__(self, build_until_cancelled=False, log_lines=3) -> None:
        super().__init__(modes=(AUTO, OFF, DRAFT, NGRAM))
        self.build_until_cancelled = build_until_cancelled
        self.log_lines = log_lines
        self.building = threading.Event()
        self.cancelled = False
        self.server_specs: list[EngineSpec] = []

    def open_llama_server(self, spec, *, report, on_log, should_cancel):
        self.server_specs.append(spec)
        report("configuring llama-server", -1)
        report("building llama-server", 40)
        self.building.set()
        while self.build_until_cancelled and not should_cancel():
            time.sleep(0.01)
        if should_cancel():
            self.cancelled = True
            raise EngineError("building llama-server was cancelled")
        printer = threading.Thread(target=lambda: [on_log(f"log line {i}")
                                                   for i in range(self.log_lines)])
        printer.start()
        printer.join()
        engine = ScriptedServerEngine(self)
        self.engines.append(engine)
        return engine


def test_the_settings_dialog_sets_the_engine_and_shows_only_its_fields(qtbot):
    dialog = SettingsDialog(Settings(), gpu_offload=False)
    qtbot.addWidget(dialog)
    section = dialog.engine_section
    form = section.form
    assert section.engine.currentData() == "local"
    assert not form.isRowVisible(section.spec_type) and not form.isRowVisible(section.server_url)
    section.engine.setCurrentIndex(section.engine.findData("llama-server"))
    assert form.isRowVisible(section.spec_type) and form.isRowVisible(section.llama_server)
    assert not form.isRowVisible(section.server_url)
    # Types that draft with a model are offered only once a draft model is set.
    draft_simple = section.spec_type.model().item(section.spec_type.findData("draft-simple"))
    assert not draft_simple.isEnabled()
    assert section.spec_type.model().item(section.spec_type.findData("ngram-simple")).isEnabled()
    dialog.draft.edit.setText("/m/draft.gguf")
    assert draft_simple.isEnabled()
    section.spec_type.setCurrentIndex(section.spec_type.findData("draft-simple"))
    section.llama_server.edit.setText("/opt/llama/llama-server")
    chosen = dialog.result_settings()
    assert (chosen.engine, chosen.spec_type, chosen.llama_server) == (
        "llama-server", "draft-simple", "/opt/llama/llama-server")
    dialog.draft.edit.clear()  # its draft gone, draft-simple is no longer chosen
    assert dialog.result_settings().spec_type == "ngram-mod"

    section.engine.setCurrentIndex(section.engine.findData("remote"))
    assert form.isRowVisible(section.server_url) and not form.isRowVisible(section.spec_type)
    section.server_url.setText(" http://10.0.0.2:8080 ")
    section.server_api_key.setText("sk-1")
    chosen = dialog.result_settings()
    save_settings(chosen)
    loaded, problem = load_settings()
    assert problem is None
    assert (loaded.engine, loaded.server_url, loaded.server_api_key) == (
        "remote", "http://10.0.0.2:8080", "sk-1")


def test_what_reloads_when_the_engine_settings_change(qtbot):
    engine = RecordingEngine()
    loader = ModelLoader(engine, EngineSpec(target_path="t.gguf"), (AUTO,))
    engine.worker.load_event.emit(Capabilities((AUTO, OFF, NGRAM)))
    engine.worker.load_event.emit(Loaded("t.gguf"))
    server = EngineSpec(target_path="t.gguf", engine="llama-server", spec_type="ngram-mod")
    loader.apply(server)
    assert engine.calls[-1] == ("load", server)
    engine.worker.load_event.emit(Loaded("t.gguf", modes=SERVER_MODES))
    assert loader.modes == SERVER_MODES and not loader.runs_locally
    # llama-server gets its draft model on its command line: a new draft restarts it.
    with_draft = EngineSpec(target_path="t.gguf", draft_path="d.gguf", engine="llama-server")
    loader.apply(with_draft)
    assert engine.calls[-1] == ("load", with_draft)
    engine.worker.load_event.emit(Loaded("t.gguf", draft="d.gguf", modes=SERVER_MODES))
    calls = len(engine.calls)
    loader.apply(EngineSpec(target_path="t.gguf", draft_path="d.gguf", engine="llama-server", spec_type="ngram-simple"))
    assert len(engine.calls) == calls  # the spec type is the mode's business, not a reload
    remote = EngineSpec(target_path="", engine="remote", server_url="http://h:1")
    loader.apply(remote)
    assert engine.calls[-1] == ("load", remote)
    engine.worker.load_event.emit(Loaded("x", modes=(REMOTE,)))
    loader.apply(EngineSpec(target_path="other.gguf", draft_path="d2.gguf", engine="remote", server_url="http://h:1"))
    assert engine.calls[-1] == ("load", remote)  # a remote server ignores the local models
    loader.apply(EngineSpec(target_path="t.gguf"))
    engine.worker.load_event.emit(Loaded("t.gguf"))
    assert loader.modes == (AUTO, OFF, NGRAM) and loader.runs_locally


def test_the_window_on_llama_server_offers_its_modes_and_turns_off_local_features(
        qtbot, open_window):
    factory = ScriptedServerFactory()
    window = open_window(factory, Settings(engine="llama-server", spec_type="ngram-simple",
                                           target_path="/m/t.gguf"))
    box = window.toolbar.mode_box
    assert [box.itemData(i) for i in range(box.count())] == list(SERVER_MODES)
    assert window.current_mode() == Mode.parse("llama:ngram-simple")
    assert box.currentText() == "llama.cpp ngram-simple"
    assert Mode.parse("llama:draft-simple") not in box.usable()  # no draft model
    assert window.status_label.text() == "Ready: t.gguf on llama-server"
    assert window.model_bar.engine_box.currentText() == "llama.cpp server"
    assert not window.model_bar.draft_box.isEnabled()
    assert "Settings" in window.model_bar.draft_box.toolTip()
    assert not window.serve_switch.action.isEnabled()
    window.serve_switch.action.trigger()
    assert not window.serve_switch.serving

    view = send_and_wait(qtbot, window)
    assert factory.calls[-1][1] == Mode.llama("ngram-simple") and view.runs
    assert not window.toolbar.compare_action.isEnabled()
    assert "needs the engine on this computer" in window.toolbar.compare_action.toolTip()

    window.set_mode(Mode.parse("llama:ngram-mod"))
    assert window.settings.spec_type == "ngram-mod" and window.settings.mode == AUTO
    assert load_settings()[0].spec_type == "ngram-mod"  # saved for the next start
    send_and_wait(qtbot, window)
    assert factory.calls[-1][1] == Mode.parse("llama:ngram-mod")

    # Back to this computer, from the model bar: its modes, Compare and the draft box return.
    window.choose_engine("local")
    wait_until(qtbot, lambda: window.ready and not window.loading, "the models to load", 10_000,
               lambda: window_state(window))
    assert window.models.modes == (AUTO, OFF, DRAFT, NGRAM)
    assert window.current_mode() == AUTO
    assert window.model_bar.draft_box.isEnabled() and window.serve_switch.action.isEnabled()
    assert window.toolbar.compare_action.isEnabled()
    assert window.toolbar.compare_action.toolTip().startswith("Answer the last message again")
    assert factory.engines[0].closed  # the server engine was closed on its own thread


def test_the_server_log_shows_what_llama_server_printed_and_follows_new_lines(
        qtbot, open_window):
    factory = ScriptedServerFactory(log_lines=MAX_LINES + 5)
    window = open_window(factory, Settings(engine="llama-server", target_path="/m/t.gguf"))
    qtbot.waitUntil(lambda: len(window.server_log.lines) == MAX_LINES, timeout=10_000)
    window.server_log_action.trigger()
    text = window.server_log_dialog.text
    assert text.isReadOnly() and text.blockCount() == MAX_LINES  # capped: the latest lines
    assert text.document().firstBlock().text() == "log line 5"
    assert text.document().lastBlock().text() == f"log line {MAX_LINES + 4}"
    bar = text.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()  # opened at the end
    window.server_log.append("a new line")
    assert text.document().lastBlock().text() == "a new line"
    assert bar.value() == bar.maximum()  # followed it
    bar.setValue(10)  # scrolled up to read: the line read stays in place as lines arrive
    top = text.cursorForPosition(QPoint(0, 0)).block().text()
    window.server_log.append("another line")
    assert text.document().lastBlock().text() == "another line"
    assert text.cursorForPosition(QPoint(0, 0)).block().text() == top


def test_building_llama_server_shows_progress_and_is_cancelled_when_the_window_closes(
        qtbot, open_window):
    factory = ScriptedServerFactory(build_until_cancelled=True)
    window = open_window(factory, Settings(engine="llama-server", target_path="/m/t.gguf"),
                         wait=False)
    assert factory.building.wait(10)
    qtbot.waitUntil(lambda: window.status_label.text() == "building llama-server 40%",
                    timeout=5_000)
    assert window.loading and not window.send_button.isEnabled()
    started = time.monotonic()
    window.close()
    assert time.monotonic() - started < 5 and factory.cancelled
    assert not window.engine.thread.isRunning()


def test_a_remote_engine_without_an_address_is_one_line(qtbot, open_window):
    window = open_window(None, Settings(engine="remote", server_url=""), wait=False,
                         scripted=False)
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=30_000)
    line = window.banner.label.text()
    assert line.startswith("Could not use the remote server: ")
    assert "is not a server address" in line and "\n" not in line
    assert window.status_label.text() == "No model loaded"


def test_each_llama_cpp_speculation_type_is_explained(qtbot):
    from PySide6.QtCore import Qt
    from draftlight.modes import SPEC_TYPE_HELP, SPEC_TYPES
    dialog = SettingsDialog(Settings(engine="llama-server", draft_path="/m/draft.gguf"),
                            gpu_offload=False)
    qtbot.addWidget(dialog)
    section = dialog.engine_section
    assert set(SPEC_TYPE_HELP) == set(SPEC_TYPES)
    box = section.spec_type
    for spec in SPEC_TYPES:
        tip = box.itemData(box.findData(spec), Qt.ToolTipRole)
        assert tip == SPEC_TYPE_HELP[spec] and len(tip) > 30
    box.setCurrentIndex(box.findData("ngram-map-k4v"))
    assert section.spec_help.text() == SPEC_TYPE_HELP["ngram-map-k4v"]
    assert section.form.isRowVisible(section.spec_help)
    box.setEditText("draft-mtp,ngram-mod")  # a chain: each of its types, in order
    lines = section.spec_help.text().splitlines()
    assert lines[0] == "Tried in this order:" and lines[1].startswith("draft-mtp: ")
    assert lines[2].startswith("ngram-mod: ")
    box.setEditText("ngram-fast")
    assert section.spec_help.text().startswith("Not a llama.cpp speculation type")
    section.engine.setCurrentIndex(section.engine.findData("local"))
    assert not section.form.isRowVisible(section.spec_help)
