"""Where each accepted draft token came from, in terms a reader can follow.

Drafters say where a draft came from in tokens (drafters.DraftOrigin: a position in the context
or in the prediction, or the draft model's beliefs). This turns that into one Origin per
accepted token, a typed value that crosses the engine host's pipe, and that the API,
`draftlight chat --json` and the window's history write as JSON (Origin.record):

    {"kind": "message", "message": i, "start": s, "end": e}  copied from messages[i]["content"][s:e]
    {"kind": "reply", "start": s, "end": e}                  from the reply so far, text[s:e]
    {"kind": "prediction", "start": s, "end": e}             from the Predicted Output
    {"kind": "template"}                                     from the chat template's markup
    {"kind": "model", "name": n, "p": p}                     guessed by draft model n, with
                                                             probability p ("text" instead of p
                                                             for a draft of another vocabulary)
    {"kind": "attachment", "name", "page" | "line", "start", "end", "message"}
                                     a message's span placed in the file attached to it
                                     (store/attachments.attachment_origin, at the JSON edges)

s:e are the characters of the copied token. A token that crosses the edge of a message (its
first characters are the template's, say) is clipped to the message: the slice is then the part
of the token's text that lies in the message, which the token's text contains.

It is lazy: the prompt is decoded to characters the first time a copy from it is accepted, so a
reply without copies pays nothing for it.
"""

from __future__ import annotations

import codecs
from dataclasses import asdict, dataclass, fields
from typing import Callable, Sequence

from draftlight.engine.step.drafters import DraftOrigin


@dataclass(frozen=True)
class Origin:
    """Where one accepted draft token came from (the module's docstring: which fields each kind
    sets; the others are None)."""

    kind: str
    message: int | None = None  # the index of the message in those the engine was given
    start: int | None = None  # the token's characters in its source: [start, end)
    end: int | None = None
    name: str | None = None  # "model": the draft model's; "attachment": the file's
    p: float | None = None  # "model": the probability the draft model gave the token
    text: str | None = None  # "model" of another vocabulary: the text it drafted
    page: int | None = None  # "attachment": a PDF's page, else
    line: int | None = None  # its line

    def record(self) -> dict:
        """As JSON writes it: the fields set."""
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_record(cls, record) -> "Origin | None":
        """An Origin from record()'s form; None for what is not one (keys it does not know are
        left out)."""
        if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
            return None
        known = {field.name for field in fields(cls)}
        return cls(**{key: value for key, value in record.items() if key in known})


class TokenSpans:
    """The characters each token of a list covers when the list is decoded in order (UTF-8;
    a token that only starts a character covers none, the one that completes it covers it)."""

    def __init__(self, piece: Callable[[int], bytes], tokens: Sequence[int] = ()) -> None:
        self._piece = piece
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.spans: list[tuple[int, int]] = []
        self.length = 0
        self._parts: list[str] = []
        for token in tokens:
            self.add(token)

    def add(self, token: int, text: str | None = None) -> None:
        """Append `token` (`text`: its characters, when the caller decoded it already)."""
        if text is None:
            text = self._decoder.decode(self._piece(token))
        self.spans.append((self.length, self.length + len(text)))
        self._parts.append(text)
        self.length += len(text)

    @property
    def text(self) -> str:
        return "".join(self._parts)


class OriginFinder:
    """One reply's origins. `messages` are the messages the engine was given; `kept` the indices
    of those the prompt holds (fit_prompt may leave the oldest out), in order; `prompt` its
    tokens; `prediction` the Predicted Output's tokens, if any."""

    def __init__(self, piece: Callable[[int], bytes], messages: list[dict[str, str]],
                 kept: list[int], prompt: Sequence[int], prediction: Sequence[int] = (),
                 draft_name: str = "") -> None:
        self._piece, self.messages, self.kept = piece, messages, kept
        self.prompt, self.prediction_tokens = list(prompt), list(prediction)
        self.draft_name = draft_name
        self.reply = TokenSpans(piece)  # the caller adds each emitted token with its text
        self._prompt_spans: TokenSpans | None = None
        self._message_at: list[tuple[int, int, int]] = []  # (start, end, message index)
        self._prediction_spans: TokenSpans | None = None

    def origin(self, draft: DraftOrigin | None, i: int) -> Origin | None:
        """The origin of the i-th accepted token of a draft that came from `draft`."""
        if draft is None:
            return None
        if draft.kind == "model":
            if draft.text:
                return Origin("model", name=self.draft_name, text=draft.text)
            return Origin("model", name=self.draft_name,
                          p=round(draft.p[i], 4) if i < len(draft.p) else None)
        if draft.kind == "prediction":
            if self._prediction_spans is None:
                self._prediction_spans = TokenSpans(self._piece, self.prediction_tokens)
            return _span("prediction", self._prediction_spans, draft.start + i)
        position = draft.start + i  # in the context: the prompt, then the reply
        if position >= len(self.prompt):
            return _span("reply", self.reply, position - len(self.prompt))
        return self._in_prompt(position)

    def _in_prompt(self, position: int) -> Origin:
        if self._prompt_spans is None:
            self._locate_messages()
        start, end = self._prompt_spans.spans[position]
        for first, last, index in self._message_at:
            if start < last and end > first or start == end and first <= start < last:
                return Origin("message", message=index, start=max(start, first) - first,
                              end=min(end, last) - first)
        return Origin("template")

    def _locate_messages(self) -> None:
        """Each kept message's content in the decoded prompt, searched in order (the template
        writes them in order, with its markup between)."""
        self._prompt_spans = TokenSpans(self._piece, self.prompt)
        text, cursor = self._prompt_spans.text, 0
        for index in self.kept:
            content = self.messages[index]["content"]
            found = text.find(content, cursor) if content else -1
            if found >= 0:
                self._message_at.append((found, found + len(content), index))
                cursor = found + len(content)


def _span(kind: str, spans: TokenSpans, index: int) -> Origin | None:
    if not 0 <= index < len(spans.spans):
        return None
    start, end = spans.spans[index]
    return Origin(kind, start=start, end=end)


def kept_messages(messages: list[dict[str, str]], dropped: int) -> list[int]:
    """Indices of the messages fit_prompt keeps when it drops `dropped` turns: the system
    prompt, then the turns after the first `dropped`."""
    system = 1 if messages[:1] and messages[0]["role"] == "system" else 0
    return list(range(system)) + list(range(system + dropped, len(messages)))
