"""The load-time choices of an engine, made once and checked: an EngineSpec from the window's
Settings or a command line (argparse's namespace read once, by EngineArguments), validated by
settings.RULES and the rules only a spec has, one sentence per bad option (SpecError); and what
a model is called and which file a found model's reference names. launch.py opens the engine a
spec names.

    spec = EngineSpec.from_settings(settings)            # the window
    spec = EngineSpec.from_arguments(args, settings)     # draftlight chat / serve / bench
    spec.validate()
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

from draftlight.engine_kind import EngineKind
from draftlight.modes import AUTO, REMOTE, Mode, ModeError
from draftlight.settings import Settings, broken_rule


class SpecError(ValueError):
    """An option that cannot work, in one sentence that names it."""


# Options as a command line's reader knows them, where settings.RULES' words name them
COMMAND_LINE_NAMES = {"n_ctx": "--ctx (the context window)", "n_threads": "threads",
                      "target_gpu_layers": "the target's GPU layers",
                      "draft_gpu_layers": "the draft's GPU layers"}


@dataclass(frozen=True)
class EngineArguments:
    """What a command line says about the engine: argparse's namespace read once, by these
    names (a command without one of the options leaves its default here)."""
    mode: Mode = AUTO  # --mode: argparse's type (modes.mode_argument) made it a Mode
    target: str | Path | None = None
    draft: str | Path | None = None
    ctx: int | None = None
    engine: str = ""  # --engine URL
    api_key: str = ""
    model: str = ""
    rpc: str = ""
    server_binary: str = ""

    @classmethod
    def read(cls, args) -> "EngineArguments":
        given = vars(args)
        return cls(**{f.name: given[f.name] for f in fields(cls)
                      if given.get(f.name) is not None})


@dataclass(frozen=True, kw_only=True)
class EngineSpec:
    """The load-time choices: a change to the target part reloads everything, a change to the
    draft part only swaps the draft model (in-process engine)."""

    target_path: str = ""  # "" = the default model (the window prepares it first)
    draft_path: str | None = None
    n_ctx: int = 4096  # 0 = automatic: resolve_context picks what fits
    n_threads: int = 0  # 0 = default_threads()
    target_gpu_layers: int = 0
    draft_gpu_layers: int = 0
    engine: EngineKind = EngineKind.LOCAL
    mode: Mode = AUTO  # the first mode replies use (the command line's --mode)
    llama_server: str = ""  # the llama-server binary; "" = find it (the window: else build it)
    spec_type: str = "ngram-mod"  # the --spec-type llama-server starts with (a comma list chains)
    server_url: str = ""  # the remote engine's address
    server_api_key: str = ""
    server_model: str = ""  # the remote model to ask for; "" = the server's only one
    rpc_servers: str = ""  # llama-server: other machines' rpc-servers, "host:port, ..."
    time_auto: bool = False  # in-process: time the models for auto while loading
    # in-process: measure later, one step at a time (Engine.measure_next; the window's worker
    # does while no request waits), with what the cache knows until then
    measure_later: bool = False
    # in-process: llama.cpp in a process of its own (engine/host/hosted.py): a crash there is one
    # line, and the next request starts it again
    hosted: bool = False

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "engine", EngineKind.parse(self.engine))
        except ValueError as exc:
            raise SpecError(str(exc)) from None
        if not isinstance(self.mode, Mode):  # parsed where it came in (modes.py)
            raise TypeError(f"EngineSpec.mode is a Mode, not {self.mode!r}")

    @classmethod
    def from_settings(cls, settings: Settings) -> "EngineSpec":
        """The window's engine; the draft is opened on its own (EngineWorker.load), and each
        reply names its mode (the toolbar's), so the spec's is only the engine's kind of mode."""
        return cls(target_path=settings.target_path or "", draft_path=settings.draft_path or None,
                   n_ctx=settings.n_ctx, n_threads=settings.n_threads,
                   target_gpu_layers=settings.target_gpu_layers,
                   draft_gpu_layers=settings.draft_gpu_layers, engine=settings.engine,
                   mode=REMOTE if settings.engine == EngineKind.REMOTE else AUTO,
                   llama_server=settings.llama_server,
                   spec_type=settings.spec_type, server_url=settings.server_url.strip(),
                   server_api_key=settings.server_api_key,
                   server_model=settings.server_model.strip(),
                   rpc_servers=settings.rpc_servers.strip(), measure_later=True)

    @classmethod
    def from_arguments(cls, args, settings: Settings) -> "EngineSpec":
        """A command line's engine (`args` from argparse, read by EngineArguments). A llama:…
        mode, or --rpc (a split runs on llama-server only), picks llama-server; --engine URL a
        remote server."""
        given = EngineArguments.read(args)
        mode, rpc, url = given.mode, given.rpc.strip(), given.engine.strip()
        engine = EngineKind.REMOTE if url else EngineKind.LLAMA_SERVER \
            if rpc or mode.runs_on_llama_server else EngineKind.LOCAL
        if engine == EngineKind.LLAMA_SERVER:
            mode = mode.on_llama_server()
        return cls(target_path=str(given.target or ""),
                   draft_path=str(given.draft) if given.draft else None,
                   n_ctx=given.ctx or settings.n_ctx, n_threads=settings.n_threads,
                   engine=engine, mode=REMOTE if url else mode,
                   llama_server=given.server_binary or settings.llama_server,
                   spec_type=mode.spec_type_argument if engine == EngineKind.LLAMA_SERVER else "none",
                   # --api-key is the remote server's only with --engine URL (serve's own
                   # --api-key is what its clients present: never sent on)
                   server_url=url, server_api_key=given.api_key if url else "",
                   server_model=given.model, rpc_servers=rpc, time_auto=mode == AUTO)

    def validate(self) -> None:
        """Raises SpecError, naming the option, for the first choice that cannot work: the
        rules Settings has too (settings.RULES), then those only a spec has."""
        from draftlight.engine.core.errors import EngineError
        from draftlight.engine.server.client import check_url
        problem = broken_rule(self, COMMAND_LINE_NAMES)
        if problem:
            raise SpecError(problem)
        if self.engine == EngineKind.REMOTE:
            try:
                check_url(self.server_url)
            except EngineError as exc:
                raise SpecError(str(exc)) from None
            return
        mode = Mode.llama(self.spec_type) if self.engine == EngineKind.LLAMA_SERVER else self.mode
        if mode.needs_draft_model and not self.draft_path:
            raise SpecError(f"--mode {mode} needs --draft PATH (a draft model)")

    def same_target(self, other: "EngineSpec") -> bool:
        """Whether `other` runs on the engine already loaded for this spec (else: reload)."""
        return self._engine_key() == other._engine_key()

    def _engine_key(self) -> tuple:
        if self.engine == EngineKind.REMOTE:
            return self.engine, self.server_url, self.server_api_key, self.server_model
        key = (self.engine, self.target_path, self.n_ctx, self.n_threads, self.target_gpu_layers)
        if self.engine == EngineKind.LLAMA_SERVER:  # its draft model is a command-line argument
            key += (self.llama_server, self.draft_path, self.rpc_servers)
        return key

    @property
    def target_name(self) -> str:
        if self.engine == EngineKind.REMOTE:
            return f"the server at {self.server_url}" if self.server_url else "a remote server"
        return model_name(self.target_path) if self.target_path else "the default model"

    @property
    def draft_name(self) -> str | None:
        return model_name(self.draft_path) if self.draft_path else None


def model_name(text: str) -> str:
    """What a model is called: a found model's reference as it is ("ollama:qwen2.5-coder:1.5b",
    not its blob's hash; its blob's path too, once a reference is resolved or where older
    settings kept the path), a file by its name."""
    from draftlight.store.found_models import SCHEMES
    if text.partition(":")[0] in SCHEMES and not Path(text).expanduser().exists():
        return text
    name = Path(text).name
    if name.startswith("sha256-"):  # an Ollama blob's name is its hash: call it as Ollama does
        from draftlight.store.found_models import reference_of
        return reference_of(text) or name
    return name


def model_file(text: str) -> str:
    """A path that exists, else the file of the model found on this computer that `text`
    names ("ollama:qwen2.5:7b", as `draftlight models list` shows it); what names neither is
    returned as it is, and the load says the file is missing."""
    if not text or Path(text).expanduser().exists():
        return text
    from draftlight.settings import added_model_folders
    from draftlight.store.found_models import resolve_reference
    found = resolve_reference(text, folders=added_model_folders())
    return str(found) if found is not None else text


def with_model_files(spec: EngineSpec) -> EngineSpec:
    """`spec` with found models' references (Settings may hold one) as their files."""
    if spec.engine == EngineKind.REMOTE:
        return spec
    return replace(spec, target_path=model_file(spec.target_path),
                   draft_path=model_file(spec.draft_path) if spec.draft_path else None)


def spec_for_command_line(args, settings: Settings) -> EngineSpec:
    """EngineSpec.from_arguments, checked: a bad option is a UserError that names it. Says so
    when --rpc moves the mode onto llama-server."""
    from draftlight.user_messages import UserError, note
    try:
        spec = EngineSpec.from_arguments(args, settings)
        spec.validate()
    except (SpecError, ModeError) as exc:
        raise UserError(str(exc)) from None
    if spec.engine == EngineKind.LLAMA_SERVER and spec.mode != EngineArguments.read(args).mode:
        note(f"--rpc runs on llama-server: mode {spec.mode}")
    return spec


def with_target(spec: EngineSpec, target: str | Path) -> EngineSpec:
    return replace(spec, target_path=str(target))
