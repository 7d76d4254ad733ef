"""A rendered reply's code blocks: each gets a monospaced font (wrapped: the view never scrolls
sideways), a tinted background and a "Copy code" link above it, whose href names the block
(CODE_LINK_SCHEME:i) and whose characters carry CODE_BLOCK_INDEX, so the alignment to the raw
text (markdown_align.py) can leave them out."""

from __future__ import annotations

import re

from PySide6.QtGui import (QColor, QFont, QFontDatabase, QTextBlockFormat, QTextCharFormat,
                           QTextCursor, QTextDocument, QTextFormat)

CODE_BLOCK_INDEX = QTextFormat.UserProperty + 2  # int, on copy-link characters
CODE_LINK_SCHEME = "copy-code"
FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})")  # a line opening or closing fenced code


def closes_fence(line: str, fence: str) -> bool:
    """Whether `line` closes the block `fence` (its opening ``` or ~~~) opened: a fence of
    its kind, as long or longer, with nothing after it."""
    marker = FENCE_LINE.match(line)
    return (marker is not None and marker.group(1)[0] == fence[0]
            and len(marker.group(1)) >= len(fence) and not line[marker.end():].strip())


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
    texts = ["\n".join(b.text() for b in group) for group in groups]
    # Walk backwards so inserting a link paragraph does not move the blocks still to do.
    for index in reversed(range(len(groups))):
        group = groups[index]
        for b in group:
            style_code_line(b)
        cursor = QTextCursor(group[0])
        # insertBlock gives its format to the block that receives the text after the cursor:
        # the code line keeps its own, and the empty block before it becomes the link line.
        cursor.insertBlock(group[0].blockFormat(), group[0].charFormat())
        cursor.movePosition(QTextCursor.PreviousBlock)
        cursor.setBlockFormat(QTextBlockFormat())
        cursor.insertText("Copy code", copy_link_format(index, link_colour))
    return texts


def style_code_line(block) -> None:
    """One line of code: tinted, wrapped (the view never scrolls sideways), monospaced."""
    cursor = QTextCursor(block)
    block_format = block.blockFormat()
    block_format.setBackground(QColor(127, 127, 127, 30))
    block_format.setNonBreakableLines(False)
    cursor.setBlockFormat(block_format)
    cursor.movePosition(QTextCursor.EndOfBlock, QTextCursor.KeepAnchor)
    cursor.mergeCharFormat(code_char_format())


def code_char_format() -> QTextCharFormat:
    """The monospaced font, and nothing else (merged over a run's highlight, it keeps it)."""
    mono = QFontDatabase.systemFont(QFontDatabase.FixedFont)
    char_format = QTextCharFormat()
    char_format.setFont(mono, QTextCharFormat.FontPropertiesInheritanceBehavior
                        .FontPropertiesSpecifiedOnly)
    char_format.setFontFamilies([mono.family()])
    char_format.setFontFixedPitch(True)
    return char_format


def copy_link_format(index: int, link_colour: QColor) -> QTextCharFormat:
    """The "Copy code" link of code block `index` (no symbol: DejaVu has no ⧉)."""
    link = QTextCharFormat()
    link.setAnchor(True)
    link.setAnchorHref(f"{CODE_LINK_SCHEME}:{index}")
    link.setForeground(link_colour)
    link.setFontPointSize(max(QFont().pointSizeF() - 1, 6))
    link.setProperty(CODE_BLOCK_INDEX, index)
    return link
