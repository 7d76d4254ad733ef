"""A reply to Edit, shown as a diff against the file it changes (issue 39, part 6): the file is
the one attached with Edit on (its text is in the question, store.attachments), the new version
the reply's first code block (else the whole reply). Copy puts the new version on the
clipboard; Save as… writes it to a file of the user's choosing (never over the original
without asking, as the file dialog asks)."""

from __future__ import annotations

import difflib
import re

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QLabel, QPlainTextEdit,
                               QPushButton, QVBoxLayout, QWidget)

from draftlight.ui.widgets.screen_fit import fit_to_screen

_FENCE = re.compile(r"^(`{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)


def new_version(reply: str) -> str:
    """The reply's first fenced code block, else the reply itself."""
    match = _FENCE.search(reply)
    return match.group(2) if match else reply


def unified_diff(name: str, old: str, new: str) -> str:
    """The changed lines, compared without their ends: a last line that only gains or loses
    its newline is the same line (newline_note says so instead)."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(),
                                 f"{name} (attached)", f"{name} (the reply)", lineterm="")
    return "".join(line + "\n" for line in lines)


def newline_note(name: str, old: str, new: str) -> str:
    """Git's "No newline at end of file", for the side that has none where the other has one
    ("" where they agree): a note, not a changed line."""
    if not old or not new or old.endswith("\n") == new.endswith("\n"):
        return ""
    side = f"{name} (attached)" if new.endswith("\n") else "the reply's version"
    return f"No newline at end of {side}"


class DiffDialog(QDialog):
    def __init__(self, name: str, old: str, reply: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{name}: the reply as a change")
        self.name, self.new = name, new_version(reply)
        diff = unified_diff(name, old, self.new)
        note = newline_note(name, old, self.new)
        shown = diff or ("The reply leaves the file's lines as they were.\n" if note else
                         "The reply leaves the file as it was.")
        self.text = QPlainTextEdit(shown + (f"\\ {note}\n" if note else ""))
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        added = sum(1 for line in diff.splitlines() if line.startswith("+")
                    and not line.startswith("+++"))
        removed = sum(1 for line in diff.splitlines() if line.startswith("-")
                      and not line.startswith("---"))
        self.summary = QLabel(f"{added} line{'s' if added != 1 else ''} added, {removed} "
                              f"removed (from the reply's first code block)"
                              + (f"; {note[0].lower()}{note[1:]}" if note else ""))
        self.summary.setWordWrap(True)  # "Saved to" a long path: wrapped, not a wider dialog
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        self.copy_button = QPushButton("Copy new version")
        self.save_button = QPushButton("Save as…")
        buttons.addButton(self.copy_button, QDialogButtonBox.ActionRole)
        buttons.addButton(self.save_button, QDialogButtonBox.ActionRole)
        self.copy_button.clicked.connect(
            lambda: QGuiApplication.clipboard().setText(self.new))
        self.save_button.clicked.connect(self.save_as)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        fit_to_screen(self, 760, 560)

    def save_as(self) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the new version", self.name)
        if not path:
            return None
        try:
            with open(path, "w", encoding="utf-8") as out:
                out.write(self.new)
        except OSError as exc:
            self.summary.setText(f"Not saved: {exc.strerror or exc}")
            return None
        self.summary.setText(f"Saved to {path}")
        return path
