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
import time
from dataclasses import dataclass
from pathlib import Path

from draftlight.store.app_scans import OLLAMA_MODEL_LAYER  # noqa: F401 (importable here)
from draftlight.store.app_scans import app_scans, real_path
from draftlight.user_messages import visible

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
    by_app: list[list[FoundModel]] = []
    for app, scan in app_scans(folders):
        models: list[FoundModel] = []
        by_app.append(models)
        for name, path, size in scan(env, home):
            if name is None:  # (None, path, why): an entry that looks like a model and is not
                skipped.append(f"{app}: skipped {visible(str(path))} ({size})")
                continue
            real = real_path(path)
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


def kept_as(model) -> str:
    """What Settings keep for a model of every_model(): a found model's reference, resolved to
    its file only when it loads (a tag updated in Ollama then loads its new file, and the
    window names it as its app does, not by a blob's hash), else Draftlight's own file's path."""
    return str(model.path) if model.source in OWN_SOURCES else model.name


def reference_of(path: str | Path, folders=()) -> str | None:
    """The reference of the found model whose file `path` is ("ollama:qwen2.5:7b" for its
    blob, chosen with Browse… or kept by an older version); None when no app keeps it."""
    real = real_path(Path(path).expanduser())
    if real is None or not real.is_file():
        return None
    return next((m.reference for m in find_models(folders=folders)
                 if real_path(m.path) == real), None)


def as_setting(text: str | None, folders=()) -> str | None:
    """`text` as Settings keep a chosen target or draft: the file of a model another app keeps
    becomes its reference (kept_as); anything else (a reference, Draftlight's own file, "")
    stays as it is."""
    if not text or text.partition(":")[0] in SCHEMES:
        return text
    return reference_of(text, folders) or text


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
