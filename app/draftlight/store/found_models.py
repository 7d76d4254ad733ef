"""GGUF models other apps already keep on this computer, found where each app really puts them
and used in place: nothing is copied, moved, renamed or written next to them.

    Ollama       $OLLAMA_MODELS, else ~/.ollama/models (and the Linux service's
                 /usr/share/ollama/.ollama/models): manifests/<registry>/<namespace>/<model>/<tag>
                 are JSON; the layer of media type application/vnd.ollama.image.model is the GGUF,
                 blobs/sha256-<hex>. Shown as model:tag (namespace/model:tag outside "library").
    LM Studio    ~/.lmstudio/models/<publisher>/<repo>/*.gguf, and the older
                 ~/.cache/lm-studio/models.
    Hugging Face $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub:
                 models--ORG--REPO/snapshots/REV/FILE (symlinks into blobs/), newest snapshot.
    llama.cpp    $LLAMA_CACHE, else its cache folder ($XDG_CACHE_HOME or ~/.cache, on macOS
                 ~/Library/Caches, on Windows %LOCALAPPDATA%, then llama.cpp/): files of -hf.
    Jan          its data folder's models/ (models/llamacpp/<model>/*.gguf in newer versions):
                 ~/.config/Jan/data ($XDG_CONFIG_HOME/Jan/data), ~/.local/share/Jan/data, the
                 older ~/jan; macOS ~/Library/Application Support/Jan/data; Windows
                 %APPDATA%/Jan/data.
    GPT4All      its download folder: ~/.local/share/nomic.ai/GPT4All ($XDG_DATA_HOME); macOS
                 ~/Library/Application Support/nomic.ai/GPT4All; Windows
                 %LOCALAPPDATA%/nomic.ai/GPT4All; its Python package's ~/.cache/gpt4all.

docs/models.md says where each layout was read. Only listing, stat() and a file's first four
bytes here (no header is read): the lists that show these call it on the GUI thread. Parts of a split model after the
first, partial downloads and vision projectors are left out; a folder that is missing or cannot
be read is silently skipped. An entry that only looks like a model (a manifest that cannot be
read, a blob or a file named .gguf that is not a regular GGUF file) is skipped with one line
(skipped_entries), and never loses the rest.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from draftlight import bounded_json
from draftlight.regular_files import open_regular
from draftlight.store.app_folders import (gpt4all_roots, hugging_face_roots, jan_roots,
                                          llama_cpp_roots, lm_studio_roots, ollama_roots)
from draftlight.store.model_names import split_part
from draftlight.user_messages import visible

OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
MAX_MANIFEST_BYTES = 1 << 20  # Ollama's are a few hundred bytes
PARTIAL_SUFFIXES = (".partial", ".incomplete", ".downloading", ".part", ".tmp")
# Schemes of a found model's reference, as --target and --draft take it ("ollama:qwen2.5:7b")
SCHEMES = {"ollama": "Ollama", "lmstudio": "LM Studio", "hf": "Hugging Face cache",
           "llamacpp": "llama.cpp", "jan": "Jan", "gpt4all": "GPT4All",
           "folder": "a folder you added"}
_MEMO_SECONDS = 10.0  # a list asked for again within this is the one found last
_memo: tuple[float, tuple, list, list] | None = None  # (when, key, models, skipped lines)


@dataclass(frozen=True)
class FoundModel:
    name: str  # as the app that keeps it names it: "qwen2.5:7b", "org/Repo/file.gguf"
    path: Path  # the GGUF (the first part of a split model)
    app: str  # one of SCHEMES' values: "Ollama", "LM Studio", "Hugging Face cache", …
    size: int  # bytes, every part of a split model
    # the same file as other apps know it (their references: "lmstudio:org/Repo/f.gguf"): one
    # file, one row, that names every app keeping it
    also: tuple[str, ...] = ()

    @property
    def reference(self) -> str:
        """What --target and --draft take: "ollama:qwen2.5:7b"."""
        scheme = next(s for s, app in SCHEMES.items() if app == self.app)
        return f"{scheme}:{self.name}"


def find_models(env=None, home: Path | None = None,
                folders: list[Path] | None = None) -> list[FoundModel]:
    """Every model found, app by app, each app's in name order. With DRAFTLIGHT_HOME set and
    no `home` given, only the folders the apps' variables name are looked at."""
    global _memo
    env = os.environ if env is None else env
    if home is None and env.get("DRAFTLIGHT_HOME"):
        # An isolated Draftlight (tests, a portable install) looks only where a variable
        # points, never in the user's own folders.
        home = None
    else:
        home = Path(home) if home is not None else Path.home()
    folders = list(folders or ())
    key = (id(env), str(home), tuple(map(str, folders)), tuple(env.get(k, "") for k in (
        "OLLAMA_MODELS", "HF_HUB_CACHE", "HF_HOME", "LLAMA_CACHE", "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA", "LOCALAPPDATA")))
    if _memo is not None and _memo[1] == key and time.monotonic() - _memo[0] < _MEMO_SECONDS:
        return list(_memo[2])
    found: list[FoundModel] = []
    skipped: list[str] = []
    seen: dict[Path, tuple[int, int]] = {}  # real file -> (app's place in scans, its index)
    scans = (("Ollama", _ollama), ("LM Studio", _lm_studio),
             ("Hugging Face cache", _hugging_face), ("llama.cpp", _llama_cpp),
             ("Jan", _jan), ("GPT4All", _gpt4all),
             ("a folder you added", lambda _env, _home: _added(folders)))
    by_app: list[list[FoundModel]] = []
    for app, scan in scans:
        models: list[FoundModel] = []
        by_app.append(models)
        for name, path, size in scan(env, home):
            if name is None:  # (None, path, why): an entry that looks like a model and is not
                skipped.append(f"{app}: skipped {visible(str(path))} ({size})")
                continue
            real = _resolved(path)
            if real is None:
                continue
            if real in seen:  # found already: that row names this app too
                where, index = seen[real]
                first = by_app[where][index]
                again = FoundModel(name, path, app, size).reference
                if again != first.reference and again not in first.also:
                    by_app[where][index] = FoundModel(first.name, first.path, first.app,
                                                      first.size, first.also + (again,))
                continue
            seen[real] = (len(by_app) - 1, len(models))
            models.append(FoundModel(name, path, app, size))
    for models in by_app:
        found += sorted(models, key=lambda m: m.name.lower())
    _memo = (time.monotonic(), key, found, skipped)
    return list(found)


