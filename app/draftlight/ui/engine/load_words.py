"""What the engine thread (engine_worker.py) says about a load, besides its typed events: the
words while a model loads (its name and size), an error in one line, and how many
multi-token-prediction layers the target carries (read on the worker thread)."""

from __future__ import annotations

from pathlib import Path


def mtp_layers(path: str) -> int:
    """The target's multi-token-prediction blocks (llama-server's draft-mtp drafts with them);
    read here, on the worker thread: a file without them is read to the end of its header."""
    from draftlight.store.gguf_info import has_mtp
    try:
        return has_mtp(path) if path else 0
    except (OSError, ValueError):
        return 0


def loading_words(name: str, path: str) -> str:
    """"Loading qwen2.5:7b (4.7 GB of weights)…": what the status line says while it loads."""
    from draftlight.units import format_bytes
    try:
        size = f" ({format_bytes(Path(path).stat().st_size)} of weights)"
    except (OSError, ValueError):
        size = ""
    return f"Loading {name}{size}…"


def one_line(exc: BaseException) -> str:
    from_engine = type(exc).__module__.startswith("draftlight.")
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if from_engine else f"{type(exc).__name__}: {text}"
