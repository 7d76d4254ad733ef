"""Export and import of a conversation (issue 40, part 4): Markdown to read (the branch shown or
all branches), JSON that comes back as the same messages and branches (text, runs, statistics
with origins, status, mode, which follows which, the branch shown); a version 1 file (before
branches) still imports; a file that is not an export changes nothing."""

from __future__ import annotations

import json

import pytest

from draftlight.store.export import (ExportError, conversation_markdown, import_conversation,
                                     write_export)
from draftlight.store.history import INTERRUPTED, History

STATS = {"new_tokens": 14, "target_passes": 9, "drafted": 6, "accepted": 6, "mode": "auto",
         "origins": [{"kind": "message", "at": 0, "start": 17, "end": 40}],
         "passes": [[4, 1, 0, 0], [20, 3, 2, 2]]}


@pytest.fixture
def history():
    h = History(":memory:")
    yield h
    h.close()


def filled(history) -> int:
    cid = history.create_conversation("Repeat after me")
    history.add_message(cid, "user", "Repeat after me: the United States of America.")
    history.add_message(cid, "assistant", "The United States of America.", runs=[[4, 17, 3]],
                        stats=STATS, mode="auto")
    history.add_message(cid, "user", "Again, with “quotes” and ünïcode\nover two lines.")
    history.add_message(cid, "assistant", "Partial", status=INTERRUPTED, mode="ngram")
    return cid


def test_json_round_trips_every_field(history, tmp_path):
    cid = filled(history)
    out = tmp_path / "chat.json"
    write_export(history, cid, out)
    again = import_conversation(history, out)
    assert again != cid and history.conversation(again).title == "Repeat after me"
    fields = lambda m: (m.role, m.text, m.runs, m.stats, m.status, m.mode)  # noqa: E731
    assert [fields(m) for m in history.messages(again)] == [
        fields(m) for m in history.messages(cid)]
    assert not list(tmp_path.glob("*.partial"))


def test_markdown_reads_as_the_chat_with_each_replys_figures(history, tmp_path):
    cid = filled(history)
    text = conversation_markdown(history, cid, footer=lambda s: f"{s['new_tokens']} tokens")
    assert text.startswith("# Repeat after me\n")
    assert "## You\n\nRepeat after me: the United States of America.\n" in text
    assert "## Draftlight\n\nThe United States of America.\n\n> 14 tokens" in text
    write_export(history, cid, tmp_path / "chat.md")
    assert (tmp_path / "chat.md").read_text(encoding="utf-8").startswith("# Repeat after me")


@pytest.mark.parametrize("content, says", [
    (b"\x89PNG\r\n", "not JSON"),
    (b'{"format": "something-else", "messages": []}', "not a Draftlight export"),
    (b'{"format": "draftlight-conversation", "version": 99, "messages": []}', "version 99"),
    (b'{"format": "draftlight-conversation", "version": 1, "messages": [{"role": "robot", '
     b'"text": "x"}]}', "message 1: role"),
    (b'{"format": "draftlight-conversation", "version": 1, "messages": [{"role": "user", '
     b'"text": "ab", "runs": [[0, 9, 1]]}]}', "inside its text"),
    (b'{"format": "draftlight-conversation", "version": 1, "messages": [{"role": "user", '
     b'"text": "ab", "status": "weird"}]}', "status"),
])
def test_a_file_that_is_not_an_export_changes_nothing(history, tmp_path, content, says):
    before = history.conversations()
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    with pytest.raises(ExportError, match=says):
        import_conversation(history, bad)
    assert history.conversations() == before


def test_an_oversized_file_is_refused_before_it_is_read(history, tmp_path, monkeypatch):
    from draftlight.store import export
    monkeypatch.setattr(export, "MAX_IMPORT_BYTES", 100)
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"format": "draftlight-conversation", "pad": "x" * 200}))
    monkeypatch.setattr(type(big), "read_text", lambda *a, **k: pytest.fail("read it"))
    with pytest.raises(ExportError, match="over"):
        import_conversation(history, big)


def branched(history) -> tuple[int, list[int]]:
    """Q1 → A1 (regenerated: A1b), then an edit of Q1 (Q1b → A3); the branch shown is A1b's."""
    cid = history.create_conversation("Branches")
    q1 = history.add_message(cid, "user", "Name a colour.")
    a1 = history.add_message(cid, "assistant", "Red.", runs=[[0, 3, 1]], stats=STATS)
    a1b = history.add_message(cid, "assistant", "Red, again.", parent=q1,
                              stats={**STATS, "prediction_from": "your earlier answer (version 1)"})
    q1b = history.add_message(cid, "user", "Name a fruit.", parent=None)
    a3 = history.add_message(cid, "assistant", "Apple.", parent=q1b)
    history.show_branch(a1b)
    return cid, [q1, a1, a1b, q1b, a3]


def shape(history, cid):
    """Every message with its parent's text and whether it is on the branch shown."""
    every, leaf = history.tree(cid)
    by_id = {m.id: m for m in every}
    shown = {m.id for m in history.messages(cid)}
    return [(m.role, m.text, m.runs, m.stats, m.status, m.mode,
             by_id[m.parent_id].text if m.parent_id else None, m.id in shown) for m in every]


