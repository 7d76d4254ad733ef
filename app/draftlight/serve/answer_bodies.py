"""The API's answers as JSON bodies, in OpenAI's shapes: a completion, a streamed chunk (with
Draftlight's provenance extension), usage (with Predicted Outputs' counts and Draftlight's own
figures) and the engine's stop reason in OpenAI's words. Plain data, no I/O; the requests and
errors are serve/schema.py's."""

from __future__ import annotations

from draftlight.engine.reply.events import Stats


def usage(stats: Stats, prompt_tokens: int) -> dict:
    """OpenAI's usage, with Predicted Outputs' counts, plus Draftlight's own figures."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": stats.new_tokens,
        "total_tokens": prompt_tokens + stats.new_tokens,
        # the prompt's tokens found in the cache: the prefix shared with the previous request
        "prompt_tokens_details": {"cached_tokens": stats.reused_prompt_tokens},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "accepted_prediction_tokens": stats.prediction_accepted,
            "rejected_prediction_tokens": stats.prediction_drafted - stats.prediction_accepted,
        },
        "draftlight": {
            "mode": str(stats.mode),
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
