"""The API's requests as plain data: validation of a chat completion request (pydantic models,
their complaints in this API's words, as api_error.ApiError); the answers' bodies are
serve/answer_bodies.py's. A request is checked first, its file parts identified but not read
(checked_chat_request), then made once their text is read (CheckedChat.request): serve reads
them in its own bounded readers (file_reading.py), parse_chat_request here. No I/O besides
that, so every rule is tested without a model or a socket (tests/serve/test_serve_logic.py,
tests/serve/test_serve_fuzz.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, Field, StrictBool, StrictInt, StrictStr, ValidationError

from draftlight.engine.core.sampling import SamplingParams
from draftlight.serve.api_error import ApiError
from draftlight.serve.response_format import response_grammar
from draftlight.serve.file_parts import (MAX_REQUEST_FILE_TEXT, FileToRead, charged, file_error,
                                         identified_part)
from draftlight.serve.tool_request import ToolRequest, message_tool_keys, tool_request
from draftlight.store.attachments import Attachment, AttachmentError, Document, with_attachments

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
         "tool": "tool"}  # a tool message answers an assistant's call (tool_request.py)
MAX_STOPS = 4  # as OpenAI
# Bounds on a request (413 or 400 past them), so one request cannot take the server's memory:
MAX_BODY_BYTES = 4 * 2**20  # the JSON body
MAX_MESSAGES = 2048  # messages in one conversation
MAX_PREDICTION_CHARS = 512 * 1024  # Predicted Outputs' text; max_tokens is bounded by n_ctx
MAX_USER_CHARS = 256  # of `user` kept: a label, not a place for a client to store text
# max_tokens when a request gives none (the context, if smaller). Not the whole context: a
# model caught in a loop would hold the engine, and every request queued behind it, until a
# 32k context filled. 2,048 tokens hold a long answer or a source file of ~250 lines; a client
# that wants more says so (OpenAI's own models stopped at 4,096 for years).
DEFAULT_MAX_TOKENS = 2048
DEFAULT_TEMPERATURE = 1.0  # OpenAI's default when a request gives none
# Parameters whose non-default values would change the reply in ways the engine cannot do:
# refused, not silently ignored. (name, what is accepted)
UNSUPPORTED = {
    "functions": "no functions (send 'tools')", "function_call": "'none' (send 'tool_choice')",
    "logprobs": "false", "top_logprobs": "0",
    "presence_penalty": "0", "frequency_penalty": "0", "logit_bias": "no bias",
    "audio": "no audio", "modalities": "['text']",
}


@dataclass(frozen=True)
class ChatRequest:
    messages: list[dict[str, str]]
    params: SamplingParams
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage: a last chunk with usage only
    stop: tuple[str, ...] = ()
    prediction: str | None = None  # Predicted Outputs: text the reply is expected to resemble
    tools: ToolRequest | None = None  # functions the model may call (tool_request.py)
    grammar: str | None = None  # structured output: GBNF the reply keeps to (response_format.py)
    user: str = ""  # OpenAI's `user`: who the client says asks (the window's Served list names it)


class TextPart(BaseModel):
    type: Literal["text"]
    text: StrictStr


class FileData(BaseModel):
    file_data: StrictStr  # base64, or a data: URL of it ("data:application/pdf;base64,…")
    filename: StrictStr = "attached file"


class FilePart(BaseModel):
    """OpenAI's file content part: its text goes under a header naming it (attachments.py)."""
    type: Literal["file"]
    file: FileData


Part = Annotated[Union[TextPart, FilePart], Field(discriminator="type")]
Content = Union[StrictStr, list[Part]]  # OpenAI's string, or its array of text and file parts
PredictionContent = Union[StrictStr, list[TextPart]]


class MessageBody(BaseModel):
    role: StrictStr  # checked against ROLES below, so the message can name what was sent
    content: Optional[Content] = None  # None only beside an assistant's tool_calls
    tool_calls: Any = None  # checked by tool_request.message_tool_keys, as is tool_call_id
    tool_call_id: Any = None
    function_call: Any = None


class PredictionBody(BaseModel):
    type: Literal["content"]
    content: PredictionContent


class StreamOptions(BaseModel):
    include_usage: Any = None


Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]  # ints count; bools never


class ChatBody(BaseModel):
    """POST /v1/chat/completions as sent; fields this server does not know are ignored, as
    OpenAI's clients send fields newer than it."""
    model: StrictStr
    messages: list[MessageBody] = Field(min_length=1, max_length=MAX_MESSAGES)
    temperature: Optional[Annotated[Number, Field(ge=0, le=2)]] = None
    top_p: Optional[Annotated[Number, Field(gt=0, le=1)]] = None
    seed: Optional[Annotated[StrictInt, Field(ge=0, lt=2**64)]] = None
    max_tokens: Optional[Annotated[StrictInt, Field(ge=1)]] = None
    max_completion_tokens: Optional[Annotated[StrictInt, Field(ge=1)]] = None
    stream: Optional[StrictBool] = None
    stream_options: Optional[StreamOptions] = None
    stop: Union[StrictStr, list[StrictStr], None] = None
    prediction: Optional[PredictionBody] = None


