"""How the main window (main_window.py) is built and wired: its widgets (the conversation list
beside the chat pane, the model bar, the status bar), its toolbars and menus, and every signal
connected to what answers it. MainWindow extends WindowWiring."""

from __future__ import annotations

from functools import partial

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter

from draftlight.modes import Mode
from draftlight.ui.chat import branches
from draftlight.ui.chat.conversation_list import ConversationList
from draftlight.ui.chat.main_toolbar import MainToolbar, model_toolbar
from draftlight.ui.chat.menus import build_menus
from draftlight.ui.chat.pane import ChatPane
from draftlight.ui.chat.status_line import StatusLine
from draftlight.ui.engine.model_bar import ModelBar
from draftlight.ui.engine.server_log import open_server_log
from draftlight.ui.widgets.plain_text import plain_label

EMPTY_MESSAGE = "Type a message first: an empty message is not sent."


class WindowWiring:
    """Uses the window's settings, history, models, session, serve switch and message edit;
    what it connects to is MainWindow's and WindowModels'."""

    # --- building --------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.conversations = ConversationList(self.history)
        right = ChatPane(self.settings)
        self.banner, self.chat, self.composer = right.banner, right.chat, right.composer
        self.send_button, self.stop_button = right.send_button, right.stop_button
        self.attachments = right.attachments  # files for the next message
        self.regenerate_button = right.regenerate_button

        splitter = QSplitter()
        splitter.addWidget(self.conversations)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([240, 860])
        self.setCentralWidget(splitter)

        self.model_bar = ModelBar()
        self.status_line = status = StatusLine()
        self.setStatusBar(status)
        self.status_label = status.line  # what the models are doing, cut to its room
        self.progress = status.load_bar  # loading and converting: named, in the line's place
        self.stats_label = plain_label()  # the live figures: their whole width, at the right end
        self.stats_label.setObjectName("live-stats")
        status.addPermanentWidget(self.serve_switch.label)
        status.addPermanentWidget(self.stats_label)

    def _build_toolbar_and_menu(self) -> None:
        self.toolbar = MainToolbar(self, self.chat.scheme, self.settings.show_highlights)
        self.model_toolbar = model_toolbar(self, self.model_bar, self.toolbar.settings_action)
        self.addToolBar(self.model_toolbar)
        self.addToolBarBreak()
        self.addToolBar(self.toolbar)
        menus = build_menus(self, self.toolbar, self.serve_switch.action)
        self.models_action, self.quit_action = menus.models, menus.quit
        self.server_log_action, self.stop_action = menus.server_log, menus.stop
        self.export_action, self.import_action = menus.export, menus.import_
        self._tooltips = {action: action.toolTip()
                          for action in (self.toolbar.compare_action, self.serve_switch.action)}
        self._fill_modes()

    def _connect(self) -> None:
        self._connect_models()
        self._connect_session()
        self._connect_chat()
        self._connect_toolbars()

    def _connect_models(self) -> None:
        models = self.models
        models.changed.connect(self._on_models_changed)
        models.status.connect(self._on_model_status)
        models.percent.connect(self.progress.show_percent)  # a step's progress, where told
        models.loaded.connect(self._on_loaded)
        models.loaded.connect(self._engine_back)
        models.loaded.connect(self.held_message.withdraw)
        self.model_scan.updated.connect(self._on_models_found)
        self.model_scan.failed.connect(self.show_status)
        QGuiApplication.instance().applicationStateChanged.connect(self._on_app_state)
        models.failed.connect(self._on_load_failed)
        models.problem.connect(self.banner.show_message)
        models.about_to_change.connect(self.session.stop)
        self.serve_switch.problem.connect(self.banner.show_message)

    def _connect_session(self) -> None:
        session = self.session
        session.busy_changed.connect(self._update_actions)
        session.conversations_changed.connect(self.conversations.refresh)
        session.current_changed.connect(self.conversations.set_current)
        session.writing_changed.connect(self.conversations.set_writing)
        session.current_changed.connect(self._update_actions)  # Regenerate needs a message
        session.current_changed.connect(self._show_conversation_box)
        session.busy_changed.connect(self.held_message.withdraw)
        session.engine_answered.connect(self._engine_back)
        session.error.connect(self._on_reply_failed)
        session.engine_crashed.connect(self._engine_crashed)
        session.info.connect(self.show_status)
        session.saved_again.connect(self._on_saved_again)
        session.live_stats.connect(self.stats_label.setText)
        session.speed.connect(self.toolbar.speed_meter.show_rates)
        self.conversations.opened.connect(self.session.open_conversation)
        self.conversations.opened_at.connect(
            lambda conversation, message: branches.open_at(self.session, conversation, message))
        self.conversations.new_requested.connect(self.new_conversation)
        self.conversations.deleted.connect(self.session.forget_conversation)
        self.conversations.deleted.connect(self.composer_drafts.forget)
        self.conversations.failed.connect(self.banner.show_message)

    def _connect_chat(self) -> None:
        self.chat.copied.connect(self.show_status)
        self.composer.submitted.connect(self.send)
        self.chat.welcome.try_demo.connect(self.send)
        self.chat.welcome.get_model.connect(self.open_models)
        self.composer.empty_submitted.connect(lambda: self.show_status(EMPTY_MESSAGE))
        self.composer.held.connect(self.held_message.explain)
        self.send_button.clicked.connect(self.composer.submit)
        self.stop_button.clicked.connect(self.session.stop)
        self.stop_action.triggered.connect(self.session.stop)
        self.regenerate_button.clicked.connect(self.regenerate)
        self.chat.regenerate_requested.connect(self.regenerate)
        self.chat.continue_requested.connect(self.continue_reply)
        # a reply's "Try N-gram" says the mode as text (the flash room holds a reply's record)
        self.chat.mode_requested.connect(lambda text: self.set_mode(Mode.parse(text)))
        self.chat.version_requested.connect(partial(branches.show_source, self.session))
        self.chat.edit_requested.connect(self.message_edit.start)
        self.composer.edit_last.connect(self.message_edit.start_last)
        self.chat.branch_step_requested.connect(
            lambda view, step: branches.switch(self.session, view, step))

    def _connect_toolbars(self) -> None:
        self.toolbar.compare_action.triggered.connect(self.compare)
        self.toolbar.new_action.triggered.connect(self.new_conversation)
        self.toolbar.settings_action.triggered.connect(self.open_settings)
        self.models_action.triggered.connect(self.open_models)
        self.server_log_action.triggered.connect(lambda: open_server_log(self))
        self.quit_action.triggered.connect(self.close)
        self.toolbar.highlight_action.toggled.connect(self.set_highlights_visible)
        self.toolbar.mode_box.currentIndexChanged.connect(self._on_mode_chosen)
        self.model_bar.engine_chosen.connect(self.choose_engine)
        self.model_bar.target_chosen.connect(self.choose_target)
        self.model_bar.draft_chosen.connect(self.choose_draft)

    # --- what the banner says, while it is true ---------------------------------------------

    def _engine_crashed(self, line: str) -> None:
        self._crash_line = line[:1].upper() + line[1:]
        self.banner.show_message(self._crash_line, "Restart", self.models.restart)

    def _engine_back(self, *_args) -> None:
        """The engine answered a reply, or loaded its models again: a crash it had is over."""
        line, self._crash_line = self._crash_line, ""
        if line:
            self.banner.withdraw(line)

    def _show_conversation_box(self, conversation_id) -> None:
        """Another conversation is shown: a message being edited is left as it was, and the
        message box holds that conversation's own unsent text."""
        if self.message_edit.view is not None and self.message_edit.view not in self.chat.messages:
            self.message_edit.cancel()
        self.composer_drafts.show_for(conversation_id)
