"""Where a message's lines may break inside a word. Qt lays out a word wider than its line
again for each line it fills (WrapAtWordBoundaryOrAnywhere): a 100,000-character word took 0.5 s
on the GUI thread, one of a million 44 s, and a shorter one with many formats (`*a*a*a…`) more.
Wrapping anywhere lays it out once. A document is switched only when its text holds such a
word, and before the text goes in: a shown view lays its text out while it is inserted.
"""

from __future__ import annotations

from PySide6.QtGui import QTextDocument, QTextOption

# Characters with no whitespace between. Past it a message wraps anywhere; below it a word costs
# at most ~2 ms to lay out, even formatted letter by letter, ~0.3 s for a 300,000-character reply
# made of such words. Real words, paths and URLs are far shorter; a base64 blob or minified
# code longer is wrapped anywhere by Qt already.
LONGEST_WORD = 2_000
# Markdown takes whitespace out: a link's target (`[aaaa](<x y>)`) and a code span's padding
# vanish from what is shown, so a line of them is one long word on screen. A Markdown line
# longer than this wraps anywhere too (paragraphs a model writes are a few thousand characters).
LONGEST_MARKDOWN_LINE = 20_000


def has_long_word(text: str) -> bool:
    return any(len(word) > LONGEST_WORD for word in text.split())


def fit_wrapping(doc: QTextDocument, text: str, *, markdown: bool) -> None:
    """Before `doc` is given `text` whole: wrap anywhere where it holds a long word, else
    between words."""
    long_line = markdown and any(len(line) > LONGEST_MARKDOWN_LINE for line in text.split("\n"))
    _set_wrap_anywhere(doc, long_line or has_long_word(text))


def wrap_anywhere_if_long(doc: QTextDocument, text: str, offset: int) -> None:
    """Before text[offset:] is appended to `doc` (a streaming reply's tail, a user's message):
    wrap anywhere once a word grows too long. The word being written may have begun before
    `offset`; it is no longer than LONGEST_WORD there, or an earlier call found it."""
    if has_long_word(text[max(0, offset - LONGEST_WORD):]):
        _set_wrap_anywhere(doc, True)


def _set_wrap_anywhere(doc: QTextDocument, anywhere: bool) -> None:
    mode = QTextOption.WrapAnywhere if anywhere else QTextOption.WrapAtWordBoundaryOrAnywhere
    option = doc.defaultTextOption()
    if option.wrapMode() != mode:  # a change lays the whole document out again
        option.setWrapMode(mode)
        doc.setDefaultTextOption(option)
