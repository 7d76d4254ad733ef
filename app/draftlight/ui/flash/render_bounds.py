"""How much Markdown Qt is handed, and the message as plain text past that.

Qt's Markdown importer (md4c, then QTextDocument) is quadratic in places, on the GUI thread:
in a list's items (5,000 in one list: 1.2 s, 10,000: 6 s), a table's rows and cells (a 300 x 300
table: 45 s), lists opened inside one another (`- - - … x`, 20,000 deep: 2 s and 900 MB; 1,000
lines 31 deep: 4 s and 1.8 GB), and raw HTML (20,000 nested `<div>`: 21 s). Before a message
reaches it, one linear pass (`markdown_refusal`) measures what drives those costs; past any
bound the message is shown as plain text under a one-line note saying why, as a browser stops
at its own limits rather than hang. Raw HTML is never parsed at all (MARKDOWN_FEATURES): a
reply or an imported message is shown its tags as text.

Within the bounds a reply renders in about a second at most on a slow core (Markdown of
200,000 characters: 0.3 s to parse, 0.6 s to lay out). Counting errs towards plain text: what
it is unsure of (a code block inside a list, a line after a table) counts.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat

from draftlight.ui.flash import highlight
from draftlight.ui.flash.palette import DEFAULT, Scheme

# GitHub's dialect without its raw HTML: Qt would parse a reply's tags with its HTML importer
# (quadratic in nesting, and free to set any size, colour or table a model writes). A tag is
# shown as the text it is.
MARKDOWN_FEATURES = QTextDocument.MarkdownFeature(
    QTextDocument.MarkdownDialectGitHub.value | QTextDocument.MarkdownNoHTML.value)

# A reply longer than this is shown as plain text: ~75,000 tokens, longer than any reply a local
# model writes; beyond it parsing and laying out Markdown passes a second.
MAX_MARKDOWN_CHARS = 300_000
# Lines: each is a block or more, ~30 µs apiece to import and lay out (100,000 paragraphs of one
# letter took 3 s); a long code reply has a few thousand.
MAX_LINES = 20_000
# Lists and quotes opened on one line (`- - > 1. x`): real replies nest 3 or 4 deep; 32 is deeper
# than any outline and costs nothing. (Nesting by indentation costs its square in characters,
# so the size bound holds it.)
MAX_NESTING = 32
# List items in all: one list of 2,000 parses in 0.16 s; the cost grows with the square.
MAX_LIST_ITEMS = 2_000
# Table cells in all (header rows included): 2,500 lay out in ~0.5 s, 250 rows of 10.
MAX_TABLE_CELLS = 2_500

# A list or quote marker and the whitespace before it: `>`, `-`/`+`/`*` or `1.`/`1)` before
# whitespace (or the line's end).
_MARKER = re.compile(r"[ \t]*(?:(>)|[-+*](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$))")
# A fence that opens a code block wherever it is: at the line's start (indented, it may belong
# to a list item, which can end before the fence does, so its lines are counted).
_FENCE_OPEN = re.compile(r"(`{3,})[^`]*$|(~{3,})")
_FENCE_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*$")
_DELIMITER_ROW = re.compile(r"[|:\- \t]*$")  # a table's |---|:--:| row, once it has | and -
_DASHES = re.compile(r"-+")


def markdown_refusal(raw: str) -> str:
    """Why `raw` is shown as plain text rather than handed to Qt's Markdown importer, in words
    ("" when it may be): the first bound it passes. Linear in `raw`."""
    if len(raw) > MAX_MARKDOWN_CHARS:
        return f"it is {len(raw):,} characters long, more than {MAX_MARKDOWN_CHARS:,}"
    lines = raw.split("\n")
    if len(lines) > MAX_LINES:
        return f"it has {len(lines):,} lines, more than {MAX_LINES:,}"
    items = cells = columns = 0
    fence = ""  # the open fence's marker, "" outside one
    for line in lines:
        if fence:
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                fence = ""
            continue
        if not columns and (opened := _FENCE_OPEN.match(line)):
            fence = opened.group(1) or opened.group(2)
            continue
        depth, at = 0, 0
        rule = _rule_start(line)
        while (marker := _MARKER.match(line, at)) and marker.end() <= rule:
            depth, at = depth + 1, marker.end()
            items += marker.group(1) is None
        if depth > MAX_NESTING:
            return f"its lists or quotes nest more than {MAX_NESTING} deep"
        if items > MAX_LIST_ITEMS:
            return f"it has more than {MAX_LIST_ITEMS:,} list items"
        # A table goes on to the next blank line (Qt's ends sooner, at a list or quote).
        rest = line[at:]
        if columns:
            columns = 0 if not line.strip() else columns
            cells += columns
        elif "|" in rest and "-" in rest and _DELIMITER_ROW.match(rest):
            columns = len(_DASHES.findall(rest))
            cells += 2 * columns  # the header row and this one
        if cells > MAX_TABLE_CELLS:
            return f"its tables have more than {MAX_TABLE_CELLS:,} cells"
    return ""


def _rule_start(line: str) -> int:
    """Where a thematic break (`- - -`, `***`) that ends `line` begins, len(line) if none: its
    dashes or stars are a rule, not list items."""
    body = line.rstrip()
    if not body or body[-1] not in "-*_":
        return len(line)
    start = len(body.rstrip(body[-1] + " \t"))
    return start if body.count(body[-1], start) >= 3 else len(line)


def render_plain(doc: QTextDocument, raw: str, why: str, runs: list[list[int]], visible: bool,
                 scheme: Scheme = DEFAULT, line_break: str = "\n") -> list[tuple[int, int, int]]:
    """Replace the document by a small note saying `why`, then `raw` as plain text with its runs
    highlighted (as a streaming tail is: highlight.append_plain). Returns (document start, end,
    run index) of each run, as markdown_align.rendered_run_spans does for Markdown."""
    doc.clear()
    cursor = QTextCursor(doc)
    note = QTextCharFormat()
    note.setFontItalic(True)
    note.setProperty(QTextFormat.FontSizeAdjustment, -1)  # "small"
    cursor.insertText(f"Shown as plain text: {why}.", note)
    cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
    start = cursor.position()
    highlight.append_plain(doc, raw, 0, runs, visible, scheme, line_break)
    return _plain_spans(raw, runs, start)


def _plain_spans(raw: str, runs: list[list[int]], start: int) -> list[tuple[int, int, int]]:
    """Where each run of `raw`, inserted as it is at document position `start`, lies: one pass
    over the runs (positions count UTF-16 code units)."""
    spans: list[tuple[int, int, int]] = []
    done, position = 0, start  # raw[:done] ends at document `position`
    for index, (run_start, run_end, _tokens) in enumerate(runs):
        run_start = min(max(run_start, done), len(raw))
        run_end = min(max(run_end, run_start), len(raw))
        position += highlight.utf16_len(raw[done:run_start])
        end = position + highlight.utf16_len(raw[run_start:run_end])
        if end > position:
            spans.append((position, end, index))
        done, position = run_end, end
    return spans
