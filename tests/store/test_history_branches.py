"""Branches in the history (issue 40, parts 1 and 3 of its checks): a message with siblings
starts a branch, the conversation shows one branch and remembers which, a regenerated reply is
a sibling of the one it replaced (kept), and a version 2 file (a copy of one, tests/store/data)
is migrated without loss: each of its messages follows the one before."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from draftlight.store.history import INTERRUPTED, History
from draftlight.store.history_schema import SCHEMA_VERSION

OLD = Path(__file__).parent / "data" / "history-v2.sqlite3"


def texts(history: History, conversation: int) -> list[str]:
    return [m.text for m in history.messages(conversation)]


def test_siblings_are_branches_and_the_one_shown_is_remembered(tmp_path):
    path = tmp_path / "history.sqlite3"
    history = History(path)
    c = history.create_conversation("t")
    question = history.add_message(c, "user", "Capital of France?")
    first = history.add_message(c, "assistant", "Paris.")
    again = history.add_message(c, "assistant", "It is Paris.", parent=question)
    assert texts(history, c) == ["Capital of France?", "It is Paris."]
    assert history.siblings(first) == history.siblings(again) == [first, again]
    history.add_message(c, "user", "And Italy?")  # goes on after the branch shown
    history.show_branch(first)
    assert texts(history, c) == ["Capital of France?", "Paris."]
    edited = history.add_message(c, "user", "Capital of Spain?", parent=None)  # an edit
    assert history.siblings(edited) == [question, edited]
    history.show_branch(again)  # the newest message after it comes back too
    history.close()
    reopened = History(path)
    assert texts(reopened, c) == ["Capital of France?", "It is Paris.", "And Italy?"]


def test_deleting_a_message_takes_its_branch_and_shows_the_one_before(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    c = history.create_conversation("t")
    question = history.add_message(c, "user", "Q")
    reply = history.add_message(c, "assistant", "A")
    history.add_message(c, "user", "Q2")
    history.delete_message(reply)
    assert texts(history, c) == ["Q"] and history.siblings(question) == [question]


def test_a_version_2_file_is_migrated_without_loss(tmp_path):
    path = tmp_path / "history.sqlite3"
    shutil.copy(OLD, path)
    before = sqlite3.connect(path).execute(
        "SELECT id, conversation_id, role, text, provenance, stats, status, mode FROM messages "
        "ORDER BY id").fetchall()
    history = History(path)
    assert history.problem is None and not history.read_only
    conversations = {c.title: c.id for c in history.conversations()}
    france = conversations["Capital of France"]
    assert texts(history, france) == ["What is the capital of France?",
                                      "The capital of France is Paris.", "And of Italy?",
                                      "The capital of Italy is Rome."]
    assert history.messages(france)[1].runs == [[4, 11, 2]]
    assert history.messages(france)[1].stats["accepted"] == 2
    poem = history.messages(conversations["Interrupted one"])
    assert [(m.text, m.status) for m in poem][-1] == ("Roses are", INTERRUPTED)
    assert history.conversations("Rome")  # the search index came along
    history.add_message(france, "assistant", "Rome.", parent=history.messages(france)[2].id)
    history.close()
    after = sqlite3.connect(path)
    assert after.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    kept = after.execute("SELECT id, conversation_id, role, text, provenance, stats, status, "
                         "mode FROM messages WHERE id <= ? ORDER BY id",
                         (before[-1][0],)).fetchall()
    assert kept == before  # nothing lost or changed


def test_a_copy_that_cannot_be_migrated_is_left_untouched(tmp_path):
    """A newer file (version 4, say) is opened read-only and not changed: the user is told."""
    path = tmp_path / "history.sqlite3"
    shutil.copy(OLD, path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    data = path.read_bytes()
    history = History(path)
    assert history.read_only and "newer Draftlight" in history.problem
    france = next(c for c in history.conversations() if c.title == "Capital of France")
    assert len(texts(history, france.id)) == 4  # still readable, as one list
    history.close()
    assert path.read_bytes() == data
