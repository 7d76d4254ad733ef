"""The main window: conversations on the left, the chat and the composer on the right, the
speculation mode and the highlight switch in the toolbar, load progress and live statistics in
the status bar. It only wires widgets together (built and connected by window_wiring.py; the
toolbar is MainToolbar, the chat column ChatPane); the chat logic is in ChatSession, which models are loaded in ModelLoader (what the
window shows of them and of the mode: WindowModels), the models themselves in the engine's
host, driven from the worker thread. The engine (Settings.engine) is llama.cpp or a server;
what only llama.cpp's engine does (Compare, serving, swapping drafts) is turned off, with a
tooltip saying why, while a server answers."""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow

from draftlight.settings import Settings, save_settings
from draftlight.store.attachments import with_attachments
from draftlight.store.pasted_code import edit_target
from draftlight.store.history import History
from draftlight.ui.chat.context_check import fits_or_offer
from draftlight.ui.chat.look import STYLE
from draftlight.ui.chat.composer_drafts import ComposerDrafts
from draftlight.ui.chat.held_message import HeldMessage
from draftlight.ui.chat.message_edit import MessageEdit
from draftlight.ui.chat.model_scan import ModelScan
from draftlight.ui.chat.window_models import WindowModels
from draftlight.ui.chat.window_wiring import WindowWiring
from draftlight.ui.chat.window_place import remember_place, restore_place
from draftlight.ui.chat.session import ChatSession
from draftlight.ui.chat.served_list import add_served_dock
from draftlight.ui.chat.history_settle import HistorySettle
from draftlight.engine_spec import EngineSpec
from draftlight.ui.engine.model_loader import ModelLoader
from draftlight.ui.engine.engine_choice import EngineChoice
from draftlight.ui.engine.server_log import ServerLog
from draftlight.ui.flash.palette import scheme_named
from draftlight.ui.engine.serve_switch import ServeSwitch
from draftlight.ui.engine.engine_thread import EngineThread


SCAN_AFTER_MS = 250  # the other apps' models are looked for this long after the window opens


