"""--target and --draft: a path, or a model found on this computer by its reference
("ollama:qwen2.5:7b", "folder:models/x.gguf", as `draftlight models list` shows it)."""

from __future__ import annotations

from pathlib import Path

from draftlight.engine_spec import model_file


def model_argument(text: str) -> Path:
    """A path that exists, else the found model `text` names (engine_spec.model_file); what names
    neither stays a path, and the load says the file is missing."""
    return Path(model_file(text)).expanduser()
