"""POST /v1/completions as plain data: a prompt completed as given (no chat template), with the
chat request's sampling, stop sequences, streaming and Predicted Outputs, validated by the same
rules and worded by the same errors as schema.py's chat request. No I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Optional, Union

from pydantic import BaseModel, Field, StrictBool, StrictInt, StrictStr, ValidationError

from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.text.raw_prompt import RawPrompt
from draftlight.serve.schema import (DEFAULT_TEMPERATURE, MAX_PREDICTION_CHARS, ApiError, Number,
                                     json_object_body,
                                     PredictionBody, StreamOptions, _field_error,
                                     _refuse_unsupported, _stops, _text)

# OpenAI's default for this endpoint (its chat's is the context): clients of it that want a
# longer completion say so, and a code completion asked for with no bound stays short.
DEFAULT_COMPLETION_TOKENS = 16


@dataclass(frozen=True)
class CompletionRequest:
    """What serve_worker.run_job answers, as it answers a schema.ChatRequest."""
    raw_prompt: RawPrompt
    params: SamplingParams
    stream: bool = False
    include_usage: bool = False
    stop: tuple[str, ...] = ()
    prediction: str | None = None

    @property
    def messages(self) -> list[dict[str, str]]:
        """The prompt (message 0) and suffix (1), where provenance names a message."""
        return self.raw_prompt.as_messages()


class CompletionBody(BaseModel):
    """POST /v1/completions as sent; unknown fields are ignored, as for a chat request."""
    model: StrictStr
    prompt: Any = None  # a string or a list of one; checked in _prompt_text, to say which
    suffix: Optional[StrictStr] = None
    temperature: Optional[Annotated[Number, Field(ge=0, le=2)]] = None
    top_p: Optional[Annotated[Number, Field(gt=0, le=1)]] = None
    seed: Optional[Annotated[StrictInt, Field(ge=0, lt=2**64)]] = None
    max_tokens: Optional[Annotated[StrictInt, Field(ge=1)]] = None
    stream: Optional[StrictBool] = None
    stream_options: Optional[StreamOptions] = None
    stop: Union[StrictStr, list[StrictStr], None] = None
    prediction: Optional[PredictionBody] = None


def parse_completion_request(body: bytes, *, model_id: str, n_ctx: int) -> CompletionRequest:
    """Validate a POST /v1/completions body; raise ApiError (4xx) on anything wrong.
    `max_tokens` defaults to DEFAULT_COMPLETION_TOKENS (OpenAI's) and may reach `n_ctx`."""
    data = json_object_body(body)
    _refuse_what_is_not_done(data)
    _refuse_unsupported({k: v for k, v in data.items() if k != "logprobs"})
    try:
        sent = CompletionBody.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["loc"][:1] == ("suffix",):
            raise ApiError(400, "'suffix' must be a string", param="suffix") from None
        raise _field_error(error) from None
    if sent.model != model_id:
        raise ApiError(404, f"the model {sent.model!r} does not exist; this server has "
                            f"{model_id!r}", code="model_not_found", param="model")
    max_tokens = sent.max_tokens or min(DEFAULT_COMPLETION_TOKENS, n_ctx)
    if max_tokens > n_ctx:
        raise ApiError(400, f"'max_tokens' must be at most {n_ctx}, this server's context "
                            "window", param="max_tokens")
    prediction = _text(sent.prediction.content) if sent.prediction else ""
    if len(prediction) > MAX_PREDICTION_CHARS:
        raise ApiError(400, f"'prediction' is longer than {MAX_PREDICTION_CHARS:,} characters",
                       param="prediction")
    return CompletionRequest(
        raw_prompt=RawPrompt(_prompt_text(sent.prompt), sent.suffix or None),
        params=SamplingParams(
            temperature=DEFAULT_TEMPERATURE if sent.temperature is None else sent.temperature,
            top_p=1.0 if sent.top_p is None else sent.top_p,
            seed=sent.seed, max_tokens=max_tokens),
        stream=bool(sent.stream),
        include_usage=bool(sent.stream_options and sent.stream_options.include_usage is True),
        stop=_stops(sent.stop),
        prediction=prediction or None)


def _refuse_what_is_not_done(data: dict) -> None:
    """The completion fields the engine cannot honour yet: a 400 that says so, never ignored."""
    if data.get("logprobs") is not None:
        raise ApiError(400, "'logprobs' is not supported yet by this server", param="logprobs",
                       code="unsupported_parameter")
    if data.get("echo") not in (None, False):
        raise ApiError(400, "'echo' is not supported: the answer holds the completion only; "
                            "the client has the prompt", param="echo",
                       code="unsupported_parameter")
    if data.get("best_of") not in (None, 1):
        raise ApiError(400, "'best_of' other than 1 is not supported", param="best_of",
                       code="unsupported_parameter")


def _prompt_text(prompt) -> str:
    """A string, or a list of one string (OpenAI's batch of prompts, of one)."""
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
        raise ApiError(400, "'prompt' as token ids is not supported: send its text",
                       param="prompt", code="unsupported_parameter")
    if isinstance(prompt, list) and len(prompt) > 1:
        raise ApiError(400, "'prompt' may hold one prompt: send one request per prompt",
                       param="prompt", code="unsupported_parameter")
    raise ApiError(400, "'prompt' is required: a string, or a list of one string",
                   param="prompt")
