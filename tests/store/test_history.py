"""history.py: conversations, messages with provenance and stats, interrupted replies,
search, and a damaged database left untouched (no Qt)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from draftlight import paths
from draftlight.store.history import (COMPLETE, INTERRUPTED, History, HistoryError,
                                      HistoryUnavailable, history_path)


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
    assert [c.id for c in history.conversations("00%")] == [b]
    assert history.conversations("0%") == []  # too short for the text index: titles only
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


# --- trust: a busy or full store, files checked before writing, private files, indexed search --


@pytest.fixture
def locked_by_another_app():
    """lock() -> another connection (a second Draftlight) holds the write lock until release()."""
    held = []

    def lock():
        other = sqlite3.connect(history_path(), isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        held.append(other)

    def release():
        while held:
            other = held.pop()
            other.execute("COMMIT")
            other.close()

    lock.release = release
    yield lock
    release()


def test_a_locked_database_is_a_history_error_and_not_written_later_by_itself(
        locked_by_another_app):
    h = History(busy_timeout=0.05)
    cid = h.create_conversation("x")
    locked_by_another_app()
    with pytest.raises(HistoryError, match="locked"):
        h.add_message(cid, "user", "hello")
    assert [c.id for c in h.conversations()] == [cid]  # reading still works meanwhile
    locked_by_another_app.release()
    h.add_message(cid, "user", "hello")
    assert [m.text for m in h.messages(cid)] == ["hello"]
    h.close()


def _make_file(path, user_version):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT)")
    db.execute(f"PRAGMA user_version = {user_version}")
    db.commit()
    db.close()


def test_a_newer_database_is_not_switched_to_wal_before_it_is_checked():
    path = history_path()
    _make_file(path, 99)
    before = path.read_bytes()
    h = History()
    assert h.read_only and "newer" in h.problem
    h.close()
    assert path.read_bytes() == before  # journal mode is in the header: byte 18 stays 1
    assert not path.with_name(path.name + "-wal").exists()


@pytest.mark.parametrize("in_background", [False, True])
def test_a_damaged_database_is_not_switched_to_wal_before_it_is_checked(in_background):
    path = history_path()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT)")
    db.executemany("INSERT INTO conversations (title) VALUES (?)",
                   [(f"conversation {i} " * 20,) for i in range(2000)])
    db.commit()
    db.close()
    data = bytearray(path.read_bytes())
    data[4096 * 3 + 100: 4096 * 3 + 400] = b"\xff" * 300  # a page in the middle, not the header
    path.write_bytes(bytes(data))
    h = History(check_in_background=in_background)
    if in_background:  # read at once; the first write waits for the check, then is refused
        with pytest.raises(HistoryError, match="damaged"):
            h.create_conversation("x")
    assert h.settle() == h.problem
    assert h.read_only and "damaged" in h.problem
    h.close()
    assert path.read_bytes() == bytes(data)
    assert not path.with_name(path.name + "-wal").exists()


def test_a_history_checked_in_the_background_is_read_at_once_and_written_once_sound():
    h = History()
    cid = h.create_conversation("kept")
    h.add_message(cid, "user", "hello")
    h.close()
    h = History(check_in_background=True)
    assert [c.title for c in h.conversations()] == ["kept"]  # read while the check runs
    assert h.problem is None and not h.read_only
    h.add_message(cid, "assistant", "hi")  # waits for the check's answer, then writes
    assert h.check_answered() and h.settle() is None
    assert [m.text for m in h.messages(cid)] == ["hello", "hi"]
    assert h._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    h.close()


def test_history_file_is_private_to_the_user():
    h = History()
    h.create_conversation("x")
    for suffix in ("", "-wal", "-shm"):
        assert oct(history_path().with_name("history.sqlite3" + suffix).stat().st_mode
                   & 0o777) == oct(0o600), suffix
    h.close()


def _steps(history, search):
    """SQLite's virtual-machine steps (counted in thousands) for one search."""
    count = [0]

    def tick():
        count[0] += 1
        return 0

    history._db.set_progress_handler(tick, 1000)
    found = history.conversations(search)
    history._db.set_progress_handler(None, 0)
    return found, count[0]


