"""Markdown for a streaming reply, with the highlights of its accepted draft runs kept.

While a reply streams, its complete blocks (`complete_blocks_end`) are rendered as Markdown and
the block still being written follows as plain text (`start_tail`, highlight.append_plain).
Blocks are re-rendered only when one more is complete, so the text above the one being written
never moves, not even when the finished reply is rendered whole. Rendering uses
QTextDocument.setMarkdown with a reply's single newlines made line breaks (`with_line_breaks`);
each rendered character is then aligned back to the raw character it came from, and its run's
highlight put back (markdown_align.py); code blocks get a monospaced font and a "Copy code" link
(code_blocks.py).
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument

from draftlight.ui.flash.code_blocks import (  # noqa: F401 - read from here by the view and tests
    CODE_LINK_SCHEME, decorate_code_blocks, is_code_block)
from draftlight.ui.flash.markdown_align import (  # noqa: F401 - align: its tests' name for it
    align, highlight_rendered, rendered_run_spans)
from draftlight.ui.flash import long_words, render_bounds
from draftlight.ui.flash.palette import DEFAULT, Scheme

_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING_LINE = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")


def complete_blocks_end(text: str, start: int = 0) -> int:
    """How much of a streaming reply is whole Markdown blocks: the end of its last blank line,
    heading line or closing code fence outside an open fence. Text after it can still change
    how it renders (a fence not closed yet, a list item going on); text before it no longer can,
    so rendering it now shows it where the finished reply will have it.

    `start`, an earlier answer for the same text, lets a streaming reply be scanned from there:
    no fence is open at the end of a complete block."""
    end, fence = start, ""
    while (newline := text.find("\n", start)) >= 0:
        body, start = text[start:newline], newline + 1
        marker = _FENCE_LINE.match(body)
        if fence:
            closes = (marker is not None and marker.group(1)[0] == fence[0]
                      and len(marker.group(1)) >= len(fence) and not body[marker.end():].strip())
            if closes:
                fence, end = "", start
        elif marker:
            fence = marker.group(1)
        elif not body.strip() or _HEADING_LINE.match(body):
            end = start
    return end


_paragraph: QTextBlockFormat | None = None


def paragraph_format() -> QTextBlockFormat:
    """The block format Qt's Markdown importer gives a paragraph (its margins): plain text
    streamed in this format does not move when it is rendered as the paragraph it is."""
    global _paragraph
    if _paragraph is None:
        doc = QTextDocument()
        doc.setMarkdown("x")
        _paragraph = QTextBlockFormat()
        _paragraph.setTopMargin(doc.begin().blockFormat().topMargin())
        _paragraph.setBottomMargin(doc.begin().blockFormat().bottomMargin())
    return _paragraph


def start_tail(doc: QTextDocument) -> int:
    """Open a plain paragraph at the end of `doc` for text still streaming; its position."""
    cursor = QTextCursor(doc)
    cursor.movePosition(QTextCursor.End)
    if doc.isEmpty():
        cursor.setBlockFormat(paragraph_format())
        cursor.setBlockCharFormat(QTextCharFormat())
    else:
        cursor.insertBlock(paragraph_format(), QTextCharFormat())
    return cursor.position()


_TABLE_ROW = re.compile(r"^\s*\|")
LINE_BREAK = "\u2028"  # what a reply's single newline becomes: a line break inside its paragraph


def with_line_breaks(raw: str) -> str:
    """`raw` with each single newline inside a paragraph made a Markdown hard line break, as
    chat apps show a reply: a haiku or a list typed line by line keeps its lines, where
    CommonMark would join them into one paragraph ("soft" breaks). Newlines in fenced code, at
    blank lines, after table rows and before indented code are left as they are. The rendered
    text differs from `raw` only by line separators where `raw` has newlines (align() matches
    any whitespace with any), so highlights still map."""
    lines = raw.split("\n")
    fence = ""
    for i, line in enumerate(lines[:-1]):
        marker = _FENCE_LINE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = ""
            continue
        if marker:
            fence = marker.group(1)
            continue
        following = lines[i + 1]
        if (line.strip() and following.strip() and not _TABLE_ROW.match(line)
                and not following.startswith(("    ", "\t")) and not line.endswith("  ")):
            lines[i] = line + "  "
    return "\n".join(lines)


def render_markdown(doc: QTextDocument, raw: str, runs: list[list[int]], visible: bool,
                    link_colour: QColor, scheme: Scheme = DEFAULT,
                    spans_out: list | None = None) -> list[str]:
    """Replace the document by `raw` rendered as Markdown, highlights re-applied.
    Returns the code blocks' texts (for the copy links); the runs' document spans go into
    `spans_out` when given. Past render_bounds' limits, `raw` is shown as plain text instead,
    under a note saying why: Qt's importer would hold the window for seconds or minutes."""
    long_words.fit_wrapping(doc, raw, markdown=True)
    if why := render_bounds.markdown_refusal(raw):
        spans = render_bounds.render_plain(doc, raw, why, runs, visible, scheme, LINE_BREAK)
        if spans_out is not None:
            spans_out[:] = spans
        return []
    doc.setMarkdown(with_line_breaks(raw), render_bounds.MARKDOWN_FEATURES)
    batch = QTextCursor(doc)
    batch.beginEditBlock()  # the document is laid out once, at the end
    texts = decorate_code_blocks(doc, link_colour)
    spans = rendered_run_spans(doc, raw, runs)
    highlight_rendered(doc, raw, runs, visible, scheme, spans)
    batch.endEditBlock()
    if spans_out is not None:
        spans_out[:] = spans
    return texts
