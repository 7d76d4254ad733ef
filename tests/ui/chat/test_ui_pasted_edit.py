"""Code edits without knowing the trick (issue 75, point 9): code pasted into a message, or an
attached file the message names, that the message asks to change becomes the reply's Predicted
Output (the unchanged code flashes in) and the reply offers its diff, as the Edit chip does."""

from __future__ import annotations

from draftlight.store.pasted_code import PASTED_CODE, edit_target
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait

CODE = ("def total(items):\n    result = 0\n    for item in items:\n"
        "        result += item.price\n    return result\n")
PASTED = f"Rename result to subtotal:\n\n```python\n{CODE}```"


def test_a_request_for_a_changed_version_names_what_it_changes():
    assert edit_target(PASTED) == (PASTED_CODE, CODE)
    assert edit_target(f"What does this do?\n```python\n{CODE}```") is None  # a question
    assert edit_target("Fix this:\n```\nx = 1\n```") is None  # too short to be worth it
    files = [("inventory.py", CODE), ("notes.md", "# Notes\n")]
    assert edit_target("Rename total to sum_prices in inventory.py", files) == (
        "inventory.py", CODE)
    assert edit_target("Summarise inventory.py", files) is None
    assert edit_target("Fix the bug", files) is None  # which file: neither is named
    assert edit_target("Fix the bug in inventory.pyc", files) is None


def test_pasted_code_asked_to_change_drafts_the_reply_and_offers_a_diff(qtbot, open_window):
    new = CODE.replace("result", "subtotal")
    factory = ScriptedFactory(script=[(f"Here:\n\n```python\n{new}```\n", "target", 0)])
    window = open_window(factory)
    view = send_and_wait(qtbot, window, PASTED)
    assert factory.predictions[-1] == CODE  # the pasted code is the Predicted Output
    assert view.edited_file() == PASTED_CODE
    view._menu(view.body.rect().center())
    [diff] = [a for a in view.menu.actions() if a.text().startswith("Show as a diff")]
    assert diff.text() == f"Show as a diff against {PASTED_CODE}…"
    view.menu.close()
    diff.trigger()
    shown = window.chat.diff.text.toPlainText()
    assert "-    result = 0\n+    subtotal = 0\n" in shown
    window.chat.diff.close()

    send_and_wait(qtbot, window, f"Explain this code:\n```python\n{CODE}```")
    assert factory.predictions[-1] is None  # a question about code drafts nothing from it