def skipped_entries() -> list[str]:
    """One line for each entry the last find_models() skipped because it only looked like a
    model (a manifest that cannot be read, a blob or a file named .gguf that is not one); the
    rest of the list was shown."""
    return list(_memo[3]) if _memo is not None else []


def every_model(folders=()) -> list:
    """Draftlight's own models (store.installed.list_installed), then the found ones (and those
    of `folders`, the ones the user added: settings.added_model_folders) as InstalledModels
    whose name is their reference and whose source is their app."""
    from draftlight.store.installed import InstalledModel, list_installed
    return list_installed() + [InstalledModel(m.reference, m.path, m.app, size=m.size,
                                              also=m.also)
                               for m in find_models(folders=folders)]


OWN_SOURCES = ("bundled", "hub", "local", "converted")  # the rest: the app named keeps it


def forget_found() -> None:
    """The next find_models() looks again (Refresh; a test that changed the folders)."""
    global _memo
    _memo = None


def resolve_reference(text: str, env=None, home: Path | None = None,
                      folders=()) -> Path | None:
    """The file of "ollama:qwen2.5:7b" (any of SCHEMES, or a found model's bare name when it is
    unique); None when `text` names no found model."""
    scheme, _, name = text.partition(":")
    models = find_models(env, home, folders)
    if scheme in SCHEMES and name:
        matches = [m for m in models if m.app == SCHEMES[scheme] and m.name == name
                   or text in m.also]
        if not matches and scheme == "ollama" and ":" not in name:
            matches = [m for m in models if m.app == "Ollama" and m.name == f"{name}:latest"]
    else:
        matches = [m for m in models if m.name == text]
    return matches[0].path if len(matches) == 1 else None


# --- scanning ------------------------------------------------------------------------------------

def _ollama(env, home: Path):
    for root in ollama_roots(env, home):
        manifests = root / "manifests"
        for manifest in _files_under(manifests, depth=4):
            parts = manifest.relative_to(manifests).parts  # registry, namespace, model, tag
            if len(parts) != 4:
                continue
            layer, why = _model_layer(manifest)
            if layer is None:
                if why:
                    yield None, manifest, why
                continue
            _registry, namespace, model, tag = parts
            name = f"{model}:{tag}" if namespace == "library" else f"{namespace}/{model}:{tag}"
            blob = root / "blobs" / layer.replace(":", "-")
            size = _size(blob)
            if size is None or not _is_gguf(blob):
                yield None, blob, (f"the model blob of {name} is "
                                   + ("missing, or not a regular file" if size is None
                                      else "not a GGUF file"))
                continue
            yield name, blob, size


def _model_layer(manifest: Path) -> tuple[str | None, str]:
    """(the digest "sha256:…" of a manifest's model layer, ""); else (None, why it cannot be
    read: not a regular file, over MAX_MANIFEST_BYTES, nested too deep, not JSON, a digest
    that names a path), or (None, "") for a manifest without a model layer."""
    try:
        data = bounded_json.read(manifest, MAX_MANIFEST_BYTES)
    except bounded_json.BoundsError as exc:
        return None, str(exc)
    except UnicodeDecodeError:
        return None, "not text"
    except ValueError:
        return None, "not JSON"
    except OSError as exc:
        return None, exc.strerror or "cannot be read"
    layers = data.get("layers") if isinstance(data, dict) else None
    for layer in layers if isinstance(layers, list) else ():
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
            digest = layer.get("digest")
            if isinstance(digest, str) and digest.startswith("sha256:") and "/" not in digest:
                return digest, ""
            return None, "its model layer's digest is not a sha256"
    return None, "" if isinstance(layers, list) else "not an Ollama manifest"


