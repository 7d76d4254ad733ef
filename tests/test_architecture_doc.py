"""docs/architecture.md says only what the code holds (issue 58, item 5): every file it names
(`reply/generator.py`, `tests/support/fake_backend.py`) is there, and every class or function its
glossary gives as the code of a word is defined."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
NAMED_FILE = re.compile(r"`([\w./-]+\.py)`")
NAMED_CODE = re.compile(r"`([A-Z]\w+|[a-z_]+_[a-z_]+)`")  # CamelCase or snake_case words


def files_on_disk(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.py") if ".venv" not in p.parts}


def missing_files(text: str, on_disk: set[str]) -> list[str]:
    """Named files no file on disk ends with (a name is a path's tail: `generator.py`,
    `reply/generator.py`, `app/draftlight/reply/generator.py`)."""
    return sorted(name for name in set(NAMED_FILE.findall(text))
                  if not any(path == name or path.endswith("/" + name) for path in on_disk))


def glossary(text: str) -> str:
    return text.split("## Words", 1)[1].split("\n## ", 1)[0]


def undefined(names: set[str], sources: str) -> list[str]:
    return sorted(n for n in names
                  if not re.search(rf"^\s*(class|def) {n}\b|^{n} = |^{n}: ", sources, re.M))


def test_every_file_the_doc_names_is_there():
    assert missing_files(DOC.read_text(), files_on_disk(ROOT)) == []


def test_every_name_in_the_glossary_is_defined():
    sources = "\n".join(p.read_text() for p in (ROOT / "app").rglob("*.py"))
    names = set(NAMED_CODE.findall(glossary(DOC.read_text())))
    assert undefined(names, sources) == []


def test_the_checks_find_a_missing_file_and_an_undefined_name():
    text = "`reply/generator.py`, `reply/nowhere.py` and `Engine`, `NoSuchEngine`"
    assert missing_files(text, {"app/draftlight/engine/reply/generator.py"}) == ["reply/nowhere.py"]
    assert undefined({"Engine", "NoSuchEngine"}, "class Engine:\n    pass\n") == ["NoSuchEngine"]
