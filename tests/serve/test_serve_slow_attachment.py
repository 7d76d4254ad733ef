"""A request whose attachments take seconds to read holds nobody else: its fields are checked
off the server's event loop and its documents read by a few bounded reader processes
(serve/file_reading.py), one at a time per request, so every other request is answered
meanwhile; a request's files together have a time limit, and a client that leaves stops its
files being read."""

from __future__ import annotations

import json
import threading
import time

from draftlight.serve.file_reading import FileLimits
from tests.support.documents import pdf_bytes
from tests.support.hostile_attachments import docx_streamed, pdf_drawing_text, slow_docx
from tests.support.serve_loopback import (asking_about, file_part, request, send_without_reading,
                                          serving)
from tests.support.waiting import slowness

SLOW = file_part("slow.docx", slow_docx())  # ~2.5 s to read here, valid
ONE_PAGE = asking_about(file_part("page.pdf", pdf_bytes([["One page of text."]])))


def in_background(server, body: dict) -> tuple[threading.Thread, dict]:
    """A thread sending `body` (started); the answer lands in the dict as "answer"."""
    answers: dict = {}
    thread = threading.Thread(target=lambda: answers.update(
        answer=request(server, "POST", "/v1/chat/completions", body, timeout=120)))
    thread.start()
    return thread, answers


def timed(server, body: dict) -> tuple[int, dict, float]:
    started = time.monotonic()
    status, _, answer = request(server, "POST", "/v1/chat/completions", body, timeout=60)
    return status, json.loads(answer), time.monotonic() - started


def test_serve_answers_at_once_while_a_slow_attachment_is_read():
    slow = docx_streamed("<w:p/>", 990_000)  # 9 KB that take ~3 s to parse: no text in it
    body = asking_about(file_part("empty.docx", slow))
    with serving() as server:
        request(server, "GET", "/v1/models")  # the server is up, its first request answered
        answers = {}
        hostile = threading.Thread(target=lambda: answers.update(
            slow=request(server, "POST", "/v1/chat/completions", body, timeout=120)))
        started = time.monotonic()
        hostile.start()
        time.sleep(0.5)  # the slow request is being read
        assert hostile.is_alive()
        status, _, _ = request(server, "GET", "/v1/models")
        answered = time.monotonic() - started
        hostile.join(120)
        parsed = time.monotonic() - started
    assert status == 200 and answered < 1.5, answered
    status, _, text = answers["slow"]
    assert status == 400 and b"the Word document has no text" in text
    assert parsed > answered + 0.5  # the slow one really was still being read


def test_slow_files_in_one_request_hold_one_reader_while_another_clients_file_is_read():
    # Before: one reader for the whole server, so the page waited for both slow files.
    with serving() as server:
        slow, answers = in_background(server, asking_about(SLOW, SLOW))
        time.sleep(0.5)  # the slow request holds a reader
        status, quick, took = timed(server, ONE_PAGE)
        slow.join(120)
    assert status == 200 and quick["choices"][0]["message"]["content"], quick
    assert took < 2.0 * slowness(), f"the one page waited {took:.1f} s for the slow files"
    assert answers["answer"][0] == 200  # the slow files were read, just not first


def test_a_requests_files_are_read_within_its_time_limit():
    # Before: no limit per request; both files were read (~5 s) and the request answered.
    with serving(file_limits=FileLimits(seconds=1.0)) as server:
        status, answer, took = timed(server, asking_about(SLOW, SLOW))
    assert status == 400 and answer["error"]["code"] == "file_read_timeout", answer
    assert "longer than 1 s" in answer["error"]["message"]
    assert answer["error"]["param"] == "messages[0].content[0].file.file_data"
    assert took < 1.0 + 2.0 * slowness(), took


def test_a_client_that_leaves_stops_its_files_being_read():
    # One reader: the page can only be read once the slow request lets go of it. Before, the
    # slow file went on being read for nobody (8 M characters drawn: ~8 s here).
    very_slow = file_part("very-slow.pdf", pdf_drawing_text(90, 2))
    with serving(file_limits=FileLimits(readers=1, chars=10_000_000)) as server:
        request(server, "POST", "/v1/chat/completions", ONE_PAGE)  # the reader has started
        leaving = send_without_reading(server, asking_about(very_slow))
        time.sleep(0.5)  # it is being read
        leaving.close()
        status, answer, took = timed(server, ONE_PAGE)
    assert status == 200, answer
    assert took < 2.0 * slowness(), f"the page waited {took:.1f} s for a client that had left"


def test_requests_past_those_that_may_wait_for_a_reader_get_429():
    with serving(file_limits=FileLimits(readers=1, waiting=1)) as server:
        reading = send_without_reading(server, asking_about(SLOW))
        time.sleep(0.3)
        waiting = send_without_reading(server, asking_about(SLOW))
        time.sleep(0.3)
        status, answer, took = timed(server, ONE_PAGE)
        reading.close()
        waiting.close()
    assert status == 429 and answer["error"]["code"] == "queue_full", answer
    assert "reading other requests' files" in answer["error"]["message"]
    assert took < 1.0 * slowness()
