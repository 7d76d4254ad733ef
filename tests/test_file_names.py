"""One name per module (issue 58, item 1): no two modules of the app share a file name, except
where they play the same role in parallel packages (each package's errors.py). A reader who
meets `worker.py` or `origins.py` in a traceback knows which one it is."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app" / "draftlight"
SAME_ROLE = {"__init__.py", "__main__.py", "errors.py"}


def shared_names(root: Path) -> list[str]:
    counts = Counter(path.name for path in root.rglob("*.py"))
    return sorted(name for name, count in counts.items() if count > 1 and name not in SAME_ROLE)


def test_no_two_modules_share_a_file_name():
    assert shared_names(APP) == []


def test_the_check_finds_a_shared_name(tmp_path):
    for room in ("engine", "serve"):  # negative control: two worker.py, two errors.py
        (tmp_path / room).mkdir()
        (tmp_path / room / "worker.py").write_text("")
        (tmp_path / room / "errors.py").write_text("")
    assert shared_names(tmp_path) == ["worker.py"]
