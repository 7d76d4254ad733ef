"""The API's requests and answers as plain data: validation of a chat completion request, and
the JSON bodies of completions, stream chunks, usage and errors (OpenAI's shapes). No I/O here,
so every rule is tested without a model or a socket (tests/test_serve_schema.py)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from app.engine.events import Stats
from app.engine.sampling import SamplingParams

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
MAX_STOPS = 4  # as OpenAI
DEFAULT_TEMPERATURE = 1.0  # OpenAI's default when a request gives none
# Parameters whose non-default values would change the reply in ways the engine cannot do:
# refused, not silently ignored. (name, what is accepted)
UNSUPPORTED = {
    "tools": "no tools", "functions": "no functions", "tool_choice": "'none'",
    "function_call": "'none'", "logprobs": "false", "top_logprobs": "0",
    "presence_penalty": "0", "frequency_penalty": "0", "logit_bias": "no bias",
    "audio": "no audio", "response_format": "{'type': 'text'}", "modalities": "['text']",
}


class ApiError(Exception):
    """An answer with an HTTP error status and OpenAI's error body."""

    def __init__(self, status: int, message: str, *, code: str | None = None,
                 param: str | None = None, type: str = "invalid_request_error",
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param
        self.type, self.headers = type, headers or {}

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}


@dataclass(frozen=True)
class ChatRequest:
    messages: list[dict[str, str]]
    params: SamplingParams
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage: a last chunk with usage only
    stop: tuple[str, ...] = ()
    prediction: str | None = None  # Predicted Outputs: text the reply is expected to resemble


def parse_chat_request(body: bytes, *, model_id: str, default_max_tokens: int) -> ChatRequest:
    """Validate a POST /v1/chat/completions body; raise ApiError (4xx) on anything wrong.
    Unknown fields are ignored, as OpenAI's own clients send fields newer than this server."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body is not valid JSON ({exc})", code="invalid_json") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    model = data.get("model")
    if not isinstance(model, str):
        raise ApiError(400, "'model' is required: a string", param="model")
    if model != model_id:
        raise ApiError(404, f"the model {model!r} does not exist; this server has {model_id!r}",
                       code="model_not_found", param="model")
    _refuse_unsupported(data)
    max_tokens = _get(data, "max_completion_tokens", int, None)
    if max_tokens is None:
        max_tokens = _get(data, "max_tokens", int, None)
    params = SamplingParams(
        temperature=_get(data, "temperature", float, DEFAULT_TEMPERATURE),
        top_p=_get(data, "top_p", float, 1.0),
        seed=_get(data, "seed", int, None),
        max_tokens=default_max_tokens if max_tokens is None else max_tokens)
    if not 0.0 <= params.temperature <= 2.0:
        raise ApiError(400, "'temperature' must be between 0 and 2", param="temperature")
    if not 0.0 < params.top_p <= 1.0:
        raise ApiError(400, "'top_p' must be greater than 0 and at most 1", param="top_p")
    if params.max_tokens < 1:
        raise ApiError(400, "'max_tokens' must be at least 1", param="max_tokens")
    options = data.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise ApiError(400, "'stream_options' must be an object", param="stream_options")
    return ChatRequest(
        messages=_messages(data.get("messages")),
        params=params,
        stream=_get(data, "stream", bool, False),
        include_usage=bool(options and options.get("include_usage") is True),
        stop=_stops(data.get("stop")),
        prediction=_prediction(data.get("prediction")))


def _get(data: dict, name: str, kind: type, default):
    """data[name] as `kind` (int for float is fine; bool is never a number), or `default` when
    absent or null."""
    value = data.get(name)
    if value is None:
        return default
    numeric = kind in (int, float) and not isinstance(value, bool)
    if kind is float and numeric and isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if kind is int and numeric and isinstance(value, int):
        return value
    if kind is bool and isinstance(value, bool):
        return value
    wanted = {float: "a number", int: "an integer", bool: "true or false"}[kind]
    raise ApiError(400, f"'{name}' must be {wanted}", param=name)


def _refuse_unsupported(data: dict) -> None:
    n = data.get("n")
    if n is not None and n != 1:
        raise ApiError(400, "'n' other than 1 is not supported: send one request per choice",
                       param="n", code="unsupported_parameter")
    for name, allowed in UNSUPPORTED.items():
        value = data.get(name)
        if value in (None, False, 0, [], {}, "none", "auto", ["text"], {"type": "text"}):
            continue
        raise ApiError(400, f"'{name}' is not supported by this server (allowed: {allowed})",
                       param=name, code="unsupported_parameter")


def _text(content, where: str) -> str:
    """A message's content: a string, or a list of text parts (OpenAI's array form)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
            isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
            for p in content):
        return "".join(p["text"] for p in content)
    raise ApiError(400, f"{where} must be a string or a list of text parts (only text is "
                        "supported)", param=where)


