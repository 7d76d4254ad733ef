"""A loopback OpenAI-style chat server with scripted behaviour, for the remote engine's tests:
a plain stream (no llama.cpp counters), refused keys, unknown models, failures, cut streams,
and vLLM's stream with speculative decoding ("vllm…" behaviours, vllm_chunks)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORDS = ["Hello", " there", ",", " friend", "."]

# One reply as vLLM's engine makes it: the tokens of each engine step, and how many the step
# drafted (its accepted drafts are all its tokens but the last, its own).
VLLM_STEPS = [
    (["The"], 0),  # the prefill's token: nothing drafted, so not in the per-step arrays
    ([" sea", " is"], 3),  # 1 of 3 kept
    ([" wide"], 3),  # none kept: the target's token alone
    ([" and", " deep", ","], 3),  # 2 kept
    ([" and"], 0),  # no draft this step (n-gram found no match)
    ([" old", ".", ""], 3),  # all 3 kept, the third the end-of-text token: the step's own token
    # after it is dropped, so the chunk has 3 tokens, all drafted
]
VLLM_ACCEPTED = [1, 0, 2, 3]  # per_step_accepted: the counts vLLM keeps for steps with a draft
VLLM_DRAFTED = [3, 3, 3, 3]


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: str = "ok") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviour = behaviour
        self.bodies: list[dict] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request, client_address) -> None:
        import sys
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)  # a client that hung up is expected


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        behaviour = self.server.behaviour
        if behaviour == "401" and self.headers.get("Authorization") != "Bearer right":
            return self._error(401, "Invalid API Key")
        if behaviour == "404":
            return self._error(404, "The model `nope` does not exist")
        if behaviour == "500":
            return self._error(500, "out of memory")
        if behaviour == "strict" and "timings_per_token" in body:
            return self._error(400, "Unrecognized request argument supplied: timings_per_token")
        if behaviour == "strict-usage" and "continuous_usage_stats" in (
                body.get("stream_options") or {}):
            return self._error(400, "Unrecognized stream_options key: continuous_usage_stats")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        if behaviour.startswith("vllm"):
            for chunk in vllm_chunks(body, behaviour):
                self._data(chunk)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True
            return
        words = WORDS[:2] if behaviour in ("cut", "stall") else WORDS
        for word in words:
            self._data({"choices": [{"index": 0, "delta": {"content": word},
                                     "finish_reason": None}]})
        if behaviour == "stall":  # alive, but silent for longer than the client waits
            time.sleep(2)
        if behaviour != "cut":
            self._data({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _data(self, obj) -> None:
        self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
        self.wfile.flush()

    def _error(self, status: int, message: str) -> None:
        data = json.dumps({"error": {"message": message, "code": status}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def vllm_chunks(body: dict, behaviour: str = "vllm") -> list[dict]:
    """VLLM_STEPS streamed as vLLM's chat endpoint streams them (vllm/entrypoints/openai/
    chat_completion/serving.py, chat_completion_stream_generator: a role chunk, one chunk per
    engine step, usage on each with stream_options.continuous_usage_stats, and after the
    finishing chunk a usage chunk with `choices: []` carrying `metrics` (docs: "Per-Request
    Acceptance Metrics", vLLM v0.32.0).

    behaviour: "vllm" (--per-request-spec-decode-metrics detailed), "vllm-summary", "vllm-nospec"
    (the flag left at none: no metrics), "vllm-merged" (steps 4 and 5 in one chunk, as vLLM's
    output collector merges the outputs of a client that fell behind)."""
    options = body.get("stream_options") or {}
    include_usage = bool(options.get("include_usage"))
    continuous = include_usage and bool(options.get("continuous_usage_stats"))
    head = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1,
            "model": "stub-model"}
    prompt = 7
    steps = [tokens for tokens, _ in VLLM_STEPS]
    if behaviour == "vllm-merged":
        steps = steps[:3] + [steps[3] + steps[4]] + steps[5:]

    def usage(completion: int) -> dict:
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}

    chunks = [dict(head, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""},
                                   "logprobs": None, "finish_reason": None}],
                   prompt_token_ids=None)]
    sent = 0
    for i, tokens in enumerate(steps):
        sent += len(tokens)
        last = i == len(steps) - 1
        choice = {"index": 0, "delta": {"content": "".join(tokens)}, "logprobs": None,
                  "finish_reason": "stop" if last else None, "token_ids": None}
        if last:
            choice["stop_reason"] = None
        chunks.append(dict(head, choices=[choice]))
    if continuous:
        counts = [0] + [sum(len(t) for t in steps[:i + 1]) for i in range(len(steps))]
        for chunk, completion in zip(chunks, counts):
            chunk["usage"] = usage(completion)
    if include_usage:
        final = dict(head, choices=[], usage=usage(sent))
        spec = {"mean_acceptance_length": 1 + sum(VLLM_ACCEPTED) / len(VLLM_ACCEPTED),
                "draft_acceptance_rate": sum(VLLM_ACCEPTED) / sum(VLLM_DRAFTED),
                "acceptance_histogram": [VLLM_ACCEPTED.count(j) for j in range(4)],
                "acceptance_histogram_by_draft_length": {
                    "3": [VLLM_ACCEPTED.count(j) for j in range(4)]},
                "num_spec_steps": len(VLLM_ACCEPTED),
                "num_accepted_draft_tokens": sum(VLLM_ACCEPTED),
                "num_draft_tokens": sum(VLLM_DRAFTED), "num_spec_tokens": 3}
        if behaviour != "vllm-summary":
            spec |= {"per_step_accepted": VLLM_ACCEPTED, "per_step_drafted": VLLM_DRAFTED}
        if behaviour != "vllm-nospec":
            final["metrics"] = {"speculative_decoding": spec}
        chunks.append(final)
    return chunks
