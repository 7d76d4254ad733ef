"""The main window's models and mode (ui/chat/main_window.py's MainWindow is one): the mode box
and the model bar filled from what is loaded, a choice there turned into settings, and what a
load says (its steps, that it is ready, that it failed)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from draftlight.engine_kind import EngineKind
from draftlight.modes import Mode
from draftlight.ui.engine.draft_offer import offer_draft

NEEDS_LOCAL_ENGINE = " needs the engine on this computer (Settings ▸ Engine)"
LOAD_FAILED = {EngineKind.LOCAL: "Could not load the model",
               EngineKind.LLAMA_SERVER: "Could not start llama-server",
               EngineKind.REMOTE: "Could not use the remote server"}


class WindowModels:
    """Uses the window's settings, models (ModelLoader), choice (EngineChoice), toolbar, model
    bar, model scan, serve switch, status widgets and session."""

    # --- modes -----------------------------------------------------------------------------

    def _fill_modes(self) -> None:
        wanted = self.choice.mode_to_show(self.settings, self.current_mode())
        self.toolbar.mode_box.fill(self.models.modes, bool(self.draft_name), wanted)
        self.choice.mode_shown(self.settings, wanted, tuple(self.toolbar.mode_box.usable()))
        self.serve_switch.set_mode(self.current_mode())

    def current_mode(self) -> Mode:
        return self.toolbar.mode_box.current_mode()

    def set_mode(self, mode: Mode) -> None:
        self.toolbar.mode_box.select(mode)

    def _on_mode_chosen(self, _index: int) -> None:
        self.choice.mode_chosen(self.settings, self.current_mode())
        self.serve_switch.set_mode(self.current_mode())
        self._save_settings()

    # --- model loading ---------------------------------------------------------------------

    def _on_models_changed(self) -> None:
        self.status_line.set_loading(self.models.loading)
        self._fill_modes()
        self._fill_model_bar()
        self._update_actions()
        self._offer_local_features()

    def _offer_local_features(self) -> None:
        """Compare and serving run on the in-process engine only: off, saying why, otherwise."""
        local = self.models.runs_locally
        if not local and self.serve_switch.serving:
            self.serve_switch.set_serving(False)
        self.serve_switch.action.setEnabled(local)
        for action, name in ((self.toolbar.compare_action, "Compare"),
                             (self.serve_switch.action, "Serving from the window")):
            action.setToolTip(self._tooltips[action] if local else name + NEEDS_LOCAL_ENGINE)

    def _fill_model_bar(self) -> None:
        self.model_bar.fill(self.settings.target_path, self.draft_name and
                            self.models.spec.draft_path, self.current_mode(), self.models.modes,
                            self.model_scan.models, self.model_scan.facts,
                            mtp=self.models.target_mtp)
        self.model_bar.show_engine(self.models.engine_kind, self.settings.server_url)

    def _on_model_status(self, text: str) -> None:
        self.status_label.setText(text)  # cut to its room; the tooltip has it whole
        self._show_steps()

    def _show_steps(self) -> None:
        """While a load runs, its steps and their times in the empty chat's card (each second),
        and in the status bar's load bar the running step with its figures."""
        steps = self.models.steps
        self.chat.welcome.show_steps(steps.lines() if steps.running else [])
        if steps.running:
            self.progress.show_step(steps.current, steps.elapsed())
        if steps.running and round(steps.elapsed()) >= 1:
            self.status_label.setText(f"{steps.current} ({steps.elapsed():.0f} s)")
        if steps.running != self._step_timer.isActive():
            self._step_timer.start(1000) if steps.running else self._step_timer.stop()

    def choose_engine(self, kind: str) -> None:
        """From the model bar: another engine (this reloads)."""
        self.apply_settings(self.choice.with_engine(self.settings, kind))

    def choose_target(self, path: str) -> None:
        """From the model bar: another target (this reloads)."""
        self.apply_settings(self.choice.with_target(self.settings, path))

    def choose_draft(self, choice: str) -> None:
        """From the model bar: a draft model (swapped in, the target stays), n-gram, none, or
        the target's MTP layers (on llama-server)."""
        new, mode = self.choice.with_draft(self.settings, choice, self.current_mode())
        self.apply_settings(new)
        self.set_mode(mode)

    def _on_loaded(self, target: str) -> None:
        self.session.plain_rate = 0.0  # a new target: its plain speed is not known yet
        # its replies' cards name it; a remote server's model is its own, not known here
        self.session.model = ("" if self.models.engine_kind == EngineKind.REMOTE
                              else target.removesuffix(".gguf"))
        self.setWindowTitle(f"Draftlight — {target}")
        self.serve_switch.set_model(target.removesuffix(".gguf"), self.models.n_ctx or 4096)
        self.model_ready.emit()
        offer_draft(self)  # a draft model already here that fits the new target

    def _on_models_found(self) -> None:
        """The scan answered (at start, on the window's return to the front, Refresh)."""
        self._fill_model_bar()
        offer_draft(self)

    def _on_app_state(self, state) -> None:
        if state == Qt.ApplicationActive and not self._closed:
            self.model_scan.refresh_if_stale()  # a model pulled in another app meanwhile

    def _on_load_failed(self, message: str) -> None:
        failed = LOAD_FAILED.get(self.models.engine_kind, LOAD_FAILED[EngineKind.LOCAL])
        self.banner.show_message(f"{failed}: {message}", "Settings…", self.open_settings)
