"""Code shows as code while it streams (issue 75, point 8d): a fenced block whose closing fence
has not come yet is already a code block (monospaced, its fence line not shown, its "Copy code"
link above it), its draft runs lit where they are, and nothing moves when it closes. Scripted
engine, held before its last piece."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QTextCursor

from draftlight.settings import Settings
from draftlight.ui.flash import highlight
from draftlight.ui.flash.code_blocks import is_code_block
from draftlight.ui.flash.open_code import open_fence
from tests.support.scripted_engine import HeldScript, ScriptedFactory

HEAD = [("Some code, then words:\n\n", "target", 0), ("```python\n", "target", 1),
        ("def add(a, b):\n", "target", 2), ("    return", "draft", 3), (" a + b", "draft", 3),
        ("\n", "target", 3), ("\n# and", "target", 4), (" more", "draft", 5)]
LAST = ("\n```\n\nDone.", "target", 6)


def block_with(view, needle: str):
    block = view.document.begin()
    while block.isValid() and needle not in block.text():
        block = block.next()
    assert block.isValid(), (needle, view.document.toPlainText())
    return block


def monospaced(block) -> bool:
    mono = QFontDatabase.systemFont(QFontDatabase.FixedFont).family()
    it, families = block.begin(), []
    while not it.atEnd():
        families.append((it.fragment().charFormat().fontFamilies() or [""])[0])
        it += 1
    return bool(families) and all(family == mono for family in families)


def lit(view) -> list[str]:
    out = []
    for start, end, _tokens, coloured in highlight.highlighted_ranges(view.document):
        cursor = QTextCursor(view.document)
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.KeepAnchor)
        out.append(cursor.selectedText())
    return out


def top_of(view, needle: str) -> int:
    cursor = QTextCursor(view.document)
    cursor.setPosition(view.document.toPlainText().index(needle) + 1)
    return view.body.viewport().mapTo(view, view.body.cursorRect(cursor).topLeft()).y()


def test_an_open_code_block_streams_as_code_and_does_not_move_when_it_closes(qtbot,
                                                                            open_window):
    script = HeldScript(HEAD, LAST)
    window = open_window(ScriptedFactory(script), settings=Settings(flash_drafts=False))
    window.resize(800, 600)
    try:
        window.send("go")
        view = window.chat.messages[-1]
        qtbot.waitUntil(lambda: view.text.endswith(" more"), timeout=5000)
        qtbot.waitUntil(lambda: "```" not in view.document.toPlainText(), timeout=5000)
        assert view.streaming
        plain = view.document.toPlainText()
        assert "Copy code\ndef add(a, b):" in plain and "python" not in plain
        for line in ("def add(a, b):", "    return a + b", "# and more"):
            block = block_with(view, line)
            assert is_code_block(block) and monospaced(block), line
        assert not is_code_block(block_with(view, "Some code"))
        # the runs are lit where they are in the code, and found there
        assert "    return a + b" in "".join(lit(view)) and " more" in lit(view)
        run = next(i for i, (s, e, _t) in enumerate(view.runs) if "return" in view.text[s:e])
        start, end = view.run_spans(run)[0][0], view.run_spans(run)[-1][1]
        cursor = QTextCursor(view.document)
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.KeepAnchor)
        assert cursor.selectedText() == "    return a + b"
        assert view.code_blocks == ["def add(a, b):\n    return a + b\n\n# and more"]
        qtbot.wait(50)
        window.grab().save("/tmp/polish-code-streaming-800x600.png")
        before = {needle: top_of(view, needle) for needle in ("Copy code", "def add", "# and")}
        with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
            script.release()
    finally:
        script.release()
    qtbot.wait(50)
    assert not view.streaming and "Done." in view.document.toPlainText()
    after = {needle: top_of(view, needle) for needle in before}
    assert all(abs(after[n] - before[n]) <= 2 for n in before), (before, after)
    assert "return a + b" in "".join(lit(view))  # (Markdown's alignment: see markdown_align)
    window.grab().save("/tmp/polish-code-finished-800x600.png")


def test_open_fence_finds_a_fence_not_closed_once_its_line_is_whole():
    assert open_fence("text\n```py") is None  # its line is still being written
    text = "text\n```py\nx = 1\n"
    assert open_fence(text) == (5, text.index("x = 1"))
    assert open_fence(text + "```\n") is None  # closed
    assert open_fence(text + "````\n") is None  # a longer fence closes it too
    assert open_fence(text + "~~~\nmore\n") == (5, text.index("x = 1"))  # not its kind
    closed_then_open = "```\na\n```\nb\n~~~\nc"
    assert open_fence(closed_then_open) == (closed_then_open.index("~~~"),
                                            closed_then_open.index("c"))
