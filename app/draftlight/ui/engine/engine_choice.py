"""What the window's engine and mode choices mean, decided apart from the widgets.

The model bar, the toolbar's mode box, the picker and the banner ask questions the window only
wires: which mode the box shows after a load, what Settings a chosen engine, target or draft
become, which mode a draft chosen while it still loads waits for, what a reply that lost an
RPC machine offers. This object answers them from the Settings and the ModelLoader's state; it
holds no widgets and no Qt objects, so its rules read (and are tested) on their own.
"""

from __future__ import annotations

import dataclasses

from draftlight.engine.server.rpc import machines_gone, rpc_addresses
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF, REMOTE, Mode
from draftlight.settings import Settings
from draftlight.store.found_models import as_setting
from draftlight.engine_kind import EngineKind

DRAFT_MTP = "mtp"  # the model bar's draft choices besides a file: the target's MTP layers,
DRAFT_NGRAM = "ngram"  # n-gram lookup,
NO_DRAFT = ""  # no drafting


class EngineChoice:
    """The engine and mode policy of one window. `models` is its ModelLoader (engine_kind,
    modes, runs_locally are read from it)."""

    def __init__(self, models, settings: Settings | None = None) -> None:
        self.models = models
        self.pending_mode: Mode | None = None  # chosen with a draft that is still loading
        # A saved mode that needs the draft model waits for it at start, instead of the box
        # settling on n-gram while the draft loads and staying there.
        if settings is not None and settings.draft_path and settings.mode.needs_draft_model:
            self.pending_mode = settings.mode

    # --- the mode box ----------------------------------------------------------------------

    def default_mode(self, settings: Settings) -> Mode:
        """The mode Settings keep for the engine: llama-server's start type, a remote server's
        only mode, else the in-process engine's mode."""
        if self.models.engine_kind == EngineKind.LLAMA_SERVER:
            return Mode.llama(settings.spec_type)
        if self.models.engine_kind == EngineKind.REMOTE:
            return REMOTE
        return settings.mode

    def mode_to_show(self, settings: Settings, current: Mode) -> Mode:
        """After the modes on offer changed: the pending mode, else the one shown if it is
        still offered, else the engine's default."""
        if self.pending_mode:
            return self.pending_mode
        return current if current in self.models.modes else self.default_mode(settings)

    def mode_shown(self, settings: Settings, shown: Mode, usable: tuple[Mode, ...]) -> None:
        """The box shows `shown`; a pending mode that became usable (its draft is in) is
        settled into Settings."""
        if shown == self.pending_mode and shown in usable:
            self.pending_mode = None
            settings.mode = shown

    def mode_chosen(self, settings: Settings, mode: Mode) -> None:
        """The user picked `mode`: the in-process engine keeps it as its mode; llama-server
        keeps a spec type for its next start."""
        if self.models.runs_locally:
            settings.mode = mode
        elif mode.runs_on_llama_server:
            settings.spec_type = mode.spec_type_argument

    @staticmethod
    def mode_after(settings: Settings) -> Mode | None:
        """The mode to show once `settings` are applied: llama-server's start type (it restarts
        at the next reply), or None to leave the box alone."""
        return Mode.llama(settings.spec_type) if settings.engine == EngineKind.LLAMA_SERVER else None

    def compare_mode(self, mode: Mode) -> Mode:
        """Compare sets a drafting mode against plain decoding: off compares auto (or n-gram
        where auto is not offered)."""
        if mode != OFF:
            return mode
        return AUTO if AUTO in self.models.modes else NGRAM

    # --- the model bar and the picker ------------------------------------------------------

    @staticmethod
    def with_engine(settings: Settings, kind: str) -> Settings:
        return dataclasses.replace(settings, engine=kind)

    @staticmethod
    def with_target(settings: Settings, path: str) -> Settings:
        """`path` as the target; another app's model is kept by its reference (as_setting),
        so the title, the status bar and Settings name it, and it loads after a restart."""
        return dataclasses.replace(settings, target_path=as_setting(
            path, settings.added_model_folders()) or None)

    def with_draft(self, settings: Settings, choice: str, mode: Mode) -> tuple[Settings, Mode]:
        """A draft chosen in the model bar or the picker: the Settings to apply and the mode to
        show. MTP moves to llama-server (the target drafts for itself there); a draft file is
        swapped in and draft mode waits until it has loaded (auto stays auto: it uses the
        draft model as well)."""
        if choice == DRAFT_MTP:
            return dataclasses.replace(settings, engine=EngineKind.LLAMA_SERVER,
                                       spec_type="draft-mtp"), Mode.llama("draft-mtp")
        if choice == DRAFT_NGRAM:
            return dataclasses.replace(settings, draft_path=None), NGRAM
        if choice == NO_DRAFT:
            return (dataclasses.replace(settings, draft_path=None),
                    OFF if mode in (DRAFT, NGRAM) else mode)
        choice = as_setting(choice, settings.added_model_folders())  # as with_target
        if mode == AUTO:  # auto drafts with the new model too: the mode stays as chosen
            return dataclasses.replace(settings, draft_path=choice), mode
        self.pending_mode = DRAFT
        return dataclasses.replace(settings, draft_path=choice), DRAFT

    # --- machines lost under a split model -------------------------------------------------

    @staticmethod
    def machines_lost(settings: Settings, message: str) -> tuple[str, ...]:
        """The RPC machines a failed reply names as gone (llama-server only)."""
        return machines_gone(message) if settings.engine == EngineKind.LLAMA_SERVER else ()

    @staticmethod
    def without(settings: Settings, machines: tuple[str, ...]) -> Settings:
        """Settings ▸ Engine ▸ Use other machines, less `machines`."""
        kept = [a for a in rpc_addresses(settings.rpc_servers) if a not in machines]
        return dataclasses.replace(settings, rpc_servers=", ".join(kept))