# What a failed field is told, by its place in the body ([] = any index): (wrong type, out of
# range). {where} is the place with its index, as in messages[2].
FIELD_ERRORS = {
    "model": ("'model' is required: a string", None),
    "messages": ("'messages' must be a non-empty list",
                 f"'messages' may hold at most {MAX_MESSAGES} messages"),
    "messages[]": ("{where} must be an object", None),
    "messages[].role": ("{where} must be one of system, developer, user, assistant, tool "
                        "(got {got})", None),
    "messages[].content": ("{where} must be a string or a list of text and file parts "
                           "(file parts as {\"type\": \"file\", \"file\": {\"file_data\": "
                           "BASE64, \"filename\": NAME}})", None),
    "temperature": ("'temperature' must be a number", "'temperature' must be between 0 and 2"),
    "top_p": ("'top_p' must be a number", "'top_p' must be greater than 0 and at most 1"),
    "seed": ("'seed' must be an integer", "'seed' must be between 0 and 2^64 - 1"),
    "max_tokens": ("'max_tokens' must be an integer", "'max_tokens' must be at least 1"),
    "max_completion_tokens": ("'max_completion_tokens' must be an integer",
                              "'max_completion_tokens' must be at least 1"),
    "stream": ("'stream' must be true or false", None),
    "stream_options": ("'stream_options' must be an object", None),
    "stop": (f"'stop' must be a non-empty string or a list of at most {MAX_STOPS} of them", None),
    "prediction": ("'prediction' must be {\"type\": \"content\", \"content\": ...}", None),
    "prediction.content": ("prediction.content must be a string or a list of text parts (only "
                           "text is supported)", None),
}
RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "too_long"}


def parse_chat_request(body: bytes, *, model_id: str, n_ctx: int) -> ChatRequest:
    """Validate a POST /v1/chat/completions body and read its file parts here, in the app's
    one document reader (serve reads them in readers of its own: file_reading.read_files);
    raise ApiError (4xx) on anything wrong. `n_ctx`, the context window, is the largest
    `max_tokens`; the default is DEFAULT_MAX_TOKENS, or n_ctx where that is smaller."""
    checked = checked_chat_request(body, model_id=model_id, n_ctx=n_ctx)
    attachments, left = [], MAX_REQUEST_FILE_TEXT
    for file in checked.files:
        found = file.found
        if isinstance(found, Document):
            try:
                found = found.read(max_chars=left)
            except AttachmentError as exc:
                raise file_error(file, exc, MAX_REQUEST_FILE_TEXT) from None
        left = charged(file, found, left, MAX_REQUEST_FILE_TEXT)
        attachments.append(found)
    return checked.request(attachments)


@dataclass(frozen=True)
class CheckedChat:
    """A chat request whose fields are all valid, its file parts identified but no document's
    text read yet: that may take seconds and millions of characters, so the caller reads them
    within its bounds and then makes the request (`request`)."""
    messages: tuple[tuple[str, tuple[str | int, ...]], ...]  # (role, texts and file indices)
    params: SamplingParams
    stream: bool
    include_usage: bool
    stop: tuple[str, ...]
    prediction: str | None
    files: tuple[FileToRead, ...]
    tools: ToolRequest | None = None
    message_keys: tuple[dict, ...] = ()  # each message's tool_calls or tool_call_id, if any
    grammar: str | None = None  # structured output (ChatRequest.grammar)
    user: str = ""  # OpenAI's `user` (ChatRequest.user)

    def request(self, attachments: list[Attachment]) -> ChatRequest:
        """The request, `attachments` being the text of `files`, in their order. ApiError
        (400) if no user message has text."""
        messages = []
        for i, (role, parts) in enumerate(self.messages):
            texts = [p for p in parts if isinstance(p, str)]
            files = [attachments[p] for p in parts if isinstance(p, int)]
            messages.append({"role": role, "content": with_attachments("".join(texts), files),
                             **(self.message_keys[i] if self.message_keys else {})})
        if not any(m["content"].strip() for m in messages if m["role"] == "user"):
            raise ApiError(400, "the messages hold no user message with text", param="messages")
        return ChatRequest(messages=messages, params=self.params, stream=self.stream,
                           include_usage=self.include_usage, stop=self.stop,
                           prediction=self.prediction, tools=self.tools, grammar=self.grammar, user=self.user)


