"""One place turns "which models, which engine, which mode" into a running ChatEngine.

    spec = EngineSpec.from_settings(settings)            # engine_spec.py: the window's, or
    spec = EngineSpec.from_arguments(args, settings)     # draftlight chat / serve / bench
    engine = open_engine(spec, report=…, on_log=…, should_cancel=…)   # validates it first

Three engines (Settings.engine, an EngineKind): "local" is llama.cpp in this process with Draftlight's
drafters; "llama-server" is llama.cpp's server, started here as a child process; "remote" is an
OpenAI-compatible server already running somewhere. No Qt, and llama_cpp is imported only when
the in-process engine is opened: starting a llama-server never loads it here.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

from draftlight.engine_kind import EngineKind
from draftlight.engine_spec import EngineSpec

Report = Callable[[str, int], None]  # (what is happening, percent or -1)


def open_engine(spec: EngineSpec, *, report: Report | None = None,
                on_log: Callable[[str], None] | None = None,
                should_cancel: Callable[[], bool] = lambda: False,
                on_progress: Callable[[float], None] | None = None):
    """The ChatEngine `spec` names (its target must be a path: the default model is prepared
    before). With `report`, a missing llama-server is built (minutes, reported); without, the
    error says how to build it. Its `load_notices` say what the user should know.

    Raises:
        SpecError: a bad option. EngineError (ModelLoadError, ServerError, ServerBuildError,
        ServerStartError, InsufficientMemoryError): the engine could not be opened."""
    spec.validate()
    if spec.engine != EngineKind.REMOTE:
        refuse_what_is_not_a_file(spec)
    spec, _ = resolve_context(spec)
    if spec.engine == EngineKind.REMOTE:
        from draftlight.engine.server.client import Endpoint
        from draftlight.engine.server.server_engine import ServerEngine
        return ServerEngine.remote(Endpoint(spec.server_url, api_key=spec.server_api_key or None,
                                            model=spec.server_model or None))
    if spec.engine == EngineKind.LLAMA_SERVER:
        return _open_llama_server(spec, report, on_log, should_cancel)
    return _open_in_process(spec, should_cancel, on_progress)


def refuse_what_is_not_a_file(spec: EngineSpec) -> None:
    """ModelLoadError for a target or draft that is a FIFO, a device or a folder (a link to
    one too), before anything reads it: llama.cpp, llama-server and the header readers would
    otherwise wait on a FIFO for ever. A missing file is left to the loader's own words."""
    from draftlight.engine.core.errors import ModelLoadError
    from draftlight.regular_files import require_regular
    for path in filter(None, (spec.target_path, spec.draft_path)):
        try:
            require_regular(Path(path))
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise ModelLoadError(f"{exc.strerror or exc}: {path}") from None


def resolve_context(spec: EngineSpec) -> tuple[EngineSpec, str]:
    """`spec` with an automatic context (n_ctx 0) replaced by what fits in free memory with its
    draft, capped by the model's trained context (store.memory.fitting_context), and why, in a
    few words; a spec with a context of its own, or a remote one, as it is (and "")."""
    if spec.n_ctx != 0 or spec.engine == EngineKind.REMOTE or not spec.target_path:
        return spec, ""
    from draftlight.store.memory import fitting_context
    choice = fitting_context(spec.target_path, spec.draft_path)
    return replace(spec, n_ctx=choice.n_ctx), choice.why


def attach_draft(engine, spec: EngineSpec,
                 should_cancel: Callable[[], bool] | None = None) -> None:
    """Load `spec`'s draft model and attach it to an in-process engine already loaded (in the
    engine's host when it runs in one: the file is opened there); True from `should_cancel`
    stops its load. Raises as Engine.attach_draft does (a draft refused is closed)."""
    from draftlight.store.memory import check_models_fit
    spec, _ = resolve_context(spec)  # the worker passes the target's; a caller may not
    if spec.target_gpu_layers == 0 and spec.draft_gpu_layers == 0:
        check_models_fit(spec.target_path, spec.draft_path, n_ctx=spec.n_ctx)
    engine.attach_draft_file(spec.draft_path, load_options(spec, draft=True),
                             should_cancel=should_cancel)


