"""Every dialog fits an 800x600 screen with its buttons in sight (issue "The window, third
round", item 2): the picker opened at 1100x760, Retry, Download and the file table off the
screen; Compare grew to 1131 px wide inside a 1100 px window once its timings came in.

The offscreen platform's screen is larger, so the screen a dialog opens on is made 800x600
where screen_fit asks for it; each dialog opens over a main window of that size."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QObject, QRect, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMainWindow, QPushButton

from draftlight.ui.widgets import screen_fit

SMALL = QRect(0, 0, 800, 600)
SHOTS = "/tmp/shot-{}.png"  # what the dialog looked like, for a person to look at


@pytest.fixture
def small_screen(qtbot, monkeypatch):
    """An 800x600 main window on a screen whose free room is 800x600: the dialogs' parent."""
    monkeypatch.setattr(screen_fit, "available_room", lambda dialog: QRect(SMALL))
    window = QMainWindow()
    qtbot.addWidget(window)
    window.resize(SMALL.size())
    window.show()
    qtbot.waitExposed(window)
    return window


def assert_fits_with_buttons_in_sight(qtbot, dialog: QDialog, buttons: list, name: str) -> None:
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.wait(50)  # late layout (wrapped labels) settles
    frame = dialog.frameGeometry()
    assert frame.width() <= SMALL.width() and frame.height() <= SMALL.height(), (name, frame)
    buttons = buttons + [b for box in dialog.findChildren(QDialogButtonBox)
                         for b in box.findChildren(QPushButton) if b.isVisibleTo(dialog)]
    assert buttons, name
    for button in buttons:
        label = (name, button.text())
        assert button.isVisible(), label
        shown = QRect(button.mapTo(dialog, button.rect().topLeft()), button.size())
        assert dialog.rect().contains(shown), (label, shown, dialog.rect())
        # not cut by a parent that scrolls or is too small for it
        assert button.visibleRegion().boundingRect() == button.rect(), label
    dialog.grab().save(SHOTS.format(name))


def test_fit_to_screen_keeps_a_dialog_inside_its_screens_room(qtbot):
    """On the real (offscreen) screen: a dialog asking for more than the screen gets less."""
    parent = QMainWindow()
    qtbot.addWidget(parent)
    dialog = QDialog(parent)
    screen_fit.fit_to_screen(dialog, 5000, 5000)
    room = screen_fit.available_room(dialog)
    assert dialog.width() <= room.width() - screen_fit.FRAME.width()
    assert dialog.height() <= room.height() - screen_fit.FRAME.height()
    screen_fit.fit_to_screen(dialog, 300, 200)
    assert (dialog.width(), dialog.height()) == (300, 200)  # less than the room: as asked


def test_the_picker_fits_with_retry_download_and_the_files_in_sight(qtbot, small_screen,
                                                                     fake_hub, make_dialog):
    from tests.support.picker import TIMEOUT_MS
    # a repository and a search whose names are longer than the screen is wide
    long_repo = "a-long-organisation-name/" + "Very-Long-Model-Name-" * 3 + "GGUF"
    assert len(long_repo) <= 96  # the hub's longest
    fake_hub.add_repo(long_repo, {"model-Q4_0.gguf": b"x", "model-Q8_0.gguf": b"y"})
    dialog = make_dialog(fake_hub.url)  # no parent: the screen's room is 800x600 all the same
    dialog.search_panel.search_edit.setText("a search that goes on and on " * 8)
    dialog.search_panel.search_now()
    dialog.show_repo(long_repo)
    qtbot.waitUntil(lambda: len(dialog.files_shown) == 2, timeout=TIMEOUT_MS)
    assert long_repo in dialog.status.text()  # whole, cut only on the screen
    assert dialog.files_panel.select_file(dialog.files_shown[0].path)
    dialog.report(OSError("the hub went away"), retry=lambda: None)
    tree = dialog.files_panel.tree
    assert_fits_with_buttons_in_sight(
        qtbot, dialog, [dialog.banner.action_button, dialog.files_panel.download_button],
        "picker")
    assert dialog.banner.action_button.text() == "Retry"
    assert tree.isVisible() and tree.viewport().height() >= 40  # some files in sight


class _FakeWorker(QObject):
    reply = Signal(int, object)


class _FakeEngine:
    """Compare's side of the engine: a request id, and answers sent by the test."""

    def __init__(self) -> None:
        self.worker = _FakeWorker()

    def compare(self, messages, params, mode) -> int:
        return 1

    def stop(self, request_id: int) -> None:
        pass


def test_compare_fits_once_its_long_timings_come_in(qtbot, small_screen):
    from draftlight.engine.reply.compare import Comparison
    from draftlight.engine.reply.events import Stats
    from draftlight.modes import NGRAM
    from draftlight.ui.chat.compare_dialog import CompareDialog
    from draftlight.engine.core.sampling import SamplingParams
    engine = _FakeEngine()
    dialog = CompareDialog(engine, [{"role": "user", "content": "Hi"}], SamplingParams(), NGRAM,
                           small_screen)
    stats = Stats(new_tokens=512, prefill_seconds=0.123, seconds=4.69)
    result = Comparison(NGRAM, stats, stats, "text", "text", True, None,
                        plain_runs=(4.5, 4.6, 4.7), speculative_runs=(2.1, 2.2, 2.3), load=0.1)
    engine.worker.reply.emit(1, result)
    assert "Speedup" in dialog.summary.text()
    assert_fits_with_buttons_in_sight(qtbot, dialog, [], "compare")


def _settings(parent):
    from draftlight.settings import Settings
    from draftlight.ui.chat.settings_dialog import SettingsDialog
    return SettingsDialog(Settings(), gpu_offload=False, parent=parent)


def _machine(parent):
    from draftlight.ui.chat.machine_dialog import MachineDialog
    return MachineDialog({"2": 1.1, "4": 1.3, "8": 1.9, "16": 3.5}, parent)


def _diff(parent):
    from draftlight.ui.chat.diff_dialog import DiffDialog
    old = "".join(f"line {i} of a file that is long enough to need a scroll bar\n"
                  for i in range(200))
    return DiffDialog("notes.txt", old, "```\n" + old.replace("line 7", "LINE 7") + "```",
                      parent)


def _text_viewer(parent):
    from draftlight.ui.flash.text_viewer import TextViewer
    return TextViewer("notes.txt", "a long line " * 400 + "\n" * 300, parent)


def _server_log(parent):
    from draftlight.ui.engine.server_log import ServerLog, ServerLogDialog
    log = ServerLog()
    for i in range(300):
        log.append(f"llama-server: line {i} " + "with a great deal to say " * 20)
    dialog = ServerLogDialog(log, parent)
    dialog.log_for_test = log  # kept alive as long as the dialog
    return dialog


@pytest.mark.parametrize("make", [_settings, _machine, _diff, _text_viewer, _server_log],
                         ids=["settings", "machine", "diff", "text-viewer", "server-log"])
def test_each_other_dialog_fits_with_its_buttons_in_sight(qtbot, small_screen, make):
    dialog = make(small_screen)
    assert_fits_with_buttons_in_sight(qtbot, dialog, [], make.__name__.strip("_"))