def _messages(raw) -> list[dict[str, str]]:
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "'messages' must be a non-empty list", param="messages")
    messages = []
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise ApiError(400, f"{where} must be an object", param=where)
        role = message.get("role")
        if role not in ROLES:
            raise ApiError(400, f"{where}.role must be one of system, developer, user, "
                                f"assistant (got {role!r})", param=f"{where}.role")
        if message.get("tool_calls") or message.get("function_call"):
            raise ApiError(400, f"{where}: tool calls are not supported",
                           param=f"{where}.tool_calls", code="unsupported_parameter")
        messages.append({"role": ROLES[role],
                         "content": _text(message.get("content"), f"{where}.content")})
    if not any(m["content"].strip() for m in messages if m["role"] == "user"):
        raise ApiError(400, "the messages hold no user message with text", param="messages")
    return messages


def _stops(raw) -> tuple[str, ...]:
    stops = [raw] if isinstance(raw, str) else raw
    if stops is None:
        return ()
    if (not isinstance(stops, list) or len(stops) > MAX_STOPS
            or not all(isinstance(s, str) and s for s in stops)):
        raise ApiError(400, f"'stop' must be a non-empty string or a list of at most "
                            f"{MAX_STOPS} of them", param="stop")
    return tuple(stops)


def _prediction(raw) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("type") != "content":
        raise ApiError(400, "'prediction' must be {\"type\": \"content\", \"content\": ...}",
                       param="prediction")
    return _text(raw.get("content"), "prediction.content") or None


# --- answers -----------------------------------------------------------------------------

def usage(stats: Stats, prompt_tokens: int) -> dict:
    """OpenAI's usage, with Predicted Outputs' counts, plus Draftlight's own figures."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": stats.new_tokens,
        "total_tokens": prompt_tokens + stats.new_tokens,
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "accepted_prediction_tokens": stats.prediction_accepted,
            "rejected_prediction_tokens": stats.prediction_drafted - stats.prediction_accepted,
        },
        "draftlight": {
            "mode": stats.mode,
            "drafted": stats.drafted,
            "accepted": stats.accepted,
            "target_passes": stats.target_passes,
            "tokens_per_second": round(stats.tokens_per_second, 2),
            "seconds": round(stats.seconds, 4),
            "prefill_seconds": round(stats.prefill_seconds, 4),
            "reused_prompt_tokens": stats.reused_prompt_tokens,
        },
    }


def finish_reason(stop_reason: str) -> str:
    """The engine's stop reason in OpenAI's words."""
    return {"eos": "stop", "stop": "stop"}.get(stop_reason, "length")


def completion(ident: str, created: int, model: str, text: str, finish: str,
               usage_: dict) -> dict:
    return {"id": ident, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish, "logprobs": None}],
            "usage": usage_}


def chunk(ident: str, created: int, model: str, delta: dict, *, finish: str | None = None,
          provenance: dict | None = None, usage_: dict | None = None,
          choices: bool = True) -> dict:
    """One streamed chunk. `provenance` is Draftlight's extension, {"source", "pass"}: whether a
    drafted token the target accepted ("draft") or the target's own ("target"), and the target
    pass that produced it; clients that do not know it ignore it."""
    out = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
           if choices else []}
    if provenance is not None:
        out["draftlight"] = provenance
    if usage_ is not None:
        out["usage"] = usage_
    return out