def load_options(spec: EngineSpec, *, draft: bool = False):
    from draftlight.engine.core.load_options import LoadOptions
    return LoadOptions(n_ctx=spec.n_ctx, n_threads=spec.n_threads,
                       n_gpu_layers=spec.draft_gpu_layers if draft else spec.target_gpu_layers)


def _open_in_process(spec: EngineSpec, should_cancel: Callable[[], bool],
                     on_progress: Callable[[float], None] | None = None):
    from draftlight.engine.reply.generator import Engine
    from draftlight.store.memory import check_models_fit
    if spec.target_gpu_layers == 0:  # refuses, with the numbers, before anything loads
        check_models_fit(spec.target_path, spec.draft_path, n_ctx=spec.n_ctx)
    if spec.hosted:
        from draftlight.engine.host.hosted import HostedEngine, HostSpec
        return HostedEngine(HostSpec(spec.target_path, spec.draft_path, load_options(spec),
                                     load_options(spec, draft=True),
                                     measure_later=spec.measure_later,
                                     time_auto=spec.time_auto),
                            should_cancel=should_cancel, on_progress=on_progress)
    engine = Engine.load(spec.target_path, spec.draft_path, load_options(spec),
                         load_options(spec, draft=True), should_cancel=should_cancel,
                         measure_later=spec.measure_later, on_progress=on_progress)
    try:
        if spec.time_auto and not spec.measure_later:
            # times the models (once per machine, cached) while loading
            engine.prepare_auto(should_cancel)
    except BaseException:
        engine.close()
        raise
    return engine


def _open_llama_server(spec: EngineSpec, report: Report | None, on_log, should_cancel):
    """llama.cpp's server on `spec`'s models: the binary named (checked), else one on PATH or
    built before, else (with `report`) built now."""
    from draftlight.engine.server.build import build_server, find_server, server_for_terminal
    from draftlight.engine.server.server_engine import ServerEngine
    from draftlight.engine.server.process import ServerOptions
    from draftlight.engine.server.rpc import rpc_addresses
    if report is None:
        binary = server_for_terminal(spec.llama_server or None)
    else:
        binary = find_server(spec.llama_server or None) or build_server(report, should_cancel)
    repack, notices = _repack_for(binary)
    options = ServerOptions(target=Path(spec.target_path), spec_type=spec.spec_type,
                            draft=Path(spec.draft_path) if spec.draft_path else None,
                            n_ctx=spec.n_ctx, threads=spec.n_threads,
                            gpu_layers=spec.target_gpu_layers,
                            rpc=rpc_addresses(spec.rpc_servers), repack=repack)
    return ServerEngine.managed(binary, options, on_log=on_log, should_cancel=should_cancel,
                                notices=notices)


def _repack_for(binary: Path) -> tuple[bool, tuple[str, ...]]:
    """Whether llama-server may repack weights, and the note if not: our own build runs the
    in-process engine's llama.cpp libraries, so engine/llama/cpu_check.py's answer holds for it
    (another build that crashes at start is started again without: ManagedServer.start)."""
    from draftlight.engine.llama import cpu_check
    from draftlight.engine.llama.llama_load import extra_buffers_usable
    from draftlight.engine.server.build import built_server_path
    from draftlight.paths import bundled_model_path
    if Path(binary) != built_server_path() or bundled_model_path() is None:
        return True, ()
    if extra_buffers_usable(bundled_model_path()):
        return True, ()
    note = cpu_check.untold_note(cpu_check.cache_file())
    return False, (note,) if note else ()


def remove_what_crashes_left() -> list[Path]:
    """At each start (cli.main): what runs killed mid-way (SIGKILL, a power cut) left
    half-written, GBs each: `.converting` models and llama-server build folders; what another
    running Draftlight is making is kept (draftlight.lifetimes). Never fails a start."""
    from draftlight.engine.server.build import remove_abandoned_builds
    from draftlight.store.convert import remove_abandoned_conversions
    removed: list[Path] = []
    for remove in (remove_abandoned_conversions, remove_abandoned_builds):
        try:
            removed += remove()
        except OSError:  # no data or cache folder: nothing was left there either
            pass
    return removed
