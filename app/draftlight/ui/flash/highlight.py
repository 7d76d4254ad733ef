"""Highlighting accepted draft runs in a QTextDocument: their character formats, and the text
streamed in with them (`append_plain`). Markdown rendering keeps them (markdown_render.py).

Every highlighted character carries RUN_TOKENS (the run's length in tokens) whether or not the
colours are shown; the background is what the "Highlights" switch turns on and off, and
`restyle` changes it in place (no re-parsing) when the switch or the colour scheme changes.
Colours come from a palette.Scheme.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat

from draftlight.ui.flash.long_words import wrap_anywhere_if_long
from draftlight.ui.flash.palette import DEFAULT, Scheme

RUN_TOKENS = QTextFormat.UserProperty + 1  # int: length in tokens of the draft run


def run_colour(run_tokens: int, scheme: Scheme = DEFAULT) -> QColor:
    return scheme.tint(run_tokens)


def run_format(run_tokens: int, visible: bool, scheme: Scheme = DEFAULT) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setProperty(RUN_TOKENS, run_tokens)
    if visible:
        fmt.setBackground(QBrush(scheme.tint(run_tokens)))
        if scheme.text_colour() is not None:
            fmt.setForeground(scheme.text_colour())
    return fmt


def restyle(doc: QTextDocument, visible: bool, scheme: Scheme = DEFAULT) -> None:
    """Give every run fragment the colours of `scheme` (or none), keeping its other formats
    (code font, links): what the Highlights switch and a scheme change do, without re-parsing."""
    edits = []
    for fragment, fmt in run_fragments(doc):
        fmt.clearBackground()
        fmt.clearForeground()
        if visible:
            fmt.setBackground(QBrush(scheme.tint(int(fmt.property(RUN_TOKENS)))))
            if scheme.text_colour() is not None:
                fmt.setForeground(scheme.text_colour())
        edits.append((fragment.position(), fragment.position() + fragment.length(), fmt))
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    for start, end, fmt in edits:
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.KeepAnchor)
        cursor.setCharFormat(fmt)
    cursor.endEditBlock()


def utf16_len(text: str) -> int:
    """QTextDocument positions count UTF-16 code units (an emoji counts 2)."""
    return len(text.encode("utf-16-le")) // 2


# --- plain text (streaming) -------------------------------------------------------------------

def append_plain(doc: QTextDocument, text: str, offset: int, runs: list[list[int]],
                 visible: bool, scheme: Scheme = DEFAULT, line_break: str = "\n") -> None:
    """Append text[offset:] at the end of `doc`, giving each part inside a run its format.
    `line_break` replaces each single newline (one character for one: positions still map),
    so a streaming reply breaks its lines as its Markdown render will (U+2028)."""
    wrap_anywhere_if_long(doc, text, offset)  # before the text goes in: it is laid out then
    cursor = QTextCursor(doc)
    cursor.movePosition(QTextCursor.End)
    plain = QTextCharFormat()
    position = offset

    def part(start: int, end: int) -> str:
        if line_break == "\n":
            return text[start:end]
        return "".join(line_break if ch == "\n" and text[i - 1:i] != "\n"
                       and text[i + 1:i + 2] != "\n" else ch
                       for i, ch in enumerate(text[start:end], start))

    cursor.beginEditBlock()  # one relayout for the whole batch, not one per insert
    for start, end, tokens in runs:
        if end <= position:
            continue
        if start > position:
            cursor.insertText(part(position, start), plain)
            position = start
        cursor.insertText(part(position, end), run_format(tokens, visible, scheme))
        position = end
    if position < len(text):
        cursor.insertText(part(position, len(text)), plain)
    cursor.endEditBlock()


def format_spans(doc: QTextDocument, spans: list[tuple[int, int]], run_tokens: int,
                 visible: bool, scheme: Scheme = DEFAULT) -> None:
    """Re-apply a grown run's format over its document spans (its colour depends on its length)."""
    cursor = QTextCursor(doc)
    fmt = run_format(run_tokens, visible, scheme)
    for start, end in spans:
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.KeepAnchor)
        cursor.mergeCharFormat(fmt)


def highlighted_ranges(doc: QTextDocument) -> list[tuple[int, int, int, bool]]:
    """(start, end, run tokens, has background) of each highlighted span: for tests and checks."""
    return [(fragment.position(), fragment.position() + fragment.length(),
             int(fmt.property(RUN_TOKENS)), fmt.background().style() != Qt.NoBrush)
            for fragment, fmt in run_fragments(doc)]


def run_fragments(doc: QTextDocument):
    """(fragment, its char format) for each fragment of an accepted run, in document order."""
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.hasProperty(RUN_TOKENS):
                yield fragment, fmt
            it += 1
        block = block.next()
