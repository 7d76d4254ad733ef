"""`draftlight serve` as clients use it: one real server process on a free loopback port, the
bundled SmolLM2-135M, the real `openai` client. Tests run in file order; the last one stops the
server with Ctrl-C (SIGINT)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import openai
import pytest

from draftlight.bench.runner import DEFAULT_QUESTIONS
from tests.support.waiting import scaled

KEY = "test-key"
QUESTION = "Repeat after me: the United States of America."
pytestmark = pytest.mark.slow


@dataclass
class Server:
    url: str
    model: str
    env: dict[str, str]
    target: Path
    process: subprocess.Popen
    log: Path

    def client(self, key: str = KEY) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url, api_key=key, max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def server(tmp_path_factory, bundled_model):
    """n-gram mode (no cost timing at start), a 1,024-token context, one waiting request."""
    home = tmp_path_factory.mktemp("serve-home")
    # the key from the environment, as the README shows it (a command line is public)
    env = {**os.environ, "DRAFTLIGHT_HOME": str(home), "DRAFTLIGHT_API_KEY": KEY}
    log = home / "server.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "draftlight", "serve", "--port", "0", "--target", str(bundled_model),
             "--mode", "ngram", "--ctx", "1024", "--queue-size", "1"],
            stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    try:
        deadline = time.monotonic() + 180
        while not (found := re.search(r"serving (\S+) at (http://\S+/v1)", log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield Server(found.group(2), found.group(1), env, bundled_model, process, log)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def raw(url: str, body: bytes | None = None, key: str | None = KEY) -> tuple[int, Message, dict]:
    """(status, headers, JSON body) of a GET (no body) or POST, without a client library."""
    request = urllib.request.Request(url, data=body, method="GET" if body is None else "POST")
    if body is not None:
        request.add_header("Content-Type", "application/json")  # as every client sends
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.headers, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.load(error)


def chat_json(server: Server, *args: str) -> tuple[list[dict], dict]:
    proc = subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", "--json", "--target",
                           str(server.target), *args], capture_output=True, text=True,
                          timeout=300, env=server.env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return [line for line in lines if line["type"] == "token"], lines[-1]


def test_greedy_replies_stream_and_not_equal_draftlight_chat_json(server):
    tokens, done = chat_json(server, "--mode", "ngram", "--max-tokens", "40", QUESTION)
    client = server.client()
    assert [m.id for m in client.models.list()] == [server.model]
    request = dict(model=server.model, messages=[{"role": "user", "content": QUESTION}],
                   temperature=0, max_tokens=40)
    reply = client.chat.completions.create(**request)
    assert reply.choices[0].message.content == done["text"]
    assert reply.usage.completion_tokens == done["stats"]["new_tokens"]
    assert reply.usage.model_extra["draftlight"]["target_passes"] == done["stats"]["target_passes"]

    chunks = list(client.chat.completions.create(**request, stream=True))
    pieces = [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(c.choices[0].delta.content for c in pieces) == done["text"]
    # Every piece says where it came from, and the same as the terminal's JSON lines.
    provenance = [c.model_extra["draftlight"] for c in pieces]
    assert [(c.choices[0].delta.content, p["source"]) for c, p in zip(pieces, provenance)] == \
        [(t["text"], t["source"]) for t in tokens]
    assert all(isinstance(p["pass"], int) for p in provenance)
    final = chunks[-1]
    assert final.choices[0].finish_reason in ("stop", "length")
    details = final.usage.completion_tokens_details
    assert details.accepted_prediction_tokens == 0 == details.rejected_prediction_tokens
    stats = final.usage.model_extra["draftlight"]
    assert {"drafted", "accepted", "target_passes", "tokens_per_second"} <= stats.keys()


def test_a_conversations_next_request_reads_only_what_changed(server):
    """The prefix shared with the previous request stays in the cache (issue 57, item 4), and
    usage says so as OpenAI's clients read it."""
    client = server.client()
    messages = [{"role": "user", "content": "Here is a list: " + ", ".join(
        f"item {i} is a {colour}" for i, colour in enumerate(["red", "green", "blue"] * 12))
        + ". Which colour is item 5?"}]
    first = client.chat.completions.create(model=server.model, messages=messages,
                                           temperature=0, max_tokens=24)
    messages += [{"role": "assistant", "content": first.choices[0].message.content},
                 {"role": "user", "content": "And item 7?"}]
    second = client.chat.completions.create(model=server.model, messages=messages,
                                            temperature=0, max_tokens=24)
    cached = second.usage.prompt_tokens_details.cached_tokens
    assert first.usage.prompt_tokens > 200
    assert cached >= first.usage.prompt_tokens - 4  # the whole first prompt, up to its end
    assert second.usage.prompt_tokens - cached <= 24 + 16  # the reply and the new message
    assert second.usage.model_extra["draftlight"]["reused_prompt_tokens"] == cached


