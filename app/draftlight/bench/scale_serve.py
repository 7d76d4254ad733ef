"""`draftlight serve` on a long conversation, for `draftlight bench scale`: a client sends the
whole conversation, then the same with the reply and one more message. The second request should
read only what changed since the first (the prefix they share stays in the cache); the server's
usage says how many of the prompt's tokens were in the cache (OpenAI's
`prompt_tokens_details.cached_tokens`)."""

from __future__ import annotations

import http.client
import json
import tempfile
import time
from pathlib import Path

from draftlight.bench.serve_load import start_server

REQUEST_TIMEOUT_S = 900


def ask(port: int, model: str, messages: list[dict], max_tokens: int) -> tuple[str, dict, float]:
    """(reply, usage, seconds) of one greedy request."""
    body = {"model": model, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    started = time.perf_counter()
    try:
        connection.request("POST", "/v1/chat/completions", json.dumps(body),
                           {"Content-Type": "application/json"})
        answer = connection.getresponse()
        data = json.loads(answer.read())
    finally:
        connection.close()
    if answer.status != 200:
        raise RuntimeError(f"serve answered {answer.status}: {data}")
    return (data["choices"][0]["message"]["content"], data["usage"],
            time.perf_counter() - started)


def serve_turns(target: Path, n_ctx: int, messages: list[dict], turn: str,
                max_tokens: int) -> dict:
    """The two requests' prompt tokens, reused tokens and seconds, in a home of their own."""
    with tempfile.TemporaryDirectory(prefix="draftlight-scale-serve-") as home:
        process, port, model = start_server(str(target), 1, home, "auto", ctx=n_ctx)
        try:
            figures = []
            asked = messages + [{"role": "user", "content": turn}]
            for _ in range(2):
                reply, usage, seconds = ask(port, model, asked, max_tokens)
                figures.append({"prompt_tokens": usage["prompt_tokens"],
                                "reused": usage["prompt_tokens_details"]["cached_tokens"],
                                "seconds": seconds})
                asked = asked + [{"role": "assistant", "content": reply},
                                 {"role": "user", "content": turn}]
        finally:
            process.terminate()
            process.wait(timeout=60)
    return {"cold": figures[0], "next": figures[1]}
