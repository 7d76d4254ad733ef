"""A conversation's prompt tokens, with the users' text kept as text.

llama.cpp parses special tokens either in all of a text (parse_special) or in none of it. A chat
prompt needs both: the template's own markers (`<|im_start|>`, `<|eot_id|>`, …) must become
control tokens, and a message — or a pasted document — that contains `<|im_start|>system` must
stay text, or anyone who can put words in front of the model can forge a role.

So the prompt is tokenized in pieces: the template's text with special tokens parsed, and each
message's text without. Only messages that *would* parse into other tokens are cut out (the
same text tokenized both ways differs); every other prompt is tokenized exactly as before, in
one piece. Where a message lies in the rendered prompt is found by rendering once more with
two noncharacters around it, inside its outer whitespace (templates `trim` messages): if the
marked render, less the marks, is the prompt, the marks are the spans. A template that
rewrites messages otherwise (one that splits on `</think>`, say) falls back to finding the
message's text in the prompt; one that hides it entirely is refused with one line.

Engines that render and tokenize the prompt themselves (llama-server parses special tokens in
the whole of it) get `neutralized` messages instead: a word joiner inside each marker, which
the model reads as text and the tokenizer no longer matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.text.chat_template import ChatTemplate
from draftlight.engine.core.errors import ChatTemplateError

Messages = list[dict[str, str]]
OPEN, CLOSE = "\ufdd0", "\ufdd1"  # Unicode noncharacters: never part of text a person means
WORD_JOINER = "\u2060"  # invisible, and no tokenizer's marker contains it
_MARKS = re.compile(f"([{OPEN}{CLOSE}])")
_CACHE_SIZE = 512


class ControlText:
    """Which message texts contain a model's control tokens, remembered per text."""

    def __init__(self, model: LanguageModel) -> None:
        self.model = model
        self._known: dict[str, bool] = {}

    def in_text(self, text: str) -> bool:
        if not isinstance(text, str) or not text:
            return False
        found = self._known.get(text)
        if found is None:
            found = (self.model.tokenize(text, add_bos=False, special=True)
                     != self.model.tokenize(text, add_bos=False, special=False))
            if len(self._known) >= _CACHE_SIZE:
                self._known.clear()
            self._known[text] = found
        return found

    def prompt_tokens(self, template: ChatTemplate, messages: Messages) -> list[int]:
        """The conversation rendered by `template` and tokenized, messages as text."""
        text = template.render(messages)
        bos = template.bos_token
        add_bos = self.model.add_bos and not (bos and text.startswith(bos))
        forging = [i for i, m in enumerate(messages) if self.in_text(m.get("content"))]
        if not forging:
            return self.model.tokenize(text, add_bos=add_bos, special=True)
        tokens: list[int] = []
        for piece, special in _pieces(text, _message_spans(template, messages, forging, text)):
            tokens += self.model.tokenize(piece, add_bos=add_bos and not tokens, special=special)
        return tokens


def _pieces(text: str, spans: list[tuple[int, int]]) -> Iterable[tuple[str, bool]]:
    """(piece, parse special tokens?) covering `text`, the spans as plain text."""
    position = 0
    for start, end in spans:
        if start > position:
            yield text[position:start], True
        yield text[start:end], False
        position = end
    if position < len(text):
        yield text[position:], True


def _marked(content: str) -> str:
    core = content.strip()
    start = content.index(core)
    return content[:start] + OPEN + core + CLOSE + content[start + len(core):]


def _message_spans(template: ChatTemplate, messages: Messages, forging: list[int],
                   text: str) -> list[tuple[int, int]]:
    """Where the `forging` messages' text lies in `text`, the rendered prompt."""
    marked = [{**m, "content": _marked(m["content"])} if i in forging else m
              for i, m in enumerate(messages)]
    spans, start, position, unmarked = [], None, 0, []
    for part in _MARKS.split(template.render(marked)):
        if part == OPEN and start is None:
            start = position
        elif part == CLOSE and start is not None:
            spans.append((start, position))
            start = None
        elif part in (OPEN, CLOSE):
            break  # unbalanced: the user's own text holds a mark
        else:
            unmarked.append(part)
            position += len(part)
    else:
        if start is None and "".join(unmarked) == text:
            return spans
    return _found_spans(messages, forging, text)


def _found_spans(messages: Messages, forging: list[int], text: str) -> list[tuple[int, int]]:
    """The fallback: each message's text, looked for in order in the prompt."""
    spans, position = [], 0
    for i in forging:
        core = messages[i]["content"].strip()
        start = text.find(core, position)
        if start < 0:
            raise ChatTemplateError(
                "this model's chat template changes the text of messages, so a message that "
                "contains the model's control tokens cannot be sent safely; remove them from it")
        spans.append((start, start + len(core)))
        position = start + len(core)
    return spans


def neutralized(messages: Messages, markers: Iterable[str]) -> Messages:
    """`messages` with a word joiner inside each of `markers` (control-token texts) they hold."""
    markers = sorted((m for m in markers if len(m) > 1), key=len, reverse=True)
    if not markers:
        return messages
    pattern = re.compile("|".join(map(re.escape, markers)))

    def joined(match: re.Match) -> str:
        return match.group()[0] + WORD_JOINER + match.group()[1:]

    return [{**m, "content": pattern.sub(joined, m["content"])}
            if isinstance(m.get("content"), str) and pattern.search(m["content"]) else m
            for m in messages]