def _added(folders: list[Path]):
    for root in folders:
        yield from _ggufs(root, 3, lambda path, root=root:
                          f"{root.name}/{'/'.join(path.relative_to(root).parts)}")


def _lm_studio(env, home: Path):
    for root in lm_studio_roots(env, home):
        yield from _ggufs(root, 3, lambda path, root=root: "/".join(path.relative_to(root).parts))


def _hugging_face(env, home: Path):
    for root in hugging_face_roots(env, home):
        for repo in _children(root):
            if not repo.name.startswith("models--") or not repo.is_dir():
                continue
            repo_id = repo.name.removeprefix("models--").replace("--", "/")
            snapshots = sorted(_children(repo / "snapshots"), key=_mtime, reverse=True)
            names: set[str] = set()
            for snapshot in snapshots:  # newest first: an older copy of a file is left out
                for name, path, size in _ggufs(snapshot, 3, lambda path, snapshot=snapshot:
                                               "/".join(path.relative_to(snapshot).parts)):
                    if name is None:
                        yield name, path, size
                    elif name not in names:
                        names.add(name)
                        yield f"{repo_id}/{name}", path, size


def _llama_cpp(env, home: Path):
    for root in llama_cpp_roots(env, home):
        yield from _ggufs(root, 2, lambda path, root=root: "/".join(path.relative_to(root).parts))


def _jan_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).parts
    if parts[0] == "llamacpp":  # the engine's folder in newer versions: not a name
        parts = parts[1:]
    if len(parts) > 1 and path.stem == "model":  # …/<model>/model.gguf
        parts = parts[:-1]
    return "/".join(parts)


def _jan(env, home: Path):
    for root in jan_roots(env, home):
        yield from _ggufs(root, 4, lambda path, root=root: _jan_name(path, root))


def _gpt4all(env, home: Path):
    for root in gpt4all_roots(env, home):
        yield from _ggufs(root, 1, lambda path: path.name)


@dataclass(frozen=True)
class _Skipped:
    """A file named like a model that is not one; a scan passes it on as (None, path, why)."""
    path: Path
    why: str


def _ggufs(root: Path, depth: int, name_of):
    """(name, path, size) of each GGUF under `root` (`name_of(path)` names it), and
    (None, path, why) for each file that is only named like one."""
    for path in _ggufs_under(root, depth):
        if isinstance(path, _Skipped):
            yield None, path.path, path.why
        else:
            yield name_of(path), path, _model_size(path)


def _ggufs_under(root: Path, depth: int):
    """Chat-model GGUFs under `root`: the first part of a split model, never another part, a
    partial download, a vision projector, or a file that only has the name."""
    for path in _files_under(root, depth):
        name = path.name.lower()
        if not name.endswith(".gguf") or name.endswith(PARTIAL_SUFFIXES) or "mmproj" in name:
            continue
        part = split_part(path.name)
        if part is not None and part[0] != 1:
            continue
        if _size(path) is None:
            yield _Skipped(path, "missing, or not a regular file")
        elif not _is_gguf(path):  # named so, and not one by its first bytes
            yield _Skipped(path, "not a GGUF file")
        else:
            yield path


def _files_under(root: Path, depth: int):
    """Everything but folders under `root` (files, links, FIFOs, devices: the caller tells
    them apart without opening them), at most `depth` folders down, in name order; a folder
    that cannot be read is skipped."""
    for entry in sorted(_children(root), key=lambda p: p.name):
        try:
            if entry.is_dir():
                if depth > 1:
                    yield from _files_under(entry, depth - 1)
            else:
                yield entry
        except OSError:
            continue


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:  # missing, unmounted, not allowed: silently nothing
        return []


def _model_size(path: Path) -> int:
    """A file's size; a split model's is every part's."""
    part = split_part(path.name)
    if part is None:
        return _size(path) or 0
    total = 0
    for index in range(1, part[1] + 1):
        sibling = path.with_name(path.name.replace("-00001-of-", f"-{index:05d}-of-"))
        total += _size(sibling) or 0
    return total


def _size(path: Path) -> int | None:
    """A regular file's size; None for anything else (a FIFO or a device is never opened)."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _is_gguf(path: Path) -> bool:
    """A regular file that starts with the GGUF magic (regular_files: a FIFO is not waited on)."""
    try:
        with open_regular(path) as stream:
            return stream.read(4) == b"GGUF"
    except OSError:
        return False
