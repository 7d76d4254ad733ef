"""How the engine thread (engine_worker.py) opens what a spec names, on its own thread: the
target (the default model's file or its converted copy, a found model's file, the context that
fits), in process or as a server (llama-server found or built and started, or a remote one),
then its draft; and what the window is told meanwhile (the load's words and progress) and
after (Loaded). EngineWorker extends ModelOpening."""

from __future__ import annotations

import traceback
from dataclasses import replace

from draftlight.engine.server.process import HEALTH_TIMEOUT
from draftlight.engine.server.rpc import placement
from draftlight.engine_kind import EngineKind
from draftlight.engine_spec import EngineSpec, with_model_files
from draftlight.launch import resolve_context
from draftlight.ui.engine.load_words import loading_words, mtp_layers, one_line
from draftlight.ui.engine.loaded import Loaded, Loading, LoadFailed, Preparing


class ModelOpening:
    """Uses the worker's factory, engine, signals (load_event, server_log) and _closing."""

    def _open(self, spec: EngineSpec, quiet: bool):
        """The target's engine opened (the window told as it loads): (the spec it was opened
        from, its target's name, the load's notices, why its context is what it is); None if
        it failed (said) or the window closes."""
        try:
            if not self._capabilities_sent:
                self.load_event.emit(self.factory.capabilities())
                self._capabilities_sent = True
            self._close_engine()
            notices, context_note = [], ""
            # a found model is called by its reference ("ollama:qwen2.5:7b"), not its blob's hash
            reference = spec.target_path if spec.target_name == spec.target_path else None
            if spec.engine != EngineKind.REMOTE:
                spec = with_model_files(spec)  # "ollama:qwen2.5:7b" typed in Settings
                spec, notices = self._resolve_target(spec)
                spec, context_note = resolve_context(spec)  # automatic: what fits
            self.n_ctx = spec.n_ctx
            if spec.engine == EngineKind.LOCAL:
                words = loading_words(reference or spec.target_name, spec.target_path)
                if not quiet:
                    self.load_event.emit(Loading(words))
                self.engine = self.factory.load_engine(
                    replace(spec, draft_path=None), should_cancel=self._closing,
                    on_progress=None if quiet else self._load_progress(words))
            else:
                self.engine = self._open_server(spec)
            self.engine_kind = spec.engine
        except Exception as exc:  # noqa: BLE001 - shown as one line; the app stays usable
            if self._closing():
                return  # cancelled because the window closes: nobody is left to tell
            if not isinstance(exc, (OSError, ImportError)) and "draftlight." not in type(exc).__module__:
                traceback.print_exc()
            self.load_event.emit(LoadFailed(one_line(exc)))
            return None
        return spec, reference or spec.target_name, notices, context_note

    def _with_draft(self, spec: EngineSpec, name: str, notices: list[str], context_note: str, *,
                    quiet: bool) -> Loaded:
        """What the load says once its engine is open: a server's own modes and placement, or
        the in-process engine with its draft attached (a draft refused is said, the target
        stays)."""
        loaded = Loaded(name, notices=tuple(notices + self._notices(spec)),
                        mtp_layers=mtp_layers(spec.target_path) if spec.engine != EngineKind.REMOTE else 0,
                        n_ctx=spec.n_ctx if spec.engine != EngineKind.REMOTE else 0,
                        context_note=context_note,
                        target_path=spec.target_path if spec.engine != EngineKind.REMOTE else "")
        if spec.engine != EngineKind.LOCAL:
            # the server's own modes; it is given its draft model on its command line
            loaded = replace(loaded, modes=tuple(self.engine.modes),
                             draft=spec.draft_name if spec.engine == EngineKind.LLAMA_SERVER else None,
                             placement=placement(self.engine.log) if spec.rpc_servers else "")
        elif spec.draft_path:
            try:
                if not quiet:
                    self.load_event.emit(Loading(f"Loading draft {spec.draft_name}…"))
                self.factory.attach_draft(self.engine, spec, should_cancel=self._closing)
                loaded = replace(loaded, draft=spec.draft_name, draft_path=spec.draft_path)
            except Exception as exc:  # noqa: BLE001
                loaded = replace(loaded, draft_error=one_line(exc))
        return loaded

    def _load_progress(self, words: str):
        """A callback for llama.cpp's load reports (on this thread): `preparing` with the
        percentage, each once."""
        shown = [-1]

        def report(fraction: float) -> None:
            percent = int(100 * min(max(fraction, 0.0), 1.0))
            if percent != shown[0]:
                shown[0] = percent
                self.load_event.emit(Preparing(words, percent))

        return report

    def _open_server(self, spec: EngineSpec):
        """llama-server (found, else built, then started) or a remote server. Cancelled, like
        a conversion, when the window closes."""
        if spec.engine == EngineKind.REMOTE:
            self.load_event.emit(Loading(f"Connecting to {spec.server_url}…"))
            return self.factory.open_remote(spec)
        self.load_event.emit(Loading(f"Starting llama-server with {spec.target_name}… (it "
                                     f"has {HEALTH_TIMEOUT:.0f} s to load the model)"))
        return self.factory.open_llama_server(
            spec, report=lambda what, percent: self.load_event.emit(Preparing(what, percent)),
            on_log=self.server_log.emit, should_cancel=self._closing)

    def _resolve_target(self, spec: EngineSpec) -> tuple[EngineSpec, list[str]]:
        """A spec without a target means the default model: its converted copy, or until that
        is made (in the background, _make_default_copy) the bundled file itself."""
        if spec.target_path:
            return spec, []
        path, self._convert_default = self.factory.default_now()
        return replace(spec, target_path=path), []

    def _notices(self, spec: EngineSpec) -> list[str]:
        """What the user should know about the loaded target (how it was loaded, a missing
        chat template): the engine's own load notices."""
        return list(self.engine.load_notices)
