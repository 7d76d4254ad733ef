"""Export and import of a conversation (issue 40, part 4): Markdown to read, JSON that comes back
as the same messages (text, runs, statistics with origins, status, mode); a file that is not an
export changes nothing."""

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
