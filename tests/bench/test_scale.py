"""A year of use (app/draftlight/bench/scale*.py): the made-up history is the same from the same
seed, and a history of 5,000 conversations lists, searches, opens and switches within an order
of magnitude of the bench's bounds (the figures themselves live in `draftlight bench scale`)."""

from __future__ import annotations

import hashlib
import time

import pytest

from draftlight.bench.scale import judge, table
from draftlight.bench.scale_history import CHARS_PER_TOKEN, COMMON, RARE, build
from draftlight.store.history import History
from draftlight.store.history_search import search


def digest(path) -> str:
    history = History(path)
    try:
        rows = history._db.execute(
            "SELECT conversation_id, role, text, provenance, parent_id FROM messages "
            "ORDER BY id").fetchall()
    finally:
        history.close()
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def test_the_same_seed_makes_the_same_year(tmp_path):
    one = build(tmp_path / "a.sqlite3", 30, seed=4, long=(2000,), messages_each=6)
    two = build(tmp_path / "b.sqlite3", 30, seed=4, long=(2000,), messages_each=6)
    other = build(tmp_path / "c.sqlite3", 30, seed=5, long=(2000,), messages_each=6)
    assert digest(one.path) == digest(two.path) != digest(other.path)
    history = History(one.path)
    try:
        longest = history.messages(one.long[2000])
        chars = sum(len(m.text) for m in longest)
        assert 0.8 * 2000 < chars / CHARS_PER_TOKEN < 1.25 * 2000
        assert len(history.siblings(history.messages(one.branched)[-1].id)) == 2  # a branch
        assert [hit.title for hit in search(one.path, RARE)] == [
            c.title for c in history.conversations() if RARE in c.title]
    finally:
        history.close()


@pytest.fixture(scope="module")
def year(tmp_path_factory):
    """5,000 conversations (4 messages each, to build in seconds) and a 30,000-token one."""
    path = tmp_path_factory.mktemp("year") / "history.sqlite3"
    return build(path, 5000, seed=0, long=(30_000,), messages_each=4)


def test_a_year_of_conversations_lists_searches_and_opens_within_bounds(year, qtbot):
    from draftlight.ui.chat.conversation_list import ConversationList

    history = History(year.path)
    try:
        started = time.perf_counter()
        widget = ConversationList(history)  # builds its rows
        qtbot.addWidget(widget)
        assert time.perf_counter() - started < 1.0  # the bench's bound: 50 ms
        from draftlight.ui.chat.conversation_list import PAGE
        assert widget.list.count() == PAGE  # the newest; the next as the list is scrolled
        for word, most in ((RARE, 1), (COMMON, 200)):
            started = time.perf_counter()
            hits = search(year.path, word)
            assert time.perf_counter() - started < 1.0, word  # the bench's bound: 100 ms
            assert 1 <= len(hits) <= most
        started = time.perf_counter()
        longest = history.messages(year.long[30_000])
        assert time.perf_counter() - started < 1.0  # opening (without the window's views)
        assert sum(len(m.text) for m in longest) > 30_000 * CHARS_PER_TOKEN * 0.8
        last = history.messages(year.branched)[-1]
        started = time.perf_counter()
        history.show_branch(history.siblings(last.id)[0])
        assert history.messages(year.branched)[-1].id != last.id
        assert time.perf_counter() - started < 1.0
    finally:
        history.close()


def figures(ready=2.0, search_s=0.01, list_s=0.01, open_s=0.1, read=20, step=50.0,
            memory=150.0) -> dict:
    turn = {"cold": {"prompt_tokens": 4000, "reused": 0, "prefill_s": 30},
            "next": {"prompt_tokens": 4060, "reused": 4060 - read, "prefill_s": 0.2}}
    return {"conversations": 5000, "messages": 200_000, "build_s": 90.0, "first_paint_s": 0.3,
            "ready_s": ready, "list_s": list_s, "search_rare_s": search_s,
            "search_common_s": search_s, "open_longest_s": open_s, "switch_branch_s": 0.1,
            "rss_window_mb": memory, "history_mb": 400.0,
            "ngram_step_us": {"1000": 50.0, "30000": step},
            "turns": {"2000": turn}, "kept_mb": 90.0,
            "restart": {"prompt_tokens": 4100, "reused": 4100 - read, "prefill_s": 0.3},
            "serve": {"cold": {"prompt_tokens": 4000, "reused": 0, "seconds": 30.0},
                      "next": {"prompt_tokens": 4060, "reused": 4060 - read, "seconds": 1.0}}}


def test_each_goal_is_judged_on_its_figure_and_a_missed_one_named():
    small = figures()
    met, goals = judge(small, figures())
    assert met == len(goals) and not any(g.startswith("missed") for g in goals)
    assert any("after a restart" in g for g in goals) and any("serve" in g for g in goals)
    met_slow, slow = judge(small, figures(ready=3.0, search_s=0.5, list_s=0.2, open_s=1.0,
                                          read=400, step=200.0, memory=400.0))
    assert met_slow == 0 and len(slow) == len(goals)
    assert sum("400 tokens" in line for line in slow) == 3  # a new turn, a restart, serve
    text = table(small, figures(read=400))
    assert "| new turn, 2000-token conversation" in text and "400 (0.20 s)" in text
    assert "after a restart" in text and "`draftlight serve`" in text