def test_a_run_copied_from_a_file_part_names_the_file_and_its_page(server):
    """A PDF sent as a file part (issue 39, part 7): each token copied from it says so, with
    its page and its span of the file's text, as `draftlight chat --json` does."""
    import base64

    from draftlight.store.attachments import attachment_from_bytes
    from tests.support.documents import pdf_bytes
    data = pdf_bytes([["Quarterly report."], ["The plant in Lyon reopened after the long strike "
                                              "of the winter."]])
    text = attachment_from_bytes("report.pdf", data).text
    request = dict(model=server.model, temperature=0, max_tokens=40, stream=True, messages=[
        {"role": "user", "content": [
            {"type": "file", "file": {"file_data": base64.b64encode(data).decode(),
                                      "filename": "report.pdf"}},
            {"type": "text", "text": "Copy the sentence of page 2 of the attached report, "
                                     "word for word."}]}])
    chunks = list(server.client().chat.completions.create(**request))
    copied = [(c.choices[0].delta.content, c.model_extra["draftlight"]["origin"])
              for c in chunks if c.choices and c.choices[0].delta.content
              and c.model_extra["draftlight"].get("origin", {}).get("kind") == "attachment"]
    assert len(copied) >= 5, chunks[-1]
    for piece, origin in copied:
        assert origin["name"] == "report.pdf" and origin["page"] in (1, 2)
        assert text[origin["start"]:origin["end"]] == piece


def test_a_prediction_is_accepted_on_a_code_edit_and_changes_nothing(server):
    question = json.loads(DEFAULT_QUESTIONS.read_text().splitlines()[21])  # rename x to counts
    assert question["category"] == "code_editing"
    prompt = question["turns"][0]
    code = prompt.split("```python\n")[1].split("```")[0]
    request = dict(model=server.model, messages=[{"role": "user", "content": prompt}],
                   temperature=0, max_tokens=32)
    client = server.client()
    plain = client.chat.completions.create(**request)
    predicted = client.chat.completions.create(
        **request, prediction={"type": "content", "content": code})
    assert predicted.choices[0].message.content == plain.choices[0].message.content
    details = predicted.usage.completion_tokens_details
    assert details.accepted_prediction_tokens > 0


def test_bad_requests_get_openai_errors_never_tracebacks(server):
    client = server.client()
    hello = [{"role": "user", "content": "hi"}]
    with pytest.raises(openai.AuthenticationError):
        server.client("wrong").chat.completions.create(model=server.model, messages=hello)
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-4o", messages=hello)
    assert missing.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError) as several:
        client.chat.completions.create(model=server.model, messages=hello, n=2)
    assert several.value.body["param"] == "n"
    with pytest.raises(openai.BadRequestError) as long:
        client.chat.completions.create(model=server.model, max_tokens=8, messages=[
            {"role": "user", "content": "word " * 1500}])
    assert long.value.body["code"] == "context_length_exceeded"
    for body in (b"{not json", b'{"model": "' + server.model.encode() + b'", "messages": []}',
                 b'{"model": 3}'):
        status, _, answer = raw(f"{server.url}/chat/completions", body)
        assert status == 400
        assert set(answer["error"]) == {"message", "type", "param", "code"}
    assert raw(f"{server.url}/models", key=None)[0] == 401
    assert raw(f"{server.url}/nowhere")[0] == 404
    assert "Traceback" not in server.log.read_text()


def test_a_full_queue_is_429_and_a_disconnect_frees_the_engine_at_once(server):
    client = server.client()
    story = client.chat.completions.create(
        model=server.model, stream=True, temperature=0, max_tokens=600,
        messages=[{"role": "user", "content": "Write a very long story about a lighthouse."}])
    for _, _ in zip(range(3), story):  # it runs
        pass
    started: list[float] = []
    texts: list[str] = []

    def waiting() -> None:  # queued behind the story; its headers come when it starts
        stream = client.chat.completions.create(
            model=server.model, stream=True, temperature=0, max_tokens=4,
            messages=[{"role": "user", "content": "Say hi."}])
        started.append(time.perf_counter())
        texts.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))

    thread = threading.Thread(target=waiting)
    thread.start()
    time.sleep(1.0)  # the second request is in the queue (of one); the story runs ~6 s more
    status, headers, busy = raw(f"{server.url}/chat/completions", json.dumps(
        {"model": server.model, "messages": [{"role": "user", "content": "x"}]}).encode())
    assert status == 429, busy
    assert headers["Retry-After"].isdigit()
    assert busy["error"]["code"] == "queue_full"
    assert not started
    cancelled = time.perf_counter()
    story.close()  # the client goes away mid-stream
    thread.join(60)
    assert started and started[0] - cancelled < 0.25, started[0] - cancelled
    assert texts and texts[0]


def test_a_client_that_gives_up_on_a_json_answer_frees_the_engine(server):
    impatient = openai.OpenAI(base_url=server.url, api_key=KEY, max_retries=0, timeout=0.6)
    with pytest.raises(openai.APITimeoutError):
        impatient.chat.completions.create(
            model=server.model, temperature=0, max_tokens=600,
            messages=[{"role": "user", "content": "Write a very long story about a lighthouse."}])
    gave_up = time.perf_counter()
    stream = server.client().chat.completions.create(
        model=server.model, stream=True, temperature=0, max_tokens=2,
        messages=[{"role": "user", "content": "Say hi."}])
    # a pass or two, on this machine: the engine stops at the next token after the client left
    assert time.perf_counter() - gave_up < scaled(250) / 1000
    stream.close()


def test_ctrl_c_stops_the_server_cleanly(server):
    server.process.send_signal(signal.SIGINT)
    code = server.process.wait(30)
    log = server.log.read_text()
    assert code in (0, 130), log
    assert "server stopped" in log and "Traceback" not in log
