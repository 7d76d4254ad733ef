"""A fenced code block still being written, in a streaming reply: where it opens (`open_fence`)
and the code block of the document its text streams into (`start_code_block`, `append_code`),
formatted as decorate_code_blocks formats a finished one, its "Copy code" link above it.

Until its closing fence comes, Markdown cannot render the block (complete_blocks_end stops before
it), and streamed as plain text it showed its ``` fence in a proportional font to the end of
the reply, then jumped into a code block. Here its fence line is left out and its lines are
code lines from the first, so closing it changes nothing on screen. Its text goes in one
character for one (a newline is a new code line, as Markdown makes it), so the runs' spans in
it are found by counting (streaming_markdown.py)."""

from __future__ import annotations

from PySide6.QtGui import (QColor, QTextBlockFormat, QTextCharFormat, QTextCursor,
                           QTextDocument)

from draftlight.ui.flash import highlight
from draftlight.ui.flash.code_blocks import (FENCE_LINE, closes_fence, code_char_format,
                                             copy_link_format, style_code_line)
from draftlight.ui.flash.palette import DEFAULT, Scheme


def open_fence(text: str, start: int = 0) -> tuple[int, int] | None:
    """(where its fence line starts, where its code starts) of a fenced block opened after
    `start` (a complete_blocks_end answer: no fence is open there) and not closed yet, once
    its fence line is whole; None where none is open."""
    fence, opened = "", None
    while (newline := text.find("\n", start)) >= 0:
        body = text[start:newline]
        marker = FENCE_LINE.match(body)
        if fence:
            if closes_fence(body, fence):
                fence, opened = "", None
        elif marker:
            fence, opened = marker.group(1), (start, newline + 1)
        start = newline + 1
    return opened


_code_line: QTextBlockFormat | None = None


def _code_line_format() -> QTextBlockFormat:
    """The block format Qt's Markdown importer gives a line of fenced code."""
    global _code_line
    if _code_line is None:
        doc = QTextDocument()
        doc.setMarkdown("```\nx\n```\n")
        _code_line = doc.begin().blockFormat()
    return _code_line


def start_code_block(doc: QTextDocument, index: int, link_colour: QColor) -> int:
    """Open code block `index` at the end of `doc`: its "Copy code" line, then an empty code
    line. Returns the position its code starts at."""
    cursor = QTextCursor(doc)
    cursor.movePosition(QTextCursor.End)
    if doc.isEmpty():
        cursor.setBlockFormat(QTextBlockFormat())
    else:
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
    cursor.insertText("Copy code", copy_link_format(index, link_colour))
    cursor.insertBlock(_code_line_format(), code_char_format())
    style_code_line(cursor.block())
    return cursor.position()


def append_code(doc: QTextDocument, text: str, offset: int, runs: list[list[int]],
                visible: bool, scheme: Scheme = DEFAULT) -> None:
    """Append text[offset:] to the code block at the end of `doc`, with its runs' highlights:
    each newline a new code line (a block in the code line's format), all of it monospaced."""
    start = doc.characterCount() - 1
    highlight.append_plain(doc, text, offset, runs, visible, scheme)
    cursor = QTextCursor(doc)
    cursor.setPosition(start)
    cursor.movePosition(QTextCursor.End, QTextCursor.KeepAnchor)
    cursor.mergeCharFormat(code_char_format())
