"""The tool calls in a model's reply, read in the format its template taught it (tool_plan.py)
and answered in OpenAI's shape: `tool_calls` of {id, type "function", function {name,
arguments as a JSON string}}, finish_reason "tool_calls".

The reader takes the reply's text as it comes: text before a call goes on as content (a piece
that may be the start of a call's opening is held back until it is known not to be); a call is
held until it is whole, then given as two deltas (its id and name, then its arguments). A call
whose text is not JSON, names no offered function or has arguments that are not an object is
not a call: its text is given as content, and `error` says why (the answer carries it as
`draftlight.tool_call_error`). Plain data, no I/O."""

from __future__ import annotations

import json
import uuid

from draftlight.engine.text.tool_format import ToolFormat
from draftlight.serve.tool_plan import HERMES_CLOSE, HERMES_OPEN, ToolPlan

# (what opens a call, what closes it: None = the end of the reply)
MARKERS = {ToolFormat.HERMES: (HERMES_OPEN, HERMES_CLOSE),
           ToolFormat.MISTRAL: ("[TOOL_CALLS]", None),
           ToolFormat.LLAMA3: ("<|python_tag|>", None)}


class ToolCallReader:
    """Reads one reply's text (feed, then finish) into deltas: {"content": …} and
    {"tool_calls": [{"index", …}]}, as a chat stream sends them."""

    def __init__(self, plan: ToolPlan) -> None:
        self.plan = plan
        self.open, self.close = MARKERS[plan.format]
        self.calls: list[dict] = []
        self.error: str | None = None
        self._text = ""  # not yet given out
        self._in_call = False
        self._started = False  # some text came: a Llama reply that opens with "{" is a call
        self._blank = ""  # whitespace held: dropped if a call follows it
        self._deltas: list[dict] = []
        self.feed(plan.prefill)

    def feed(self, text: str) -> list[dict]:
        self._text += text
        while self._text:
            if not self._in_call and not self._open_call():
                break
            if self._in_call and not self._close_call():
                break
        deltas, self._deltas = self._deltas, []
        return deltas

    def finish(self) -> list[dict]:
        """The last deltas: an unclosed call (a reply that ended, or was stopped, at its end)
        is read as it stands; held text is content."""
        if self._in_call:
            self._read_call(self._text, self.open + self._text)
        elif self._text:
            self._content(self._text)
        self._text = ""
        if not self.calls and self._blank:
            self._deltas.append({"content": self._blank})
        self._blank = ""
        deltas, self._deltas = self._deltas, []
        return deltas

    def _open_call(self) -> bool:
        """Content up to the next call's opening (True: a call is open now), or up to where
        the text could still become one (False: more text is needed)."""
        text = self._text
        if self.plan.format is ToolFormat.LLAMA3 and not self._started and not self.calls:
            if not text.strip():
                return False
            self._started = True
            if text.lstrip().startswith("{"):  # Llama 3's JSON call, the whole reply
                self._text, self._in_call, self.open = text.lstrip(), True, ""
                return True
        at = text.find(self.open)
        if at >= 0:
            self._content(text[:at])
            self._text, self._in_call = text[at + len(self.open):], True
            return True
        held = _partial_suffix(text, self.open)
        self._content(text[:len(text) - held])
        self._text = text[len(text) - held:]
        return False

    def _close_call(self) -> bool:
        """The open call, read once its closing came (True); False: more text is needed."""
        if self.close is None:
            return False
        at = self._text.find(self.close)
        if at < 0:
            return False
        body = self._text[:at]
        self._text, self._in_call = self._text[at + len(self.close):], False
        self._read_call(body, self.open + body + self.close)
        return True

    def _read_call(self, body: str, raw: str) -> None:
        """The calls in `body`, or `raw` as content and the reason in `error`."""
        calls, reason = _parsed_calls(body, self.plan.names)
        if reason is not None:
            self.error = self.error or reason
            self._content(raw)
            return
        if not self.plan.parallel:
            calls = calls[:1] if not self.calls else []  # the first call only
        self._blank = ""
        for name, arguments in calls:
            index = len(self.calls)
            call = {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                    "function": {"name": name, "arguments": arguments}}
            self.calls.append(call)
            self._deltas.append({"tool_calls": [{"index": index, "id": call["id"],
                                                 "type": "function",
                                                 "function": {"name": name, "arguments": ""}}]})
            self._deltas.append({"tool_calls": [{"index": index,
                                                 "function": {"arguments": arguments}}]})

    def _content(self, text: str) -> None:
        """Content, its trailing whitespace held back (a call may follow it)."""
        text = self._blank + text
        kept = text.rstrip()
        self._blank = text[len(kept):]
        if kept:
            self._deltas.append({"content": kept})


def answered_with_calls(body: dict, plan: ToolPlan, text: str) -> dict:
    """A chat completion's JSON `body` whose message is `text` (the reply, after the plan's
    prefill), its calls read: `tool_calls`, content the text around them (None if there is
    none), finish_reason "tool_calls"."""
    reader = ToolCallReader(plan)
    deltas = reader.feed(text) + reader.finish()
    content = "".join(delta.get("content", "") for delta in deltas)
    choice = body["choices"][0]
    choice["message"]["content"] = content or (None if reader.calls else "")
    if reader.calls:
        choice["message"]["tool_calls"] = reader.calls
        choice["finish_reason"] = "tool_calls"
    if reader.error:
        body["draftlight"] = {"tool_call_error": reader.error}
    return body


def _parsed_calls(body: str, names: tuple[str, ...]):
    """([(name, arguments as a JSON string)], None), or ([], why they are not calls)."""
    try:
        found = json.loads(body.strip().rstrip(";"))
    except (ValueError, RecursionError) as exc:
        return [], f"the model's tool call is not valid JSON ({exc}); its text is the content"
    calls = []
    for item in found if isinstance(found, list) else [found]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return [], "the model's tool call names no function; its text is the content"
        if item["name"] not in names:
            return [], (f"the model called {item['name']!r}, which is not one of 'tools'; its "
                        f"text is the content")
        arguments = item.get("arguments", item.get("parameters", {}))
        if isinstance(arguments, str):  # some models write the arguments as a JSON string
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                arguments = None
        if not isinstance(arguments, dict):
            return [], (f"the model's call of {item['name']!r} has arguments that are not a "
                        f"JSON object; its text is the content")
        calls.append((item["name"], json.dumps(arguments, ensure_ascii=False)))
    return calls, None


def _partial_suffix(text: str, marker: str) -> int:
    """The length of the longest end of `text` that begins `marker` (held: it may be one)."""
    for size in range(min(len(text), len(marker) - 1), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0
