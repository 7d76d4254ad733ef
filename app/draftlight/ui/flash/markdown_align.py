"""Where each character Qt's Markdown rendering shows came from in the raw reply, and the
highlights of the reply's draft runs put back on the rendered text. Markdown mostly deletes
characters (`**`, `#`, fences, link targets), so a greedy in-order match (`align`), with any
whitespace matching any whitespace (a reply's single newlines become line breaks), finds them;
code blocks are copied verbatim, so their highlights map exactly, and an entity (&lt;) is matched
to the one character it shows. A rendered character that cannot be matched is left plain."""

from __future__ import annotations

import bisect
import html
import re

from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument, QTextFormat

from draftlight.ui.flash.code_blocks import CODE_BLOCK_INDEX, is_code_block
from draftlight.ui.flash.highlight import run_format
from draftlight.ui.flash.palette import DEFAULT, Scheme

_WHITESPACE = re.compile(r"\s")


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
