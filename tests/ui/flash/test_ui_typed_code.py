"""Code in a user's message is shown monospaced (issue 75, point 8d): a fenced block, fences and
all, and code pasted without fences, told by its look (typed_code.py); prose stays as it is,
and the message stays plain text position for position (a reply's copied run is found in it by
position). Scripted engine."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase

from draftlight.ui.flash.run_origins import source_spans
from draftlight.ui.flash.typed_code import code_lines
from tests.support.window import send_and_wait

MESSAGE = ("Why does this fail?\n"
           "def first(items):\n"
           "    return items[0]\n"
           "\n"
           "print(first([]))\n"
           "It says:\n"
           "```\n"
           "IndexError: list index out of range\n"
           "```\n"
           "Thanks!")


def test_fenced_and_pasted_code_lines_are_told_from_prose():
    assert code_lines(MESSAGE) == [False, True, True, True, True, False, True, True, True, False]
    assert code_lines("```\nnot closed\nstill code") == [True, True, True]


@pytest.mark.parametrize("prose", [
    "Dear all,\n  I hope this finds you well.\n  Best wishes.",  # an indented letter
    "Here is my list:\n  - apples\n  - pears",  # an indented list
    "Here is my code:\nnothing pasted after all",
    "one line that ends like code;",  # one line is not a pasted block
    "word:\nanother: line",  # no line indented
])
def test_prose_is_not_taken_for_code(prose):
    assert not any(code_lines(prose))


def test_code_in_a_users_message_is_monospaced_and_keeps_its_positions(qtbot, open_window):
    window = open_window()
    window.resize(800, 600)
    send_and_wait(qtbot, window, MESSAGE)
    view = next(v for v in window.chat.messages if v.role == "user")
    doc = view.document
    assert doc.toPlainText() == MESSAGE  # position for position, fences and all
    mono = QFontDatabase.systemFont(QFontDatabase.FixedFont).family()
    block, styled = doc.begin(), []
    while block.isValid():
        families = [(block.begin().fragment().charFormat().fontFamilies() or [""])[0]]
        styled.append(block.blockFormat().background().style() != Qt.NoBrush and
                      (not block.text() or families == [mono]))
        block = block.next()
    assert styled == code_lines(MESSAGE)
    start = MESSAGE.index("return items[0]")
    assert source_spans(view, start, start + 15) == [(start, start + 15)]
    window.grab().save("/tmp/polish-user-code-800x600.png")
