"""A request whose attachment takes seconds to read holds nobody else: it is read off the
server's event loop (and in a bounded process), so every other request is answered meanwhile."""

from __future__ import annotations

import base64
import threading
import time

from tests.support.hostile_attachments import docx_streamed
from tests.support.serve_loopback import chat_body, request, serving


def test_serve_answers_at_once_while_a_slow_attachment_is_read():
    slow = docx_streamed("<w:p/>", 990_000)  # 9 KB that take ~3 s to parse: no text in it
    part = {"type": "file", "file": {"filename": "empty.docx",
                                      "file_data": base64.b64encode(slow).decode()}}
    body = chat_body(messages=[{"role": "user", "content": [part, {"type": "text",
                                                                     "text": "Summarise."}]}])
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
