"""history.py: conversations, messages with provenance and stats, interrupted replies,
search, and a damaged database left untouched (no Qt)."""

from __future__ import annotations

import sqlite3

import pytest

from draftlight import paths
from draftlight.store.history import COMPLETE, INTERRUPTED, History, HistoryError, history_path


@pytest.fixture
def history():
    h = History()
    yield h
    h.close()


def test_lives_in_the_data_folder_with_wal_and_foreign_keys(history):
    assert history.path == paths.data_dir() / "history.sqlite3"
    assert history.problem is None
    db = sqlite3.connect(history.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    assert history._db.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_messages_keep_provenance_stats_and_status_across_reopen():
    h = History()
    cid = h.create_conversation("Capital cities")
    h.add_message(cid, "user", "What is the capital of France?")
    reply = h.add_message(cid, "assistant", "", runs=[], status=INTERRUPTED, mode="ngram")
    h.update_message(reply, "Paris is the capital.", runs=[[0, 5, 2], [9, 21, 4]],
                     stats={"new_tokens": 6, "acceptance_rate": 0.5}, status=COMPLETE)
    h.close()

    h = History()
    [conversation] = h.conversations()
    assert conversation.title == "Capital cities"
    user, assistant = h.messages(cid)
    assert (user.role, user.text, user.runs, user.status) == (
        "user", "What is the capital of France?", [], COMPLETE)
    assert assistant.text == "Paris is the capital."
    assert assistant.runs == [[0, 5, 2], [9, 21, 4]]
    assert assistant.stats == {"new_tokens": 6, "acceptance_rate": 0.5}
    assert assistant.status == COMPLETE and assistant.mode == "ngram"
    h.close()


def test_a_reply_cut_short_stays_interrupted():
    h = History()
    cid = h.create_conversation("x")
    h.add_message(cid, "assistant", "", status=INTERRUPTED)
    h.close()  # as if the app had crashed mid-reply
    h = History()
    [message] = h.messages(cid)
    assert message.status == INTERRUPTED
    h.close()


def test_search_rename_delete(history):
    a = history.create_conversation("Recipes")
    b = history.create_conversation("Travel")
    history.add_message(b, "user", "Trains from Paris to Lyon? 100%")
    assert [c.id for c in history.conversations("recip")] == [a]
    assert [c.id for c in history.conversations("LYON")] == [b]
    assert [c.id for c in history.conversations("0%")] == [b]
    assert history.conversations("R_cipes") == []  # LIKE wildcards are taken literally
    assert history.conversations("Rec%s") == []
    history.rename(a, "Soups")
    assert history.conversation(a).title == "Soups"
    history.delete(b)
    assert [c.id for c in history.conversations()] == [a]
    assert history.messages(b) == []  # cascaded


def test_newest_conversation_first(history):
    a = history.create_conversation("a")
    b = history.create_conversation("b")
    history.add_message(a, "user", "later")
    assert [c.id for c in history.conversations()] == [a, b]


def test_malformed_provenance_is_dropped_not_shown(history):
    cid = history.create_conversation("x")
    mid = history.add_message(cid, "assistant", "abc")
    history._db.execute("UPDATE messages SET provenance = ? WHERE id = ?",
                        ('[[0, 2, 1], [5, 3, 1], "x", [1, 2]]', mid))
    assert history.messages(cid)[0].runs == [[0, 2, 1]]


def test_garbage_file_is_never_overwritten_and_can_be_moved_aside():
    path = history_path()
    garbage = b"this is not a database" * 100
    path.write_bytes(garbage)
    h = History()
    assert h.read_only and h.problem and "\n" not in h.problem
    assert h.conversations() == []
    with pytest.raises(HistoryError):
        h.create_conversation("x")
    assert path.read_bytes() == garbage
    moved = h.start_fresh()
    assert moved.read_bytes() == garbage and moved.name.startswith("history.sqlite3.corrupt-")
    assert h.problem is None and not h.read_only
    cid = h.create_conversation("fresh")
    assert [c.id for c in h.conversations()] == [cid]
    h.close()


def test_newer_schema_is_opened_read_only_and_still_listed():
    h = History()
    cid = h.create_conversation("from a newer app")
    h._db.execute("PRAGMA user_version = 99")
    h.close()
    h = History()
    assert h.read_only and "newer" in h.problem
    assert [c.id for c in h.conversations()] == [cid]
    with pytest.raises(HistoryError):
        h.rename(cid, "y")
    h.close()


def test_in_memory_history_touches_no_file():
    h = History(":memory:")
    h.create_conversation("x")
    assert h.path is None
    assert not (paths.data_dir() / "history.sqlite3").exists()
    h.close()
