"""GGUF headers already read, by file identity: in this process, and on disk across runs.

Reading a header to its end walks the tokenizer's arrays item by item (0.17 s for the bundled
model's 49k tokens, more for a 150k vocabulary), and a load asks for it several times (the
default model's check, the automatic context, the memory check). A file rewritten in place has
another size or modification time, so another identity. Safe to delete: a missing entry is
read again.
"""

from __future__ import annotations

from pathlib import Path

from draftlight import paths
from draftlight.shared_files import read_json_object, update_json

KEPT = 64  # entries on disk; the oldest go first


def identity(path: Path) -> str:
    """Resolved path, size and modification time (raises OSError for a file that is gone)."""
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


def _cache_file() -> Path:
    return paths.cache_dir() / "gguf_headers.json"


def known(key: str) -> dict | None:
    """The fields kept for `key` (gguf_info.GGUFInfo's, the path as text), or None."""
    entry = read_json_object(_cache_file()).get(key)
    return entry if isinstance(entry, dict) else None


def remember(key: str, fields: dict) -> None:
    """Keep `fields` (JSON values) under `key`; failing to write costs only a later read."""
    def add(entries: dict) -> None:
        entries.pop(key, None)
        entries[key] = fields
        for old in list(entries)[:-KEPT]:
            del entries[old]

    try:
        update_json(_cache_file(), add)
    except OSError:
        pass
