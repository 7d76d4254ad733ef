"""Markdown for a streaming reply, with the highlights of its accepted draft runs kept.

While a reply streams, its complete blocks (`complete_blocks_end`) are rendered as Markdown and
the block still being written follows as plain text (`start_tail`, highlight.append_plain).
Blocks are re-rendered only when one more is complete, so the text above the one being written
never moves, not even when the finished reply is rendered whole. Rendering uses
QTextDocument.setMarkdown, and each rendered character is aligned back to the raw character it
came from (`align`): Markdown mostly deletes characters (`**`, `#`, fences, link targets), so a
greedy in-order match, with any whitespace matching any whitespace (a reply's single newlines
become line breaks, `with_line_breaks`), finds them. Code blocks are copied verbatim, so their highlights map exactly. A
rendered character that cannot be matched is left plain. Code blocks get a monospaced font and
a "Copy code" link (`decorate_code_blocks`).
"""

from __future__ import annotations

import bisect
import html
import re

from PySide6.QtGui import (QColor, QFont, QFontDatabase, QTextBlockFormat, QTextCharFormat,
                           QTextCursor, QTextDocument, QTextFormat)

from draftlight.ui.flash.highlight import run_format
from draftlight.ui.flash.palette import DEFAULT, Scheme

CODE_BLOCK_INDEX = QTextFormat.UserProperty + 2  # int, on copy-link characters
CODE_LINK_SCHEME = "copy-code"

_WHITESPACE = re.compile(r"\s")
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


def rendered_chars(doc: QTextDocument) -> tuple[list[tuple[int, str]], set[int]]:
    """(document position, character) of every character in the document's text fragments,
    and the indices of those that open a fenced code block (their fence line is not shown)."""
    out: list[tuple[int, str]] = []
    fence_starts: set[int] = set()
    block, in_code = doc.begin(), False
    while block.isValid():
        code = is_code_block(block)
        if code and not in_code and block.blockFormat().hasProperty(QTextFormat.BlockCodeFence):
            fence_starts.add(len(out))
        in_code = code
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            position = fragment.position()
            if fragment.charFormat().hasProperty(CODE_BLOCK_INDEX):
                it += 1
                continue  # our "Copy code" links are not in the raw text
            for ch in fragment.text():
                out.append((position, ch))
                position += 2 if ord(ch) > 0xFFFF else 1
            it += 1
        block = block.next()
    return out, fence_starts


_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n", re.MULTILINE)
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def align(raw: str, rendered: list[str], fence_starts: set[int] = frozenset(),
          lookahead: int = 400) -> list[int]:
    """For each rendered character, the index in `raw` it came from, or -1.

    Greedy and in order. Before the first character of a fenced code block the fence line
    (```python) is skipped, or its letters would be taken for the code's.
    """
    out: list[int] = []
    j = 0
    for i, ch in enumerate(rendered):
        if i in fence_starts:
            fence = _FENCE.search(raw, j)
            if fence:
                j = fence.end()
        space = ch.isspace() or ch == "\u2029"
        if j < len(raw) and (_WHITESPACE.match(raw, j) if space else raw[j] == ch):
            out.append(j)  # the common case, the next raw character: what the search below
            j += 1  # finds first, with no entity before it (7x less time on a long reply)
            continue
        window_end = min(j + lookahead, len(raw))
        if space:
            match = _WHITESPACE.search(raw, j, window_end)
            k = match.start() if match else -1
        else:
            k = raw.find(ch, j, window_end)
        # An entity (&lt;, &#x1F680;) shows one character that is not in the raw text: without
        # this, "<" would be matched to a later literal "<" and everything between lost.
        entity = next((m for m in _ENTITY.finditer(raw, j, k if k >= 0 else window_end)
                       if html.unescape(m.group()) == ch), None)
        if entity:
            out.append(entity.start())
            j = entity.end()
            continue
        if k < 0:
            out.append(-1)
            continue
        out.append(k)
        j = k + 1
    return out