def test_json_round_trips_every_branch_and_the_one_shown(history, tmp_path):
    cid, _ = branched(history)
    out = tmp_path / "branches.json"
    write_export(history, cid, out)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["version"] == 2 and len(data["messages"]) == 5 and data["shown"] == 3
    again = import_conversation(history, out)
    assert shape(history, again) == shape(history, cid)
    assert [m.text for m in history.messages(again)] == ["Name a colour.", "Red, again."]
    assert len(history.siblings(history.messages(again)[1].id)) == 2


def test_markdown_gives_the_branch_shown_or_every_branch(history):
    cid, _ = branched(history)
    shown = conversation_markdown(history, cid)
    assert "Red, again." in shown and "Apple." not in shown and "# Branch 1" not in shown
    every = conversation_markdown(history, cid, branches="all")
    assert every.index("# Branch 1 of 3 (shown)") < every.index("Red, again.")
    assert "# Branch 2 of 3" in every and "# Branch 3 of 3" in every
    assert every.index("# Branch 3 of 3") < every.index("Name a fruit.") < every.index("Apple.")


def test_a_version_1_file_imports_as_one_branch(history, tmp_path):
    old = tmp_path / "v1.json"
    old.write_text(json.dumps({"format": "draftlight-conversation", "version": 1, "title": "Old",
                               "messages": [{"role": "user", "text": "hi"},
                                            {"role": "assistant", "text": "hello", "runs": [],
                                             "stats": None, "status": "complete"}]}))
    cid = import_conversation(history, old)
    assert [(m.role, m.text) for m in history.messages(cid)] == [("user", "hi"),
                                                                 ("assistant", "hello")]


@pytest.mark.parametrize("messages, shown, says", [
    ([{"id": 1, "parent": 2, "role": "user", "text": "a"},
      {"id": 2, "parent": 1, "role": "assistant", "text": "b"}], 2, "parent"),
    ([{"id": 5, "parent": None, "role": "user", "text": "a"}], 1, "id must be 1"),
    ([{"id": 1, "parent": None, "role": "user", "text": "a"}], 7, "shown"),
])
def test_a_tree_that_does_not_hold_together_changes_nothing(history, tmp_path, messages, shown,
                                                            says):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "draftlight-conversation", "version": 2,
                               "shown": shown, "messages": messages}))
    with pytest.raises(ExportError, match=says):
        import_conversation(history, bad)
    assert history.conversations() == []


# --- issue 76, hole 13: numbers in imported figures ---------------------------------------------

def every_number_as_float(stats: dict) -> str:
    """A footer that does what a reply's footer does with its figures: float() of each."""
    numbers, waiting = [], [stats]
    while waiting:
        item = waiting.pop()
        if isinstance(item, dict):
            waiting.extend(item.values())
        elif isinstance(item, list):
            waiting.extend(item)
        elif isinstance(item, (int, float)):
            numbers.append(f"{float(item):.1f}")
    return " ".join(numbers)


@pytest.mark.parametrize("bad, says", [("1" + "0" * 3999, "an integer of 4,000 digits"),
                                       ("Infinity", "inf"), ("-Infinity", "-inf"),
                                       ("NaN", "nan"), ("1e300", "1e+300")])
def test_a_figure_out_of_bounds_is_dropped_with_a_line_and_the_rest_shown(history, tmp_path,
                                                                          bad, says):
    """An Infinity or a 4,000-digit count imported fine, then raised OverflowError each time
    the conversation was shown or exported."""
    path = tmp_path / "figures.json"
    path.write_text('{"format": "draftlight-conversation", "version": 2, "shown": 2, '
                    '"messages": [{"id": 1, "parent": null, "role": "user", "text": "hi"}, '
                    '{"id": 2, "parent": 1, "role": "assistant", "text": "hello", '
                    '"runs": [[0, 2, 1]], "stats": {"new_tokens": 2, "mode": "auto", '
                    f'"seconds": {bad}, "passes": [[4, 1, 0, {bad}]]}}}}]}}')
    notes: list[str] = []
    cid = import_conversation(history, path, notes=notes)
    [line] = notes
    assert line.startswith("message 2: figures left out") and says in line and "passes" in line
    reply = history.messages(cid)[1]
    assert reply.stats == {"new_tokens": 2, "mode": "auto"}  # the rest is kept
    markdown = conversation_markdown(history, cid, footer=every_number_as_float)
    assert "> 2.0" in markdown
    write_export(history, cid, tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["messages"][1]["stats"] == \
        reply.stats


def test_figures_stored_before_the_check_show_and_export_without_them(history, tmp_path):
    """A conversation imported before the check keeps its bad figures in the file: read back,
    they are left out, never an OverflowError."""
    cid = history.create_conversation("older import")
    reply = history.add_message(cid, "assistant", "hello", runs=[[0, 2, 10 ** 30]])
    with history._db:
        history._db.execute("UPDATE messages SET stats = ? WHERE id = ?",
                            ('{"new_tokens": 2, "seconds": Infinity, "drafted": 1' + "0" * 4000
                             + ', "prefill_seconds": 0.12345678901234567}', reply))
    [message] = history.messages(cid)
    assert message.stats == {"new_tokens": 2, "prefill_seconds": 0.12345678901234567}
    assert message.runs == []
    conversation_markdown(history, cid, footer=every_number_as_float)
    write_export(history, cid, tmp_path / "out.json")
    assert "Infinity" not in (tmp_path / "out.json").read_text()