def test_search_does_not_read_every_message(history):
    needle = history.create_conversation("a")
    history.add_message(needle, "user", "Where is the Zanzibar ferry?")
    filler = history.create_conversation("b")
    found, few = _steps(history, "zanzibar")
    assert [c.id for c in found] == [needle]
    with history._db:
        history._db.executemany(
            "INSERT INTO messages (conversation_id, role, text, status, created) "
            "VALUES (?, 'user', ?, 'complete', 0)",
            [(filler, f"message {i} about trains, boats and the weather " * 5)
             for i in range(5000)])
    found, many = _steps(history, "zanzibar")
    assert [c.id for c in found] == [needle]
    assert many <= few + 5, (few, many)  # 5000 more messages cost (almost) nothing more


def test_a_version_1_history_is_migrated_and_its_messages_found_by_search():
    path = history_path()
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL,
                                    created REAL NOT NULL, updated REAL NOT NULL);
        CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL
            REFERENCES conversations(id) ON DELETE CASCADE, role TEXT NOT NULL, text TEXT NOT NULL,
            provenance TEXT, stats TEXT, status TEXT NOT NULL, mode TEXT, created REAL NOT NULL);
        INSERT INTO conversations VALUES (1, 'Old', 0, 0);
        INSERT INTO messages (conversation_id, role, text, status, created)
            VALUES (1, 'user', 'An old question about Zanzibar', 'complete', 0);
        PRAGMA user_version = 1;
    """)
    db.close()
    h = History()
    assert h.problem is None
    assert [c.id for c in h.conversations("ZANZIBAR")] == [1]
    mid = h.add_message(1, "assistant", "New answer about Madagascar")
    assert [c.id for c in h.conversations("madagascar")] == [1]
    h.update_message(mid, "Changed to Mauritius")
    assert h.conversations("madagascar") == [] and len(h.conversations("mauritius")) == 1
    h.delete(1)
    assert h.conversations("zanzibar") == []
    h.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] >= 2
    db.close()


# --- issue 76, hole 12: a lock as the history opens is no damage ----------------------------


@pytest.fixture
def held_whole():
    """hold() -> another program holds the whole file, reads included (SQLite's exclusive
    locking mode: a backup tool, sqlite3 in a terminal), until let_go()."""
    held = []

    def hold():
        other = sqlite3.connect(history_path(), isolation_level=None, check_same_thread=False)
        other.execute("PRAGMA locking_mode=EXCLUSIVE")
        other.execute("BEGIN EXCLUSIVE")
        other.execute("UPDATE conversations SET title = title")
        held.append(other)

    def let_go():
        while held:
            other = held.pop()
            other.execute("COMMIT")
            other.close()  # exclusive mode keeps the lock till the connection closes

    hold.let_go = let_go
    yield hold
    let_go()


def _kept_history() -> int:
    h = History()
    cid = h.create_conversation("kept")
    h.add_message(cid, "user", "hello")
    h.close()
    return cid


def test_a_history_held_as_it_opens_waits_and_is_never_called_damaged(held_whole):
    """It was opened read-only ("cannot be used (database is locked)") with an empty list that
    stayed empty, and the banner's advice set the healthy file aside as .corrupt-…"""
    cid = _kept_history()
    held_whole()
    h = History(check_in_background=True)
    assert not h.read_only and h.problem is None and h.settle() is None
    wait_for(lambda: h.lock_notice)
    assert "another program holds history.sqlite3" in h.lock_notice
    assert h.conversations() == [] and not h.check_answered()
    with pytest.raises(HistoryUnavailable, match="busy"):  # kept by the window, written later
        h.add_message(cid, "user", "while held")
    held_whole.let_go()
    wait_for(h.check_answered)
    assert h.settle() is None and not h.read_only and h.lock_notice is None
    assert [c.title for c in h.conversations()] == ["kept"]
    h.add_message(cid, "user", "after")
    assert [m.text for m in h.messages(cid)] == ["hello", "after"]
    h.close()
    assert not list(history_path().parent.glob("*corrupt*"))


def test_a_lock_of_a_moment_is_waited_for_where_no_window_goes_on_meanwhile(held_whole):
    _kept_history()
    held_whole()
    threading.Timer(0.5, held_whole.let_go).start()
    h = History()  # the command line's: waits up to OPEN_PATIENCE for the lock
    assert h.problem is None and not h.read_only
    assert [c.title for c in h.conversations()] == ["kept"]
    h.close()


def test_a_history_closed_while_held_does_not_wait_for_the_lock(held_whole):
    _kept_history()
    held_whole()
    h = History(check_in_background=True)
    wait_for(lambda: h.lock_notice)
    started = time.monotonic()
    h.close()
    assert time.monotonic() - started < 1


def wait_for(condition, seconds: float = 10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited too long"
        time.sleep(0.02)
