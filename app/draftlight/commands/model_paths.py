"""--target and --draft: a path, or a model found on this computer by its reference
("ollama:qwen2.5:7b", "folder:models/x.gguf", as `draftlight models list` shows it)."""

from __future__ import annotations

from pathlib import Path

from draftlight.settings import added_model_folders
from draftlight.store.found_models import resolve_reference


def model_argument(text: str) -> Path:
    """A path that exists, else the found model `text` names; what names neither stays a
    path, and the load says the file is missing."""
    path = Path(text).expanduser()
    if path.exists():
        return path
    found = resolve_reference(text, folders=added_model_folders())
    return found if found is not None else path
