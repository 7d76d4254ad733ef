"""The diff of an Edit's reply (issue 75, point 7c): a last line that only gains or loses its
newline is not a changed line; a note says which side has none, as git says it."""

from __future__ import annotations

from draftlight.ui.chat.diff_dialog import DiffDialog, newline_note, unified_diff

OLD = 'def greet(name):\n    return "Hello, " + name'  # no newline at its end
NEW = 'def greet(name):\n    return "Hello, " + name\n'


def test_a_missing_final_newline_alone_changes_no_line(qtbot):
    assert unified_diff("greet.py", OLD, NEW) == ""
    assert newline_note("greet.py", OLD, NEW) == "No newline at end of greet.py (attached)"
    assert newline_note("greet.py", NEW, OLD) == "No newline at end of the reply's version"
    assert newline_note("greet.py", NEW, NEW) == newline_note("greet.py", OLD, OLD) == ""
    dialog = DiffDialog("greet.py", OLD, f"```python\n{NEW}```\n")
    qtbot.addWidget(dialog)
    assert dialog.summary.text().startswith("0 lines added, 0 removed")
    assert dialog.summary.text().endswith("; no newline at end of greet.py (attached)")
    assert dialog.text.toPlainText().endswith("\\ No newline at end of greet.py (attached)\n")


def test_a_changed_last_line_is_one_line_however_its_end_is_written(qtbot):
    reply = f"```python\n{NEW.replace('Hello', 'Hi')}```\n"
    dialog = DiffDialog("greet.py", OLD, reply)
    qtbot.addWidget(dialog)
    shown = dialog.text.toPlainText()
    assert '-    return "Hello, " + name\n+    return "Hi, " + name\n' in shown
    assert dialog.summary.text().startswith("1 line added, 1 removed")
    assert " def greet(name):\n" in shown  # the first line: context, not changed
