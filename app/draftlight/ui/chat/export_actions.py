"""File ▸ Export conversation… and File ▸ Import conversation…: the conversation shown, as
Markdown (to read: the branch shown, or every branch) or JSON (to keep: every branch, with every
reply's runs and statistics), and an exported JSON brought back as a new conversation with its
branches (draftlight.store.export)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from draftlight.store.errors import describe_error
from draftlight.store.export import import_conversation, write_export
from draftlight.store.history import HistoryError
from draftlight.ui.flash.stats_text import stored_footer_line

MARKDOWN_SHOWN = "Markdown, the branch shown (*.md)"
MARKDOWN_ALL = "Markdown, all branches (*.md)"
JSON_ALL = "JSON, all branches, to import again (*.json)"
FILTERS = ";;".join((MARKDOWN_SHOWN, MARKDOWN_ALL, JSON_ALL))


def export_conversation(window) -> Path | None:
    """Ask where, then write the conversation the window shows; the path written, or None."""
    conversation_id = window.session.conversation_id
    if conversation_id is None:
        window.show_status("Nothing to export: this conversation has no messages yet")
        return None
    try:
        conversation = window.history.conversation(conversation_id)
    except HistoryError as exc:
        window.banner.show_message(f"Could not export: {describe_error(exc)}")
        return None
    title = (conversation.title if conversation else "") or "conversation"
    suggested = "".join(c if c.isalnum() or c in " -_" else "_" for c in title)[:60].strip()
    path, chosen = QFileDialog.getSaveFileName(window, "Export conversation",
                                               f"{suggested or 'conversation'}.md", FILTERS)
    if not path:
        return None
    path = Path(path)
    if not path.suffix:
        path = path.with_suffix(".json" if "json" in chosen.lower() else ".md")
    window.session.writes.flush()  # what is still waiting to be saved goes out with it
    try:
        write_export(window.history, conversation_id, path, footer=stored_footer_line,
                     branches="all" if "all branches" in chosen else "shown")
    except (OSError, HistoryError) as exc:
        window.banner.show_message(f"Could not export: {describe_error(exc)}")
        return None
    window.show_status(f"Exported to {path}")
    return path


def import_conversation_file(window) -> int | None:
    """Ask for an exported JSON file and open it as a new conversation; its id, or None."""
    path, _ = QFileDialog.getOpenFileName(window, "Import conversation", "",
                                          "Draftlight export (*.json);;All files (*)")
    if not path:
        return None
    notes: list[str] = []  # figures left out, each with why
    try:
        conversation_id = import_conversation(window.history, Path(path), notes=notes)
    except (OSError, HistoryError) as exc:
        window.banner.show_message(f"Not imported: {describe_error(exc)}")
        return None
    window.conversations.refresh()
    window.session.open_conversation(conversation_id)
    if notes:
        window.banner.show_message(f"Imported without some figures: {notes[0]}"
                                   + (f" (and {len(notes) - 1} more messages)"
                                      if len(notes) > 1 else ""))
    return conversation_id
