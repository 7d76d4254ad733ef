"""Search over the history on its own connection (issue 40, part 4): what a search finds in
titles and in any branch's messages, with the matching line; a short search looks at titles
only; a file that cannot be read is one HistoryError."""

from __future__ import annotations

import pytest

from draftlight.store.history import History, HistoryError
from draftlight.store.history_search import matching_line, search


def test_hits_name_the_first_matching_message_and_its_line(tmp_path):
    path = tmp_path / "h.sqlite3"
    history = History(path)
    birds = history.create_conversation("Birds")
    question = history.add_message(birds, "user", "Which bird glides longest?")
    old = history.add_message(birds, "assistant", "The wandering albatross.\nIt glides for hours.")
    history.add_message(birds, "assistant", "Probably a condor.", parent=question)  # shown now
    cats = history.create_conversation("Albatross notes")
    history.add_message(cats, "user", "nothing here")
    history.close()
    hits = search(path, "ALBATROSS")
    assert [(h.title, h.message_id) for h in hits] == [("Albatross notes", None),
                                                       ("Birds", old)]
    line, start, end = hits[1].line, hits[1].start, hits[1].end
    assert line == "The wandering albatross." and line[start:end] == "albatross"
    assert [h.title for h in search(path, "al")] == ["Albatross notes"]  # titles only
    assert search(path, "   ") == []


def test_a_long_line_is_cut_around_the_match_and_a_bad_file_is_one_error(tmp_path):
    text = "x" * 200 + " needle " + "y" * 200
    line, start, end = matching_line(text, "needle")
    assert len(line) <= 82 and line[start:end] == "needle" and line.startswith("…")
    with pytest.raises(HistoryError, match="search could not read"):
        search(tmp_path / "missing.sqlite3", "anything")


def test_a_huge_search_is_a_read_that_finds_and_a_nul_is_no_wildcard(tmp_path):
    """Issue 56, item 8: a 100,000-character search said "history could not be saved" (SQLite
    refuses LIKE patterns that long, and the error was named as a write's); a NUL in a search
    matched every conversation (SQLite's text functions stop at it)."""
    path = tmp_path / "h.sqlite3"
    history = History(path)
    long_text = "word " * 20_000
    pasted = history.create_conversation("A pasted essay")
    message = history.add_message(pasted, "user", long_text)
    history.create_conversation("Other")
    for text in (long_text.strip(), "\x00", "Ot\x00her"):
        found = [c.title for c in history.conversations(text)]
        assert found == (["A pasted essay"] if text == long_text.strip() else []), text
    history.close()
    hits = search(path, long_text)
    assert [(h.title, h.message_id) for h in hits] == [("A pasted essay", message)]
    assert search(path, "\x00") == [] and search(path, "Ot\x00her") == []
