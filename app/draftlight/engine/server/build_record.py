"""What a llama-server build made, recorded when it was made and checked before it is run.

    write_record(folder, names, made_in)     # build.json: size and SHA-256 of each file
    changed_files(folder, names)             # the names that no longer match it

A binary changed or damaged since its build (another program's copy over it, a half-finished
copy, a bad disk) is never run. It is not a signature: whoever can write the folder can write
the record too.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from draftlight.shared_files import write_atomically

RECORD = "build.json"


def fingerprint(path: Path) -> dict | None:
    """{"size": bytes, "sha256": hex} of `path`, None if it is not a file."""
    try:
        with open(path, "rb") as file:
            digest = hashlib.file_digest(file, "sha256").hexdigest()
            return {"size": os.fstat(file.fileno()).st_size, "sha256": digest}
    except OSError:
        return None


def write_record(folder: Path, names: Iterable[str], made_in: Path) -> None:
    """Record in `folder` the files `names` as they are in `made_in` (before they are copied
    into `folder`); written whole or not at all."""
    record = {name: fingerprint(made_in / name) for name in names}
    write_atomically(folder / RECORD, json.dumps(record, indent=1))


def changed_files(folder: Path, names: Iterable[str]) -> list[str]:
    """The `names` in `folder` that differ from the record (all of them without a record)."""
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    if not isinstance(record, dict):
        return list(names)
    return [name for name in names if fingerprint(folder / name) != record.get(name)]
