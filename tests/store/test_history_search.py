"""Search over the history on its own connection (issue 40, part 4): what a search finds in
titles and in any branch's messages, with the matching line; a short search looks at titles
only; a file that cannot be read is one HistoryError."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from draftlight.store.history import History, HistoryError
from draftlight.store.history_search import matching_line, search
from draftlight.store.search_match import LONGEST_SEARCH, SearchTooLong


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


# --- issue 76, holes 6 and 15: a search's cost and its bounds ---------------------------------

MEASURED_SEARCH = """
import json, resource, sys, time
from draftlight.store.history import History
from draftlight.store.history_search import search
path, query = sys.argv[1], "a" * 200
history = History(path)
before, started = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.monotonic()
listed = [c.title for c in history.conversations(query)]
hits = [h.title for h in search(path, query)]
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps([listed, hits, time.monotonic() - started, grown // 1024]))
"""


def test_a_long_search_over_repetitive_text_costs_what_the_text_does(tmp_path):
    """A 200-character search over a 500,000-character message of one letter: the index was
    asked for each of its 198 trigrams with every position (1.6 s and 97 MB; 400 over 2 MB:
    11 s and 787 MB). Measured in a process of its own: SQLite's memory is not Python's."""
    path = tmp_path / "h.sqlite3"
    history = History(path)
    history.add_message(history.create_conversation("aaa"), "user", "a" * 500_000)
    history.add_message(history.create_conversation("other"), "user", "b" * 1000)
    history.close()
    out = subprocess.run([sys.executable, "-c", MEASURED_SEARCH, str(path)], capture_output=True,
                         text=True, timeout=60)
    listed, hits, seconds, grown_mb = json.loads(out.stdout or "null") or pytest.fail(out.stderr)
    assert listed == hits == ["aaa"]
    assert seconds < 0.8 and grown_mb < 40


def test_a_message_with_every_trigram_of_the_search_but_not_the_search_is_no_hit(tmp_path):
    """The index is asked only for trigrams; each message it gives is read for the whole."""
    path = tmp_path / "h.sqlite3"
    history = History(path)
    near = history.create_conversation("near")
    history.add_message(near, "user", "abcab abd")  # abc, bca, cab, abd: all, not in a row
    exact = history.create_conversation("exact")
    message = history.add_message(exact, "user", "say ABCABD twice")
    assert [c.title for c in history.conversations("abcabd")] == ["exact"]
    history.close()
    [hit] = search(path, "abcabd")
    assert (hit.title, hit.message_id, hit.line[hit.start:hit.end]) == ("exact", message,
                                                                       "ABCABD")


def test_a_search_over_the_longest_is_one_line_and_the_longest_is_searched(tmp_path):
    path = tmp_path / "h.sqlite3"
    history = History(path)
    longest = "x" * LONGEST_SEARCH
    held = history.create_conversation("long")
    history.add_message(held, "user", longest)
    for ask in (history.conversations, lambda text: search(path, text)):
        with pytest.raises(HistoryError, match="at most 100,000 characters; this one has "
                                               "100,001") as raised:
            ask(longest + "x")
        assert isinstance(raised.value, SearchTooLong)
        assert len(ask(longest)) == 1
    history.close()


@pytest.mark.parametrize("text", ["\ud800", "abc\udfffdef", "\udc80" * 3])
def test_a_lone_surrogate_in_a_search_finds_nothing_and_raises_nothing(tmp_path, text):
    """Issue 76, hole 15: sqlite3 cannot send one (UnicodeEncodeError); no stored text can
    hold one either."""
    path = tmp_path / "h.sqlite3"
    history = History(path)
    history.add_message(history.create_conversation("abc def"), "user", "abc def \ufffd")
    assert history.conversations(text) == []
    history.close()
    assert search(path, text) == []
