"""A bounded load test of `draftlight serve` on a real model, from many clients at once.

    python -m draftlight.bench.serve_load [--clients 32] [--seconds 60] [--queue-size 8] [--target GGUF]

Starts `draftlight serve` on a free loopback port, asks each question once alone (greedy: the
reference answers), then runs the clients for --seconds: JSON and streamed requests, some with
a Predicted Output, some streams dropped after a few chunks. It prints, and writes as JSON with
--out:
- replies that differ from the lone reference (must be 0: nothing lost or mixed up),
- 429s, and 429s answered while fewer than queue-size other requests were in flight (must be
  0: "busy" only when queue-size requests already wait),
- the server's RSS before and after the load,
- how long after the last client disconnects the engine answers a new request (the engine must
  be free within 250 ms).
Every request has a timeout; only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

QUESTIONS = [
    "Repeat after me: the United States of America.",
    "What is the capital of France?",
    "List three colours.",
    "Say hello in French.",
    "Repeat exactly: The quick brown fox jumps over the lazy dog.",
    "Name a large animal.",
]
KINDS = ("json", "stream", "dropped_stream", "prediction_json", "prediction_stream")
MAX_TOKENS = 32
REQUEST_TIMEOUT_S = 120


@dataclass
class Figures:
    clients: int
    seconds: float
    queue_size: int
    completed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    mismatched: int = 0  # replies that differ from the lone reference
    busy: int = 0  # 429s
    busy_within_bound: int = 0  # 429s while fewer than queue_size others were in flight
    other_errors: list[str] = field(default_factory=list)
    rss_before_mb: float = 0.0
    rss_after_mb: float = 0.0
    free_after_disconnect_ms: float = 0.0


class Client:
    """Raw HTTP to the server, so a stream can be dropped mid-way (the socket closed)."""

    def __init__(self, port: int, model: str) -> None:
        self.port, self.model = port, model

    def send(self, question: str, *, stream: bool, prediction: str | None = None,
             drop_after: int | None = None) -> tuple[int, str]:
        """(status, reply text); a dropped stream returns (0, text so far)."""
        body = {"model": self.model, "messages": [{"role": "user", "content": question}],
                "temperature": 0, "max_tokens": MAX_TOKENS, "stream": stream}
        if prediction:
            body["prediction"] = {"type": "content", "content": prediction}
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT_S)
        try:
            connection.request("POST", "/v1/chat/completions", json.dumps(body),
                               {"Content-Type": "application/json"})
            answer = connection.getresponse()
            if answer.status != 200:
                answer.read()
                return answer.status, ""
            if not stream:
                return 200, json.loads(answer.read())["choices"][0]["message"]["content"]
            text, chunks = [], 0
            for line in answer:
                line = line.strip()
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                data = json.loads(line[6:])
                if "error" in data:
                    return 500, data["error"]["message"]
                for choice in data.get("choices", []):
                    text.append(choice["delta"].get("content") or "")
                chunks += 1
                if drop_after is not None and chunks >= drop_after:
                    answer.close()  # the socket too, with the connection's close below
                    return 0, "".join(text)
            return 200, "".join(text)
        finally:
            connection.close()


def start_server(target: str | None, queue_size: int, home: str,
                 mode: str, ctx: int = 2048) -> tuple[subprocess.Popen, int, str]:
    args = [sys.executable, "-P", "-m", "draftlight", "serve", "--port", "0", "--ctx", str(ctx), "--mode", mode,
            "--queue-size", str(queue_size)] + (["--target", target] if target else [])
    log = Path(home) / "server.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr,
                                   env={**os.environ, "DRAFTLIGHT_HOME": home})
    deadline = time.monotonic() + 600  # the first run converts the bundled model
    while not (found := re.search(r"serving (\S+) at http://127\.0\.0\.1:(\d+)/v1",
                                  log.read_text())):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(f"serve_load: the server did not start:\n{log.read_text()}")
        time.sleep(0.2)
    return process, int(found.group(2)), found.group(1)


def rss_mb(pid: int) -> float:
    import psutil
    return psutil.Process(pid).memory_info().rss / 2**20


def run_load(client: Client, figures: Figures, references: dict[str, str],
             seed: int) -> None:
    peaks: dict[int, int] = {}  # request -> the most other requests in flight during it
    lock = threading.Lock()
    stop_at = time.monotonic() + figures.seconds

    def one_client(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        while time.monotonic() < stop_at:
            question, kind = rng.choice(QUESTIONS), rng.choice(KINDS)
            prediction = references[question] if kind.startswith("prediction") else None
            with lock:  # a 429 is fair if queue-size others were in flight at any moment of it
                others_now = len(peaks)
                for other in peaks:
                    peaks[other] = max(peaks[other], others_now)
                peaks[index] = others_now
            try:
                status, text = client.send(
                    question, stream=kind not in ("json", "prediction_json"),
                    prediction=prediction,
                    drop_after=rng.randint(1, 4) if kind == "dropped_stream" else None)
            except OSError as exc:
                status, text = -1, repr(exc)
            finally:
                if kind == "dropped_stream":
                    time.sleep(0.3)  # until the server has seen it leave, it still counts
                with lock:
                    others = peaks.pop(index)
            with lock:
                if status == 200:
                    figures.completed[kind] += 1
                    figures.mismatched += text != references[question]
                elif status == 0:  # dropped on purpose: what came must be the reply's start
                    figures.completed[kind] += 1
                    figures.mismatched += not references[question].startswith(text)
                elif status == 429:
                    figures.busy += 1
                    figures.busy_within_bound += others < figures.queue_size
                else:
                    figures.other_errors.append(f"{status} {text[:120]}")
            if status == 429:
                time.sleep(rng.uniform(0.05, 0.3))

    threads = [threading.Thread(target=one_client, args=(i,), daemon=True)
               for i in range(figures.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(figures.seconds + REQUEST_TIMEOUT_S)


def free_after_disconnect_ms(client: Client, streams: int) -> float:
    """Start `streams` long streams, drop them all at once, and time how soon after the last
    disconnect a new request starts being answered (its first chunk: the engine took it)."""
    connections = []
    for _ in range(streams):
        connection = http.client.HTTPConnection("127.0.0.1", client.port, timeout=30)
        body = {"model": client.model, "messages": [{"role": "user", "content": QUESTIONS[0]}],
                "temperature": 0, "max_tokens": 512, "stream": True}
        connection.request("POST", "/v1/chat/completions", json.dumps(body),
                           {"Content-Type": "application/json"})
        connections.append(connection)
    first = connections[0].getresponse()
    first.readline()  # the first stream is running
    first.close()  # the response holds the socket open too
    for connection in connections:
        connection.close()
    dropped = time.monotonic()
    probe = http.client.HTTPConnection("127.0.0.1", client.port, timeout=30)
    body = {"model": client.model, "messages": [{"role": "user", "content": "Hi"}],
            "temperature": 0, "max_tokens": 1, "stream": True}
    probe.request("POST", "/v1/chat/completions", json.dumps(body),
                  {"Content-Type": "application/json"})
    answer = probe.getresponse()
    answer.readline()  # the role chunk: sent once the engine has started the request
    waited = (time.monotonic() - dropped) * 1000
    answer.read()
    probe.close()
    return waited


def measure(clients: int, seconds: float, queue_size: int, target: str | None = None, *,
            mode: str = "auto", seed: int = 0) -> Figures:
    """Run the whole test; the server keeps its caches in a temporary DRAFTLIGHT_HOME."""
    figures = Figures(clients, seconds, queue_size)
    with tempfile.TemporaryDirectory(prefix="draftlight-load-") as home:
        process, port, model = start_server(target, queue_size, home, mode)
        try:
            client = Client(port, model)
            references = {q: client.send(q, stream=False)[1] for q in QUESTIONS}
            for question in QUESTIONS:  # streamed and predicted alone must agree too
                alone = client.send(question, stream=True, prediction=references[question])[1]
                figures.mismatched += alone != references[question]
            figures.rss_before_mb = rss_mb(process.pid)
            run_load(client, figures, references, seed)
            figures.rss_after_mb = rss_mb(process.pid)
            figures.free_after_disconnect_ms = free_after_disconnect_ms(client, min(4, queue_size))
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.serve_load",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--queue-size", type=int, default=8)
    parser.add_argument("--target", help="target GGUF (default: the bundled model)")
    parser.add_argument("--mode", default="auto", choices=["auto", "off", "ngram"],
                        help="the server's speculation mode (default: %(default)s)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    # a SIGTERM (timeout, Ctrl-C in a terminal) still runs measure's `finally`: no server is left
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    figures = measure(args.clients, args.seconds, args.queue_size, args.target, mode=args.mode)
    done = sum(figures.completed.values())
    print(f"{args.clients} clients for {args.seconds:.0f} s, queue {args.queue_size}: "
          f"{done} replies ({', '.join(f'{k} {v}' for k, v in figures.completed.items())})")
    print(f"differing from the lone reply: {figures.mismatched}")
    print(f"429 busy: {figures.busy} (within the queue bound: {figures.busy_within_bound})")
    print(f"other errors: {len(figures.other_errors)} {figures.other_errors[:3]}")
    print(f"server RSS: {figures.rss_before_mb:.0f} MB before, {figures.rss_after_mb:.0f} MB "
          f"after ({figures.rss_after_mb - figures.rss_before_mb:+.0f} MB)")
    print(f"engine free {figures.free_after_disconnect_ms:.0f} ms after the last disconnect")
    if args.out:
        args.out.write_text(json.dumps(asdict(figures), indent=2))
    ok = (figures.mismatched == 0 and figures.busy_within_bound == 0
          and not figures.other_errors and figures.free_after_disconnect_ms < 250)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
