"""The words of a recording's tokens, kept beside it: n-gram lookup measures a match with the
model's words (drafters.word_fold: "The" and " the" agree), and a recording (replay.py) holds
token ids only, read without the model."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from draftlight.bench.sentence_ends import Marks, token_marks
from draftlight.engine.step.drafters import word_fold
from draftlight.engine.step.ngram_index import Fold

MARKS = "marks"  # the key of the tokens' marks in a words file (the others are token ids)


def words_path(records_path: Path) -> Path:
    """Where a recording's words are kept (answers.jsonl.gz: answers.words.json.gz)."""
    name = records_path.name.removesuffix(".gz").removesuffix(".jsonl")
    return records_path.with_name(name + ".words.json.gz")


def write_words(piece, records: list[dict], path: Path) -> None:
    """Each token of the records whose word is text (word_fold of the model's `piece`), and
    under MARKS each token's marks that are not 0 (token_marks: where sentences end)."""
    fold, marks = word_fold(piece), token_marks(piece)
    tokens = sorted({t for r in records for t in (*r["prompt"], *r["answer"])})
    words: dict[str, object] = {str(t): w for t in tokens if isinstance(w := fold(t), str)}
    words[MARKS] = {str(t): m for t in tokens if (m := marks(t))}
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(words, handle, separators=(",", ":"), ensure_ascii=False)


def _read(records_path: Path) -> dict | None:
    path = words_path(records_path)
    if not path.exists():
        return None
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            saved = json.load(handle)
        marks = {int(t): int(m) for t, m in saved.pop(MARKS, {}).items()}
        return {"words": {int(t): w for t, w in saved.items()}, "marks": marks}
    except (OSError, EOFError, ValueError, AttributeError, TypeError) as exc:
        raise SystemExit(f"{path}: cannot read the recording's words: {exc}") from None


def load_words_and_marks(records_path: Path) -> tuple[Fold | None, Marks | None]:
    """What write_words kept for these records, read once: the fold (None if there is none:
    token ids alone) and the token marks (None for words written before marks were: `replay
    words` writes them again)."""
    saved = _read(records_path)
    if saved is None:
        return None, None
    words, marks = saved["words"], saved["marks"]
    return ((lambda token: words.get(token, token)),
            (lambda token: marks.get(token, 0)) if marks else None)


def load_words(records_path: Path) -> Fold | None:
    """The fold write_words kept for these records (load_words_and_marks)."""
    return load_words_and_marks(records_path)[0]


def load_marks(records_path: Path) -> Marks | None:
    """The token marks write_words kept for these records (load_words_and_marks)."""
    return load_words_and_marks(records_path)[1]
