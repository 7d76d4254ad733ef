"""The user's settings: one dataclass, stored as TOML in paths.config_dir()/settings.toml.

A file that cannot be read or holds wrong values is never half-used: the defaults are used, the
file is renamed aside (settings.toml.bad-YYYYmmdd-HHMMSS) and `load_settings` returns a one-line
message for the UI to show.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Callable

import tomli_w

from draftlight import paths
from draftlight.engine_kind import EngineKind
from draftlight.modes import AUTO, Mode

FILE_NAME = "settings.toml"


@dataclass
class Settings:
    target_path: str | None = None  # target GGUF; None = the bundled SmolLM2-135M
    draft_path: str | None = None  # draft GGUF sharing the target's vocabulary; None = none
    n_ctx: int = 0  # context window in tokens; 0 = what fits (store.memory.fitting_context)
    n_threads: int = 0  # CPU threads; 0 = automatic
    target_gpu_layers: int = 0  # layers offloaded to the GPU (-1 = all); CPU builds ignore it
    draft_gpu_layers: int = 0
    temperature: float = 0.0  # 0 = greedy
    top_k: int = 0  # 0 = off
    top_p: float = 1.0  # 1 = off
    min_p: float = 0.0  # 0 = off
    seed: int | None = None  # None = a new random seed each reply
    max_tokens: int = 512  # new tokens per reply at most
    system_prompt: str = ""
    mode: Mode = AUTO  # speculation mode (settings.toml's text; "" there is auto)
    show_highlights: bool = True  # colour accepted draft runs
    flash_drafts: bool = True  # accepted runs arrive in a bright colour that fades to their tint
    palette: str = "default"  # highlight colours: "default", "colourblind" or "contrast"
    serve_port: int = 8080  # File > Serve on localhost listens on 127.0.0.1 here; 0 = any free
    serve_origins: str = ""  # web pages allowed to call it (CORS), space-separated origins
    # the key it asks for ("Authorization: Bearer KEY"), made by Settings; "" = none asked for
    serve_api_key: str = ""
    # Which engine answers: "local" (llama.cpp in this process, Draftlight's drafters),
    # "llama-server" (llama.cpp's server, started here, with --spec-type spec_type) or
    # "remote" (a running OpenAI-compatible server at server_url)
    engine: EngineKind = EngineKind.LOCAL
    llama_server: str = ""  # the llama-server binary; "" = PATH, else the one we build
    spec_type: str = "ngram-mod"  # llama-server's --spec-type (a comma list chains types)
    server_url: str = ""  # the remote engine's address, e.g. http://192.168.1.20:8080
    server_api_key: str = ""  # its API key ("" = none)
    server_model: str = ""  # the model to ask it for ("" = its only one, from /v1/models)
    # llama-server engine: other machines' rpc-servers the model is split over, "host:port, ..."
    rpc_servers: str = ""
    # Where the window was left: its geometry (Qt's saveGeometry, base64; "" = the default
    # size) and the conversation it showed (0 = a new one)
    window_geometry: str = ""
    last_conversation: int = 0
    # Folders of GGUF files to list besides other apps' (one per line; `models add-folder`)
    model_folders: str = ""

    def __post_init__(self) -> None:  # text from settings.toml, parsed once (a ValueError)
        self.engine = EngineKind.parse(self.engine)
        if isinstance(self.mode, str):
            self.mode = Mode.parse(self.mode) if self.mode.strip() else AUTO

    def added_model_folders(self) -> list[Path]:
        """model_folders as paths (`draftlight models add-folder`)."""
        return [Path(line.strip()).expanduser() for line in self.model_folders.splitlines()
                if line.strip()]

    def check(self) -> None:
        """Raise ValueError, in plain words, if a value is out of range."""
        problem = broken_rule(self, {})
        if problem:
            raise ValueError(problem)
        if not 0 <= self.serve_port <= 65535:
            raise ValueError("the server port must be between 0 and 65535")
        if self.serve_api_key != "".join(self.serve_api_key.split()):
            raise ValueError("the server's API key must not contain spaces")
        if self.palette not in ("default", "colourblind", "contrast"):
            raise ValueError("palette must be default, colourblind or contrast")
        self.sampling_params().validate()

    def sampling_params(self):
        from draftlight.engine.core.sampling import SamplingParams
        return SamplingParams(temperature=self.temperature, top_k=self.top_k, top_p=self.top_p,
                              min_p=self.min_p, seed=self.seed, max_tokens=self.max_tokens)


def _said(check: Callable[[str], object], value: str, errors) -> str | None:
    """What `check(value)` objects to, in its own words (None: nothing)."""
    try:
        check(value)
    except errors as exc:
        return str(exc)
    return None


def _rpc_problem(value: str) -> str | None:
    from draftlight.engine.core.errors import EngineError
    from draftlight.engine.server.rpc import rpc_addresses
    return _said(rpc_addresses, value, EngineError)


def _spec_type_problem(value: str) -> str | None:
    from draftlight.modes import ModeError, spec_types_argument
    return _said(spec_types_argument, value, ModeError)


@dataclass(frozen=True)
class Rule:
    """One option's rule, the same for Settings.check and EngineSpec.validate (engine_spec.py),
    which both have the field: `problem` says what is wrong with a value ("{name}" stands for
    the option as the reader knows it), None when it is fine."""
    field: str
    problem: Callable[[object], str | None]


RULES = (
    Rule("n_ctx", lambda v: None if v == 0 or v >= 256 else
         "{name} must be 0 (automatic: what fits) or at least 256 tokens"),
    Rule("n_threads", lambda v: None if v >= 0 else "{name} must be 0 (automatic) or more"),
    Rule("target_gpu_layers", lambda v: None if v >= -1 else "{name} must be -1 (all) or more"),
    Rule("draft_gpu_layers", lambda v: None if v >= -1 else "{name} must be -1 (all) or more"),
    Rule("rpc_servers", _rpc_problem),
    Rule("spec_type", _spec_type_problem),
)


def broken_rule(options, names: dict[str, str]) -> str | None:
    """The first of RULES that `options` (Settings or an EngineSpec) breaks, in words: the
    option named by `names` (a command line's flag), else by its field; None if none."""
    for rule in RULES:
        problem = rule.problem(getattr(options, rule.field))
        if problem:
            return problem.replace("{name}", names.get(rule.field, rule.field))
    return None


def settings_path() -> Path:
    return paths.config_dir() / FILE_NAME


def _types_of(name: str) -> tuple[type, ...]:
    """Accepted TOML value types for a field (ints are fine where floats are expected)."""
    default = Settings.__dataclass_fields__[name].default
    if name in ("target_path", "draft_path", "engine", "mode"):  # engine, mode: Settings parses
        return (str,)
    if name == "seed":
        return (int,)
    if isinstance(default, bool):
        return (bool,)
    if isinstance(default, float):
        return (float, int)
    return (type(default),)


def from_dict(data: dict) -> Settings:
    """Build Settings from parsed TOML; unknown keys are ignored (a newer app may add some)."""
    values = {}
    for f in fields(Settings):
        if f.name not in data:
            continue
        value = data[f.name]
        types = _types_of(f.name)
        # bool is a subclass of int: refuse true/false where a number is expected.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ValueError(f"{f.name} has the wrong type ({type(value).__name__})")
        if float in types:
            value = float(value)
        values[f.name] = value
    settings = Settings(**values)
    settings.check()
    return settings


def to_dict(settings: Settings) -> dict:
    # tomli_w cannot write None: a missing key means "default", which for these fields is None.
    values = dataclasses.asdict(settings) | {"mode": str(settings.mode)}
    return {k: v for k, v in values.items() if v is not None}


def load_settings(path: Path | None = None) -> tuple[Settings, str | None]:
    """Return (settings, message): message is None, or one line saying the file was set aside."""
    path = path or settings_path()
    try:
        with path.open("rb") as handle:
            return from_dict(tomllib.load(handle)), None
    except FileNotFoundError:
        return Settings(), None
    except (OSError, tomllib.TOMLDecodeError, ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        aside = paths.move_aside(path)
        where = f"it was renamed to {aside.name}" if aside else "it could not be renamed"
        return Settings(), f"Settings file could not be used ({reason}); defaults apply and {where}."


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write atomically: a temp file in the same folder, then os.replace."""
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=".settings-",
                                         suffix=".tmp", delete=False)
    try:
        with handle:
            tomli_w.dump(to_dict(settings), handle)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def added_model_folders() -> list[Path]:
    """The folders of GGUF files the user added, from the saved settings (none if they cannot
    be read: the settings' own problem is reported where they are loaded)."""
    return load_settings()[0].added_model_folders()
