"""The words of a recording's tokens, kept beside it: n-gram lookup measures a match with the
model's words (drafters.word_fold: "The" and " the" agree), and a recording (replay.py) holds
token ids only, read without the model."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from draftlight.engine.drafters import word_fold
from draftlight.engine.ngram_index import Fold


def words_path(records_path: Path) -> Path:
    """Where a recording's words are kept (answers.jsonl.gz: answers.words.json.gz)."""
    name = records_path.name.removesuffix(".gz").removesuffix(".jsonl")
    return records_path.with_name(name + ".words.json.gz")


def write_words(piece, records: list[dict], path: Path) -> None:
    """Each token of the records whose word is text (word_fold of the model's `piece`)."""
    fold = word_fold(piece)
    tokens = {t for r in records for t in (*r["prompt"], *r["answer"])}
    words = {str(t): w for t in sorted(tokens) if isinstance(w := fold(t), str)}
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(words, handle, separators=(",", ":"), ensure_ascii=False)


def load_words(records_path: Path) -> Fold | None:
    """The fold write_words kept for these records; None if there is none (token ids alone)."""
    path = words_path(records_path)
    if not path.exists():
        return None
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            words = {int(t): w for t, w in json.load(handle).items()}
    except (OSError, EOFError, ValueError, AttributeError) as exc:
        raise SystemExit(f"{path}: cannot read the recording's words: {exc}") from None
    return lambda token: words.get(token, token)
