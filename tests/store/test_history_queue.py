"""history_queue.py: writes kept in memory while another process holds the history's lock, and
written in order once it answers (no Qt)."""

from __future__ import annotations

import sqlite3

import pytest

from draftlight.store.history import (COMPLETE, INTERRUPTED, History, HistoryUnavailable,
                                      history_path)
from draftlight.store.history_queue import WriteQueue


@pytest.fixture
def history():
    h = History(busy_timeout=0.05)
    yield h
    h.close()


class _Lock:
    def __enter__(self):
        self.db = sqlite3.connect(history_path(), isolation_level=None)
        self.db.execute("BEGIN EXCLUSIVE")
        return self

    def __exit__(self, *exc):
        self.db.execute("COMMIT")
        self.db.close()


def test_writes_refused_while_locked_land_in_order_once_it_answers(history):
    queue = WriteQueue(history)
    with _Lock():
        conversation = queue.create_conversation("kept")
        assert conversation.id is None and queue.waiting == 1
        question = queue.add_message(conversation, "user", "hello")
        reply = queue.add_message(conversation, "assistant", "", status=INTERRUPTED)
        for text in ("He", "Hello the", "Hello there"):  # checkpoints fold into the add
            queue.update_message(reply, text, runs=[[0, 5, 2]], status=INTERRUPTED)
        queue.update_message(reply, "Hello there.", runs=[[0, 5, 2]], status=COMPLETE)
        assert queue.waiting == 3
        assert isinstance(queue.refusal, HistoryUnavailable) and "locked" in str(queue.refusal)
        assert history.conversations() == []
    assert queue.flush() is None
    assert queue.waiting == 0 and None not in (conversation.id, question.id, reply.id)
    [saved] = history.conversations()
    assert saved.title == "kept"
    assert [(m.role, m.text, m.runs, m.status) for m in history.messages(saved.id)] == [
        ("user", "hello", [], COMPLETE), ("assistant", "Hello there.", [[0, 5, 2]], COMPLETE)]


def test_a_message_deleted_before_it_was_written_is_never_written(history):
    queue = WriteQueue(history)
    conversation = queue.create_conversation("c")
    with _Lock():
        reply = queue.add_message(conversation, "assistant", "draft")
        queue.delete_message(reply)
        kept = queue.add_message(conversation, "assistant", "second")
    queue.flush()
    assert reply.id is None
    assert [m.id for m in history.messages(conversation.id)] == [kept.id]


def test_a_write_the_store_never_takes_is_dropped_and_the_rest_still_lands(history):
    queue = WriteQueue(history)
    gone = queue.create_conversation("deleted meanwhile")
    with _Lock():
        orphan = queue.add_message(gone, "user", "lost with its conversation")
        other = queue.create_conversation("other")
    history.delete(gone.id)  # from the conversation list
    assert "FOREIGN KEY" in str(queue.flush())
    assert orphan.id is None and other.id is not None and queue.waiting == 0
