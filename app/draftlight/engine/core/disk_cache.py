"""What the engine measures or learns about a model file on this machine, kept on disk.

Entries of small JSON values (cost curves, batch drift, auto's acceptance counts) share one
file in the cache folder, each under a key made of the model file's identity, this machine and
the settings that change the value. Larger caches (the vocabulary maps of vocab_map.py) keep
their own files, named by `digest` of the same file identity. Everything here is safe to
delete: a missing or unreadable entry is measured again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
from pathlib import Path

from draftlight import paths
from draftlight.shared_files import read_json_object, update_json

# Part of every cache_key: bumping it measures every entry again. (It was costs.CURVE_VERSION,
# kept at its value so the entries of earlier versions of the app are still found.)
KEY_VERSION = 3
# names the file instead of the cache folder's: the suite shares one between its tests (and a
# test's engine host, a child process, reads it from the environment it inherits)
FILE_VARIABLE = "DRAFTLIGHT_MEASUREMENTS_FILE"


def file_identity(path: Path) -> list:
    """[resolved path, size, modification time]: a file rewritten in place is another file."""
    stat = path.stat()
    return [str(path.resolve()), stat.st_size, stat.st_mtime_ns]


def digest(*parts: object) -> str:
    """A short file-name-safe key: 24 hex digits of the sha256 of `parts` as JSON."""
    return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()[:24]


def cache_key(model_path: Path, *parts: object) -> str:
    """Model file identity + machine + settings that change speed."""
    machine = (platform.machine(), platform.processor(), os.cpu_count(), _cpu_model())
    return digest(KEY_VERSION, *file_identity(model_path), machine, [str(p) for p in parts])


@functools.cache  # every cache key asks; the CPU does not change while the app runs
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _cache_file() -> Path:
    """FILE_VARIABLE, else the cache folder's file (named for its first use, cost curves:
    renaming it would forget every entry)."""
    named = os.environ.get(FILE_VARIABLE)
    return Path(named) if named else paths.cache_dir() / "batch_costs.json"


def load_cached(key: str) -> dict | None:
    return read_json_object(_cache_file()).get(key)


def store_cached(key: str, value: dict) -> None:
    """Keep `value` under `key` (raises OSError); another process's entries written meanwhile
    are kept (shared_files.update_json)."""
    update_json(_cache_file(), lambda known: known.__setitem__(key, value), indent=1)