def rendered_run_spans(doc: QTextDocument, raw: str,
                       runs: list[list[int]]) -> list[tuple[int, int, int]]:
    """(document start, end, run index) of each stretch of rendered characters from a run."""
    if not runs:
        return []
    chars, fence_starts = rendered_chars(doc)
    sources = align(raw, [ch for _, ch in chars], fence_starts)
    starts = [run[0] for run in runs]
    spans: list[tuple[int, int, int]] = []  # (doc start, doc end, run index)
    for (position, ch), k in zip(chars, sources):
        if k < 0:
            continue
        index = bisect.bisect_right(starts, k) - 1
        if index < 0 or k >= runs[index][1]:
            continue
        size = 2 if ord(ch) > 0xFFFF else 1
        if spans and spans[-1][2] == index and spans[-1][1] == position:
            spans[-1] = (spans[-1][0], position + size, index)
        else:
            spans.append((position, position + size, index))
    return spans


def highlight_rendered(doc: QTextDocument, raw: str, runs: list[list[int]],
                       visible: bool, scheme: Scheme = DEFAULT,
                       spans: list[tuple[int, int, int]] | None = None) -> int:
    """Give rendered characters that came from a run that run's format. Returns how many."""
    if spans is None:
        spans = rendered_run_spans(doc, raw, runs)
    cursor = QTextCursor(doc)
    count = 0
    formats: dict[int, QTextCharFormat] = {}
    cursor.beginEditBlock()
    for start, end, index in spans:
        tokens = runs[index][2]
        if tokens not in formats:
            formats[tokens] = run_format(tokens, visible, scheme)
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.KeepAnchor)
        cursor.mergeCharFormat(formats[tokens])
        count += end - start
    cursor.endEditBlock()
    return count


def is_code_block(block) -> bool:
    fmt = block.blockFormat()
    return (fmt.hasProperty(QTextFormat.BlockCodeFence)
            or fmt.hasProperty(QTextFormat.BlockCodeLanguage))


def decorate_code_blocks(doc: QTextDocument, link_colour: QColor) -> list[str]:
    """Give code blocks a monospaced font, a tinted background and a "Copy code" link above.

    Returns the text of each code block; link i has href "copy-code:i".
    """
    groups: list[list] = []
    block, previous_code = doc.begin(), False
    while block.isValid():
        code = is_code_block(block)
        if code:
            if previous_code:
                groups[-1].append(block)
            else:
                groups.append([block])
        previous_code = code
        block = block.next()
    mono = QFontDatabase.systemFont(QFontDatabase.FixedFont)
    texts = ["\n".join(b.text() for b in group) for group in groups]
    # Walk backwards so inserting a link paragraph does not move the blocks still to do.
    for index in reversed(range(len(groups))):
        group = groups[index]
        for b in group:
            cursor = QTextCursor(b)
            block_format = b.blockFormat()
            block_format.setBackground(QColor(127, 127, 127, 30))
            block_format.setNonBreakableLines(False)  # wrap: the view never scrolls sideways
            cursor.setBlockFormat(block_format)
            cursor.movePosition(QTextCursor.EndOfBlock, QTextCursor.KeepAnchor)
            char_format = QTextCharFormat()
            char_format.setFont(mono, QTextCharFormat.FontPropertiesInheritanceBehavior
                                .FontPropertiesSpecifiedOnly)
            char_format.setFontFamilies([mono.family()])
            char_format.setFontFixedPitch(True)
            cursor.mergeCharFormat(char_format)
        cursor = QTextCursor(group[0])
        # insertBlock gives its format to the block that receives the text after the cursor:
        # the code line keeps its own, and the empty block before it becomes the link line.
        cursor.insertBlock(group[0].blockFormat(), group[0].charFormat())
        cursor.movePosition(QTextCursor.PreviousBlock)
        cursor.setBlockFormat(QTextBlockFormat())
        link = QTextCharFormat()
        link.setAnchor(True)
        link.setAnchorHref(f"{CODE_LINK_SCHEME}:{index}")
        link.setForeground(link_colour)
        link.setFontPointSize(max(QFont().pointSizeF() - 1, 6))
        link.setProperty(CODE_BLOCK_INDEX, index)
        cursor.insertText("Copy code", link)  # no symbol: DejaVu has no ⧉
    return texts


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
    `spans_out` when given."""
    doc.setMarkdown(with_line_breaks(raw), QTextDocument.MarkdownDialectGitHub)
    batch = QTextCursor(doc)
    batch.beginEditBlock()  # the document is laid out once, at the end
    texts = decorate_code_blocks(doc, link_colour)
    spans = rendered_run_spans(doc, raw, runs)
    highlight_rendered(doc, raw, runs, visible, scheme, spans)
    batch.endEditBlock()
    if spans_out is not None:
        spans_out[:] = spans
    return texts
