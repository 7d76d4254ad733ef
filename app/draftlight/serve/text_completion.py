"""The answers of POST /v1/completions in OpenAI's shapes: `text_completion` objects, JSON or
streamed, with the same usage and provenance extension as a chat completion (answer_bodies.py).
Plain data, no I/O."""

from __future__ import annotations

import json
import time
import uuid

from draftlight.serve.answer_bodies import finish_reason, usage
from draftlight.serve.completion_schema import CompletionRequest


class TextCompletionReply:
    """The identity of one text completion and the bodies that carry it. Its `chunk` takes the
    chat stream's deltas ({"content": text}; the opening {"role": …} becomes an empty text),
    so routes.py streams both kinds of reply with one loop."""

    def __init__(self, chat: CompletionRequest, model_id: str, prompt_tokens: int) -> None:
        self.chat, self.model, self.prompt_tokens = chat, model_id, prompt_tokens
        self.id = f"cmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def chunk(self, delta: dict, *, finish: str | None = None, provenance: dict | None = None,
              usage_: dict | None = None, choices: bool = True) -> str:
        body = self._body([{"index": 0, "text": delta.get("content", ""), "logprobs": None,
                            "finish_reason": finish}] if choices else [])
        if provenance is not None:
            body["draftlight"] = provenance
        if usage_ is not None:
            body["usage"] = usage_
        return json.dumps(body, ensure_ascii=False)

    def completion(self, done) -> dict:
        """The JSON answer from serve_worker's Finished."""
        body = self._body([{"index": 0, "text": done.text, "logprobs": None,
                            "finish_reason": finish_reason(done.finish_reason)}])
        body["usage"] = usage(done.stats, done.prompt_tokens)
        return body

    def _body(self, choices: list[dict]) -> dict:
        return {"id": self.id, "object": "text_completion", "created": self.created,
                "model": self.model, "choices": choices}
