"""Every hostile attachment in the corpus (tests/support/hostile_attachments.py) is read, or
refused with one line, within a time bound, without growing the app: documents are read in a
process bounded from outside (store/document_child.py), so even a parser's worst case costs the
app nothing; one that runs past the reader's time or memory is stopped with one line."""

from __future__ import annotations

import resource
import time

import pytest

from draftlight.store import attachments
from draftlight.store.attachments import Attachment, AttachmentError, read_attachment
from tests.support.hostile_attachments import FILES, docx_streamed, make_file, not_files

SECONDS = 20  # per case, on a busy 2-core machine; most take well under one
APP_GROWTH_MB = 150  # the app's own peak may grow this much over the whole corpus


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_within_bounds(path) -> Attachment | str:
    start = time.monotonic()
    try:
        result = read_attachment(path)
    except AttachmentError as exc:
        result = str(exc)
        assert "\n" not in result and "Traceback" not in result, result
    assert time.monotonic() - start < SECONDS, path
    return result


def test_every_hostile_file_is_read_or_refused_in_one_line_within_bounds(tmp_path):
    paths = {case: make_file(tmp_path, case) for case in FILES}
    before = peak_mb()
    outcomes = {case: read_within_bounds(path) for case, path in paths.items()}
    assert peak_mb() - before < APP_GROWTH_MB
    refused = {case for case, got in outcomes.items() if isinstance(got, str)}
    # The corpus is hostile where it says: these cannot be attachments.
    assert {"docx 11M empty paragraphs", "docx zip bomb", "docx not xml", "docx truncated zip",
            "docx without document.xml", "pdf truncated", "pdf garbage", "pdf page count 10^9",
            "pdf pages tree loop", "text just over the limit", "text NULs",
            "text whitespace only", "html 200k unclosed comments"} <= refused, outcomes
    # ... and nothing a well-meaning file holds is lost: the text of these is read.
    assert "word word" in outcomes["docx 200k paragraphs of text"].text
    assert outcomes["html closed comments"].text == "y"
    assert outcomes["html 2 MB of one entity"].text.startswith("&&&")
    assert "/root" not in str(outcomes["docx external entity"])  # nothing of /etc/passwd


def test_paths_that_are_not_files_are_refused_at_once(tmp_path):
    for what, path in not_files(tmp_path).items():
        got = read_within_bounds(path)
        assert isinstance(got, str) or what == "unreadable", (what, got)


def test_a_document_past_the_readers_time_or_memory_is_stopped_in_one_line(tmp_path,
                                                                          monkeypatch):
    slow = tmp_path / "slow.docx"
    slow.write_bytes(docx_streamed("<w:p/>", 990_000))  # ~3 s of parsing, 9 KB on disk
    monkeypatch.setattr(attachments, "READ_SECONDS", 0.5)
    start = time.monotonic()
    with pytest.raises(AttachmentError, match=r"slow.docx: reading its text took longer than"):
        read_attachment(slow)
    assert time.monotonic() - start < 5
    monkeypatch.setattr(attachments, "READ_SECONDS", 60.0)
    monkeypatch.setattr(attachments, "READ_MEMORY", 16 << 20)
    large = tmp_path / "large.docx"  # 12 M characters of text in 200,000 paragraphs
    large.write_bytes(docx_streamed(f"<w:p><w:r><w:t>{'word ' * 12}</w:t></w:r></w:p>", 200_000))
    with pytest.raises(AttachmentError, match=r"large.docx: reading its text took more than 16 MB"):
        read_attachment(large)
    monkeypatch.setattr(attachments, "READ_MEMORY", 1 << 30)
    assert "word word" in read_attachment(large).text  # within the real bound it is read
