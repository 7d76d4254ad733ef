"""The text a request's file parts may draw is bounded all together, and each document stops
being read as soon as its text passes what is left (issue 76, hole 1): a few KB of PDF can
draw millions of characters, and a 57 KB request took serve to 3.5 GB."""

from __future__ import annotations

import json
import time

import pytest

from draftlight.serve.file_parts import MAX_REQUEST_FILE_TEXT
from draftlight.serve.file_reading import FileLimits
from draftlight.store.documents import TextTooLong, docx_text, pdf_text
from tests.support.hostile_attachments import docx_streamed, pdf_drawing_text
from tests.support.peak_memory import PeakMemory
from tests.support.serve_loopback import asking_about, file_part, request, serving
from tests.support.waiting import slowness


def test_a_pdf_stops_being_read_once_its_text_passes_the_limit():
    drawing = pdf_drawing_text(20, 2, b"A" * 10_000)  # 11 KB that draw 4 M characters (~5 s)
    started = time.monotonic()
    with pytest.raises(TextTooLong, match="over 100,000 characters"):
        pdf_text(drawing, "drawing.pdf", max_chars=100_000)
    assert time.monotonic() - started < 1.0 * slowness()


def test_a_word_document_stops_being_read_once_its_text_passes_the_limit():
    wordy = docx_streamed("<w:p><w:r><w:t>word word</w:t></w:r></w:p>", 20_000)
    with pytest.raises(TextTooLong, match="over 1,000 characters"):
        docx_text(wordy, "wordy.docx", max_chars=1_000)


def test_pdfs_that_draw_millions_of_characters_get_413_with_memory_bounded():
    # 40 parts of 7 KB, each drawing 1 M characters: 40 M from under 400 KB of body. Before,
    # each was read whole (up to 16 M characters apiece) and all of it kept.
    part = file_part("grows.pdf", pdf_drawing_text(1000, 1))
    limits = FileLimits(chars=1_500_000)  # the default's 4 Mi take ~4 s to draw here
    with serving(file_limits=limits) as server, PeakMemory() as memory:
        started = time.monotonic()
        status, _, answer = request(server, "POST", "/v1/chat/completions",
                                    asking_about(*[part] * 40), timeout=120)
        took = time.monotonic() - started
    error = json.loads(answer)["error"]
    assert status == 413 and error["code"] == "file_text_too_large", error
    assert "passes 1,500,000 characters" in error["message"]
    assert error["param"] == "messages[0].content[1].file.file_data"  # the second part passed it
    assert took < 5.0 * slowness(), took
    assert memory.growth_mb < 100, f"serve grew by {memory.growth_mb:.0f} MB"


def test_text_files_count_toward_the_same_limit():
    notes = file_part("notes.txt", b"a line of notes\n" * 4)  # 64 characters each
    with serving(file_limits=FileLimits(chars=100)) as server:
        one = request(server, "POST", "/v1/chat/completions", asking_about(notes))
        two = request(server, "POST", "/v1/chat/completions", asking_about(notes, notes))
    assert one[0] == 200
    assert two[0] == 413 and json.loads(two[2])["error"]["code"] == "file_text_too_large"


def test_the_limit_is_as_much_text_as_a_body_may_carry():
    assert FileLimits().chars == MAX_REQUEST_FILE_TEXT == 4 * 2**20