def json_object_body(body: bytes) -> dict:
    """A request's body as a JSON object; ApiError 400 where it is not one (every endpoint)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ApiError(400, f"the body is not valid JSON ({exc})", code="invalid_json") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def checked_chat_request(body: bytes, *, model_id: str, n_ctx: int) -> CheckedChat:
    """Validate a POST /v1/chat/completions body, its file parts identified but not read;
    raise ApiError (4xx) on anything wrong."""
    data = json_object_body(body)
    _refuse_unsupported(data)
    try:
        chat = ChatBody.model_validate(data)
    except ValidationError as exc:
        raise _field_error(exc.errors()[0]) from None
    if chat.model != model_id:
        raise ApiError(404, f"the model {chat.model!r} does not exist; this server has "
                            f"{model_id!r}", code="model_not_found", param="model")
    max_tokens = chat.max_completion_tokens or chat.max_tokens or min(DEFAULT_MAX_TOKENS, n_ctx)
    if max_tokens > n_ctx:
        name = "max_completion_tokens" if chat.max_completion_tokens else "max_tokens"
        raise ApiError(400, f"'{name}' must be at most {n_ctx}, this server's context window",
                       param=name)
    prediction = _text(chat.prediction.content) if chat.prediction else ""
    if len(prediction) > MAX_PREDICTION_CHARS:
        raise ApiError(400, f"'prediction' is longer than {MAX_PREDICTION_CHARS:,} characters",
                       param="prediction")
    files: list[FileToRead] = []
    messages = _messages(chat.messages, files)
    tools, grammar = tool_request(data), response_grammar(data.get("response_format"))
    if tools is not None and grammar is not None:  # the grammar would forbid a call's markup
        raise ApiError(400, "'response_format' other than text cannot be combined with 'tools'",
                       param="response_format", code="unsupported_parameter")
    return CheckedChat(
        messages=messages,
        params=SamplingParams(
            temperature=DEFAULT_TEMPERATURE if chat.temperature is None else chat.temperature,
            top_p=1.0 if chat.top_p is None else chat.top_p,
            seed=chat.seed, max_tokens=max_tokens),
        stream=bool(chat.stream),
        include_usage=bool(chat.stream_options and chat.stream_options.include_usage is True),
        stop=_stops(chat.stop),
        prediction=prediction or None,
        files=tuple(files),
        tools=tools, grammar=grammar,
        message_keys=tuple(message_tool_keys(m.role, m.tool_calls, m.tool_call_id,
                                             f"messages[{i}]")
                           for i, m in enumerate(chat.messages)),
        # OpenAI's `user` is only a label for the client's end user: anything but a string is
        # ignored rather than refused, as unknown fields are
        user=data["user"][:MAX_USER_CHARS] if isinstance(data.get("user"), str) else "")


def _field_error(error: dict) -> ApiError:
    """Pydantic's first complaint in this API's words, naming the parameter as sent."""
    pattern, where, found = "", "", None
    for part in error["loc"]:  # e.g. ("messages", 2, "content", "list[TextPart]", 0, "type")
        if isinstance(part, int):
            pattern, where = pattern + "[]", f"{where}[{part}]"
        else:
            pattern, where = f"{pattern}.{part}".lstrip("."), f"{where}.{part}".lstrip(".")
        if pattern in FIELD_ERRORS:
            found = (pattern, where)
        elif found is not None and not isinstance(part, int):
            break  # a union's branch name, or a part inside the field that is reported
    if found is None:
        return ApiError(400, f"the request is not valid: {error['msg']}")
    pattern, where = found
    wrong_type, out_of_range = FIELD_ERRORS[pattern]
    message = out_of_range if error["type"] in RANGE_ERRORS and out_of_range else wrong_type
    got = None if error["type"] == "missing" else error.get("input")
    return ApiError(400, message.replace("{where}", where).replace("{got}", repr(got)),
                    param=where)


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


def _text(content) -> str:
    """A prediction's text: a string, or its text parts joined."""
    return content if isinstance(content, str) else "".join(part.text for part in content)


def _messages(raw: list[MessageBody], files: list[FileToRead]):
    """Each message as (role, its texts and the indices in `files` of its file parts, in
    order); its file parts identified and added to `files`."""
    messages = []
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if message.role not in ROLES:
            raise ApiError(400, f"{where}.role must be one of system, developer, user, "
                                f"assistant, tool (got {message.role!r})", param=f"{where}.role")
        if message.function_call:
            raise ApiError(400, f"{where}.function_call is not supported: send tool_calls",
                           param=f"{where}.function_call", code="unsupported_parameter")
        content = message.content
        if content is None:  # OpenAI's assistant message that only calls tools
            if not (message.role == "assistant" and message.tool_calls):
                raise ApiError(400, FIELD_ERRORS["messages[].content"][0].replace(
                    "{where}", f"{where}.content"), param=f"{where}.content")
            content = ""
        parts: list[str | int] = []
        for j, part in enumerate([content] if isinstance(content, str) else content):
            if isinstance(part, str) or isinstance(part, TextPart):
                parts.append(part if isinstance(part, str) else part.text)
                continue
            part_where = f"{where}.content[{j}].file"
            files.append(FileToRead(part_where, identified_part(
                part.file.file_data, part.file.filename, part_where)))
            parts.append(len(files) - 1)
        messages.append((ROLES[message.role], tuple(parts)))
    return tuple(messages)


def _stops(raw: str | list[str] | None) -> tuple[str, ...]:
    stops = [raw] if isinstance(raw, str) else raw
    if stops is None:
        return ()
    if len(stops) > MAX_STOPS or not all(stops):
        raise ApiError(400, f"'stop' must be a non-empty string or a list of at most "
                            f"{MAX_STOPS} of them", param="stop")
    return tuple(stops)