class MainWindow(WindowWiring, WindowModels, QMainWindow):
    model_ready = Signal()  # the models are loaded and a message can be sent

    def __init__(self, settings: Settings, history: History, *, factory=None,
                 settings_message: str | None = None, persist_settings: bool = True) -> None:
        super().__init__()
        self.settings = settings
        self.history = history
        self.persist_settings = persist_settings
        self._closed = False

        self.engine = EngineThread(factory, self)
        self.server_log = ServerLog(self)
        self.engine.worker.server_log.connect(self.server_log.append)
        self.server_log_dialog = None
        self.serve_switch = ServeSwitch(self.engine, settings.serve_port, self,
                                        allow_origins=tuple(settings.serve_origins.split()),
                                        api_key=settings.serve_api_key)
        self.models = ModelLoader(self.engine, EngineSpec.from_settings(settings),
                                  (settings.mode,), self)
        self.choice = EngineChoice(self.models, settings)  # what engine and mode choices mean
        # the models on this computer, found off this thread
        self.model_scan = ModelScan(self, folders=lambda: self.settings.added_model_folders())
        self.draft_offered = ""  # the target a draft was last offered for (draft_offer.py)
        self._step_timer = QTimer(self)  # a load's steps, shown each second while it runs
        self._step_timer.timeout.connect(self._show_steps)
        self.setWindowTitle("Draftlight")
        self.resize(1100, 760)
        self.setStyleSheet(STYLE)
        self._build_widgets()
        self.session = ChatSession(self.engine, history, self.chat, settings, self)
        self.message_edit = MessageEdit(self)  # Edit: a new version of a message
        self.composer_drafts = ComposerDrafts(self.composer)  # each conversation's unsent text
        self.held_message = HeldMessage(self)  # Enter while nothing can be sent: why
        self._crash_line = ""  # the banner's line about the engine's crash, till it is back
        self._build_toolbar_and_menu()
        # View ▸ Served requests: what the local server answers, watched live
        self.served_dock = add_served_dock(self, self.serve_switch.runner.log)
        self._connect()
        restore_place(self)
        if settings_message:
            self.banner.show_message(settings_message)
        self.history_settle = HistorySettle(history, self._history_problem, self,
                                            on_lock=self._history_lock)
        self._update_actions()
        self.models.load()
        # after the first paint: the scan's thread would hold the GIL while the window is built
        QTimer.singleShot(SCAN_AFTER_MS, self.model_scan.refresh)

    def _history_problem(self, problem: str, late: bool) -> None:
        self.banner.show_message(problem, "Start a new history", self.session.start_fresh_history)
        if late:  # the list was read before the check answered
            self.conversations.refresh()
            self._update_actions()

    def _history_lock(self, line: str, held: bool) -> None:
        """Another program held the history as the window opened, or has let it go: the
        list, empty till then, is read."""
        if held:
            self.banner.show_message(line)
            return
        self.banner.withdraw(line)
        self.conversations.refresh()
        self._update_actions()

    @property
    def ready(self) -> bool:
        """The models are loaded (a message can be sent once `loading` is over too)."""
        return self.models.ready

    @property
    def loading(self) -> bool:
        return self.models.loading

    @property
    def draft_name(self) -> str | None:
        return self.models.draft_name

    # --- user actions ----------------------------------------------------------------------

    def send(self, text: str) -> None:
        if self.ready and not self.loading and self.message_edit.send(text):
            return
        if self.attachments.reading:  # the message goes with its files, once they are read
            self.composer.setPlainText(text)  # nothing typed is lost, and it can still change
            reading = self.attachments.reading
            waiting = (f"Reading {', '.join(reading)}: your message is sent once "
                       f"{'it is' if len(reading) == 1 else 'they are'} read.")
            self.banner.show_message(waiting)

            def send_typed() -> None:
                self.banner.withdraw(waiting)
                typed = self.composer.toPlainText().strip()
                if typed:
                    self.composer.clear()
                    self.send(typed)

            self.attachments.when_read(send_typed)
            return
        if self.ready and not self.loading and fits_or_offer(self, text):
            editing = self.attachments.editing  # its text: the reply's Predicted Output
            files = self.attachments.take()
            # else a file the message names, or code pasted in it, that it asks to change
            edited = ((editing.name, editing.text) if editing else
                      edit_target(text, [(file.name, file.text) for file in files]))
            self.session.send(with_attachments(text, files), self.current_mode(), edited,
                              [file.record() for file in files])

    def regenerate(self) -> None:
        if self.ready and not self.loading:
            self.session.regenerate(self.current_mode())

    def continue_reply(self) -> None:
        if self.ready and not self.loading and self.models.runs_locally:
            self.session.continue_reply(self.current_mode())

    def new_conversation(self) -> None:
        self.message_edit.cancel()
        self.session.new_conversation()
        self.composer.setFocus()

    def set_highlights_visible(self, visible: bool) -> None:
        self.settings.show_highlights = visible
        self.chat.set_highlights_visible(visible)
        self.toolbar.legend.setEnabled(visible)
        self._save_settings()

    def set_palette(self, name: str) -> None:
        """Text, strips and legend take the colours of scheme `name` (for this window's
        light or dark background)."""
        self.settings.palette = name
        scheme = scheme_named(name)
        self.chat.set_scheme(scheme)
        self.toolbar.legend.set_scheme(scheme)

    def open_settings(self) -> None:
        from draftlight.ui.chat.settings_dialog import SettingsDialog
        dialog = SettingsDialog(self.settings, gpu_offload=self.models.gpu_offload, parent=self)
        if dialog.exec():
            self.apply_settings(dialog.result_settings())

    def apply_settings(self, new: Settings) -> None:
        """Keep what can be kept: sampling changes apply to the next message, a new draft is
        swapped in, only a change to the target reloads everything."""
        try:
            new.check()
        except ValueError as exc:
            self.banner.show_message(f"Settings not applied: {exc}")
            return
        folders_changed = new.model_folders != self.settings.model_folders
        self.settings = new
        self.session.settings = new
        self.chat.set_flash(new.flash_drafts)
        self.set_palette(new.palette)
        self.serve_switch.port = new.serve_port  # both from the server's next start
        self.serve_switch.allow_origins = tuple(new.serve_origins.split())
        self.serve_switch.set_api_key(new.serve_api_key)  # at once: restarts a running server
        self._save_settings()
        if folders_changed:
            self.model_scan.refresh()  # their models join (or leave) the lists
        self.models.apply(EngineSpec.from_settings(new))
        if (mode := self.choice.mode_after(new)) is not None:
            self.set_mode(mode)  # llama-server restarts with it at the next reply

    def _on_reply_failed(self, message: str) -> None:
        """A reply's error; when llama-server lost machines its model was split over, the
        banner offers to start it again without them."""
        gone = self.choice.machines_lost(self.settings, message)
        if not gone:
            self.banner.show_message(message)
            return
        self.banner.show_message(message, f"Restart without {', '.join(gone)}",
                                 lambda: self.restart_without(gone))

    def _on_saved_again(self, line: str) -> None:
        self.banner.withdraw(line)
        self.show_status("The history answers again: everything kept is saved.")

    def restart_without(self, machines: tuple[str, ...]) -> None:
        """Settings ▸ Engine ▸ Use other machines, less `machines`; the engine reloads."""
        self.apply_settings(self.choice.without(self.settings, machines))
        self.show_status(f"Starting llama-server without {', '.join(machines)}…")

    def open_models(self) -> None:
        from draftlight.ui.picker.dialog import PickerDialog  # the action is hidden without it
        dialog = PickerDialog(self, n_ctx=self.settings.n_ctx or self.models.n_ctx or 4096,
                              gpu_offload=self.models.gpu_offload)
        dialog.target_chosen.connect(self.choose_target)  # its role buttons load a model here
        dialog.draft_chosen.connect(self.choose_draft)
        dialog.installed_changed.connect(self.model_scan.refresh)
        dialog.exec()

    def show_status(self, text: str) -> None:
        self.statusBar().showMessage(text, 5000)

    def _save_settings(self) -> None:
        if self.persist_settings:
            try:
                save_settings(self.settings)
            except OSError as exc:
                self.banner.show_message(f"Settings could not be saved: {exc}")

    def _update_actions(self, *_args) -> None:
        streaming = self.session.streaming
        can_send = self.ready and not self.loading and not streaming
        self.composer.can_send = can_send
        self.send_button.setEnabled(can_send)
        self.stop_button.setEnabled(streaming)
        self.regenerate_button.setEnabled(self.ready and not self.loading
                                          and self.session.can_regenerate())
        # Continue: the in-process engine goes on from a reply's words (servers may not)
        can_continue = (self.ready and not self.loading and self.models.runs_locally
                        and self.session.can_continue())
        for view in self.chat.messages:
            if view.role == "assistant":
                view.continue_button.setVisible(can_continue and view is self.chat.messages[-1])
        self.toolbar.compare_action.setEnabled(can_send and self.models.runs_locally
                                               and bool(self.session.messages_to_compare()))
        bundled = self.models.runs_locally and not self.settings.target_path  # SmolLM2-135M
        self.chat.welcome.set_state(ready=can_send, toy_model=self.ready and bundled,
                                    picker=self.models_action.isVisible())

    def compare(self) -> None:
        from draftlight.ui.chat.compare_dialog import open_compare
        open_compare(self)

    # --- closing ---------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop the reply, close the engine on its own thread and wait for that thread."""
        if self._closed:
            return
        self._closed = True
        self.model_scan.close()
        self.conversations.close_searches()
        self.attachments.close()
        try:  # the application outlives the window: its signal must not keep the window alive
            QGuiApplication.instance().applicationStateChanged.disconnect(self._on_app_state)
        except (RuntimeError, TypeError):
            pass
        self.session.save_partial()
        self.serve_switch.shutdown()  # its requests end before the engine closes
        self.engine.shutdown()
        picker = sys.modules.get("draftlight.ui.picker.dialog")  # downloads run only if it was opened
        if picker is not None:
            picker.close_shared_download_queue()

    def closeEvent(self, event) -> None:
        remember_place(self)
        self.hide()
        self.shutdown()
        super().closeEvent(event)
