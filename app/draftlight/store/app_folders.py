"""Where each app keeps its models on this computer: the folders found_models.py scans, from
the app's own variables (OLLAMA_MODELS, HF_HUB_CACHE, LLAMA_CACHE, …) or its defaults per
platform. `home` None (an isolated Draftlight) gives only the folders a variable names.
docs/models.md says where each was read."""

from __future__ import annotations

import sys
from pathlib import Path


def ollama_roots(env, home: Path | None) -> list[Path]:
    if env.get("OLLAMA_MODELS"):
        return [Path(env["OLLAMA_MODELS"]).expanduser()]
    if home is None:
        return []
    roots = [home / ".ollama" / "models"]
    if sys.platform.startswith("linux"):
        roots.append(Path("/usr/share/ollama/.ollama/models"))
    return roots


def lm_studio_roots(env, home: Path | None) -> list[Path]:
    if home is None:
        return []
    return [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]


def hugging_face_roots(env, home: Path | None) -> list[Path]:
    if env.get("HF_HUB_CACHE"):
        return [Path(env["HF_HUB_CACHE"]).expanduser()]
    if env.get("HF_HOME"):
        return [Path(env["HF_HOME"]).expanduser() / "hub"]
    if home is None:
        return []
    cache = env.get("XDG_CACHE_HOME")
    return [(Path(cache) if cache else home / ".cache") / "huggingface" / "hub"]


def llama_cpp_roots(env, home: Path | None) -> list[Path]:
    if env.get("LLAMA_CACHE"):
        return [Path(env["LLAMA_CACHE"]).expanduser()]
    if home is None:
        return []
    if sys.platform == "darwin":
        return [home / "Library" / "Caches" / "llama.cpp"]
    if sys.platform == "win32":
        local = env.get("LOCALAPPDATA")
        return [Path(local) / "llama.cpp"] if local else []
    cache = env.get("XDG_CACHE_HOME")
    return [(Path(cache) if cache else home / ".cache") / "llama.cpp"]


def jan_roots(env, home: Path | None) -> list[Path]:
    """Jan's models folders, newest layout first (Jan moves its data folder between versions;
    its own setting, when changed, is not read)."""
    if home is None:
        return []
    if sys.platform == "darwin":
        data = [home / "Library" / "Application Support" / "Jan" / "data"]
    elif sys.platform == "win32":
        data = [Path(env["APPDATA"]) / "Jan" / "data"] if env.get("APPDATA") else []
    else:
        config = env.get("XDG_CONFIG_HOME")
        data = [(Path(config) if config else home / ".config") / "Jan" / "data",
                home / ".local" / "share" / "Jan" / "data"]
    return [folder / "models" for folder in data] + [home / "jan" / "models"]


def gpt4all_roots(env, home: Path | None) -> list[Path]:
    if home is None:
        return []
    if sys.platform == "darwin":
        app = home / "Library" / "Application Support" / "nomic.ai" / "GPT4All"
    elif sys.platform == "win32":
        local = env.get("LOCALAPPDATA")
        app = Path(local) / "nomic.ai" / "GPT4All" if local else None
    else:
        data = env.get("XDG_DATA_HOME")
        app = (Path(data) if data else home / ".local" / "share") / "nomic.ai" / "GPT4All"
    return ([app] if app is not None else []) + [home / ".cache" / "gpt4all"]
