"""Code in a message the user typed or pasted, shown monospaced in the style of a reply's code
blocks: a fenced block (its ``` lines kept, as typed) and code pasted without fences, told by
its look. The message stays plain text, position for position (a reply's copied run is found in
it by position: run_origins.source_spans), so only its lines' formats change.

Pasted code is told cautiously, by what prose typed into a chat box hardly has: two lines or more
in a row that each look like code, one of them indented. A line looks like code when it is
indented (a tab or two spaces; not a list item, not a sentence's end) or ends as a line of code
does ({ } ( ) [ ] ;, or : after code: "def f(x):", "else:", not "Here is my code:"). Blank lines
between such lines belong to the block."""

from __future__ import annotations

import re

from PySide6.QtGui import QTextCursor, QTextDocument

from draftlight.ui.flash.code_blocks import FENCE_LINE, closes_fence, style_code_line

_INDENTED = re.compile(r"(?:\t| {2,})\S")
_LIST_ITEM = re.compile(r"\s*(?:[-*+•]|\d+[.)])\s")
_CODE_END = tuple("{}()[];")
_CODE_CHARACTERS = set("()[]{}=")
_SENTENCE_END = tuple(".!?")


def code_lines(text: str) -> list[bool]:
    """For each line of `text`, whether it is code."""
    lines = text.split("\n")
    code = _fenced(lines)
    i = 0
    while i < len(lines):
        if code[i] or not _looks_like_code(lines[i]):
            i += 1
            continue
        written, j = [], i  # the stretch's lines that are not blank
        while j < len(lines) and not code[j] and (not lines[j].strip()
                                                  or _looks_like_code(lines[j])):
            if lines[j].strip():
                written.append(j)
            j += 1
        if len(written) >= 2 and any(_INDENTED.match(lines[k]) for k in written):
            for k in range(i, written[-1] + 1):
                code[k] = True
        i = written[-1] + 1
    return code


def _fenced(lines: list[str]) -> list[bool]:
    """Each line from an opening fence to its closing one (or the end), fences included."""
    code, fence = [False] * len(lines), ""
    for i, line in enumerate(lines):
        marker = FENCE_LINE.match(line)
        if fence:
            code[i] = True
            if closes_fence(line, fence):
                fence = ""
        elif marker:
            code[i], fence = True, marker.group(1)
    return code


def _looks_like_code(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    indented = _INDENTED.match(line) is not None
    if stripped.endswith(_CODE_END) or stripped[0] in "}])":
        return True
    if stripped.endswith(":"):  # a block's head, or a sentence announcing one
        return indented or len(stripped.split()) == 1 or bool(_CODE_CHARACTERS & set(stripped))
    return indented and not _LIST_ITEM.match(line) and not stripped.endswith(_SENTENCE_END)


def show_code(doc: QTextDocument, text: str) -> None:
    """Give the lines of `text` that are code the code style; `doc` holds `text` as plain
    text, a block per line."""
    flags = code_lines(text)
    if not any(flags):
        return
    batch = QTextCursor(doc)
    batch.beginEditBlock()  # laid out once
    block = doc.begin()
    for is_code in flags:
        if not block.isValid():
            break
        if is_code:
            style_code_line(block)
        block = block.next()
    batch.endEditBlock()
