"""Each app's folders read into found models: for Ollama, LM Studio, the Hugging Face cache,
llama.cpp, Jan, GPT4All and the folders the user added, a scan that yields (name, path, size) for
each GGUF it keeps, or (None, path, why) for an entry that only looks like one. Only listing,
stat() and a file's first four bytes (no header is read); a folder that is missing or cannot be
read is silently nothing. store/found_models.py merges the scans into one list.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from draftlight.regular_files import open_regular
from draftlight.store.app_folders import (gpt4all_roots, hugging_face_roots, jan_roots,
                                          llama_cpp_roots, lm_studio_roots, ollama_roots)
from draftlight.store.model_names import split_part
from draftlight.store.ollama_manifest import OLLAMA_MODEL_LAYER  # noqa: F401 (importable here)
from draftlight.store.ollama_manifest import BadManifest, read_model_layer

PARTIAL_SUFFIXES = (".partial", ".incomplete", ".downloading", ".part", ".tmp")


def app_scans(folders: list[Path]):
    """(app, scan) for each app, in the order its models are listed; `scan(env, home)` yields
    (name, path, size) for each model, or (None, path, why) for an entry that is not one."""
    return (("Ollama", _ollama), ("LM Studio", _lm_studio),
            ("Hugging Face cache", _hugging_face), ("llama.cpp", _llama_cpp),
            ("Jan", _jan), ("GPT4All", _gpt4all),
            ("a folder you added", lambda _env, _home: _added(folders)))


def _ollama(env, home: Path):
    for root in ollama_roots(env, home):
        manifests = root / "manifests"
        for manifest in _files_under(manifests, depth=4):
            parts = manifest.relative_to(manifests).parts  # registry, namespace, model, tag
            if len(parts) != 4:
                continue
            try:
                layer = read_model_layer(manifest)
            except BadManifest as exc:
                yield None, manifest, str(exc)
                continue
            if layer is None:
                continue
            _registry, namespace, model, tag = parts
            name = f"{model}:{tag}" if namespace == "library" else f"{namespace}/{model}:{tag}"
            blob = root / "blobs" / layer.blob_name
            size = _size(blob)
            if size is None or not _is_gguf(blob):
                yield None, blob, (f"the model blob of {name} is "
                                   + ("missing, or not a regular file" if size is None
                                      else "not a GGUF file"))
            elif layer.size is not None and size != layer.size:  # not the blob it names
                yield None, blob, (f"the model blob of {name} has {size:,} bytes, its "
                                   f"manifest says {layer.size:,}")
            else:
                yield name, blob, size


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


def real_path(path: Path) -> Path | None:
    """The file a path names, links followed; None when it cannot be resolved."""
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
