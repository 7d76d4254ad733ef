"""A conversation taken out of the history and brought back: Markdown to read (each reply with its
statistics line), JSON to keep (every field the history has: text, the accepted draft runs as
[start, end, tokens] character spans, statistics with origins and passes, status, mode).
Importing the JSON makes a new conversation with the same messages; the file is checked first,
and a file that is not an export changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from draftlight.store.errors import StoreError
from draftlight.store.history import COMPLETE, INTERRUPTED, History

FORMAT = "draftlight-conversation"
VERSION = 1
MAX_IMPORT_BYTES = 64 << 20  # an export this large is not one: refused before it is read
ROLES = ("system", "user", "assistant")
STATUSES = (COMPLETE, INTERRUPTED)


class ExportError(StoreError):
    """A file that cannot be imported, and why."""


def conversation_json(history: History, conversation_id: int) -> dict:
    conversation = history.conversation(conversation_id)
    if conversation is None:
        raise ExportError(f"no conversation {conversation_id}")
    return {"format": FORMAT, "version": VERSION, "title": conversation.title,
            "created": conversation.created, "updated": conversation.updated,
            "messages": [{"role": m.role, "text": m.text, "runs": m.runs, "stats": m.stats,
                          "status": m.status, "mode": m.mode}
                         for m in history.messages(conversation_id)]}


def conversation_markdown(history: History, conversation_id: int,
                          footer=lambda stats: "") -> str:
    """`footer(stats)`: a reply's statistics line (the window passes its footer's words)."""
    data = conversation_json(history, conversation_id)
    parts = [f"# {data['title'] or 'Conversation'}\n"]
    for message in data["messages"]:
        who = {"user": "You", "assistant": "Draftlight", "system": "System"}[message["role"]]
        parts.append(f"## {who}\n\n{message['text'].rstrip()}\n")
        line = footer(message["stats"]) if message["stats"] else ""
        if line:
            parts.append("\n".join(f"> {row}" for row in line.splitlines()) + "\n")
    return "\n".join(parts)


def write_export(history: History, conversation_id: int, path: Path, footer=lambda s: "") -> None:
    """Markdown for a .md path, JSON otherwise; written whole or not at all."""
    path = Path(path)
    if path.suffix.lower() in (".md", ".markdown"):
        text = conversation_markdown(history, conversation_id, footer)
    else:
        text = json.dumps(conversation_json(history, conversation_id), ensure_ascii=False,
                          indent=1)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def import_conversation(history: History, path: Path) -> int:
    """A new conversation from an exported JSON file; its id. Nothing is written unless the
    whole file checks out.

    Raises:
        ExportError: not an export, too large, or a message that is not well formed.
        OSError: the file cannot be read."""
    path = Path(path)
    if path.stat().st_size > MAX_IMPORT_BYTES:
        raise ExportError(f"{path.name} is over {MAX_IMPORT_BYTES >> 20} MB: not an export")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ExportError(f"{path.name} is not a Draftlight export (not JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportError(f"{path.name} is not a Draftlight export")
    if data.get("version") != VERSION:
        raise ExportError(f"{path.name} is an export of version {data.get('version')!r}; this "
                          f"Draftlight reads version {VERSION}")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise ExportError(f"{path.name}: 'messages' is not a list")
    checked = [_checked(m, n) for n, m in enumerate(messages, 1)]
    title = data.get("title") if isinstance(data.get("title"), str) else ""
    conversation_id = history.create_conversation(title[:200] or path.stem)
    for message in checked:
        history.add_message(conversation_id, message["role"], message["text"],
                            runs=message["runs"], stats=message["stats"],
                            status=message["status"], mode=message["mode"])
    return conversation_id


def _checked(message, number: int) -> dict:
    where = f"message {number}"
    if not isinstance(message, dict):
        raise ExportError(f"{where} is not an object")
    role, text = message.get("role"), message.get("text")
    if role not in ROLES or not isinstance(text, str):
        raise ExportError(f"{where}: role must be one of {', '.join(ROLES)} and text a string")
    runs = message.get("runs") or []
    if not (isinstance(runs, list) and all(
            isinstance(r, list) and len(r) == 3 and all(isinstance(x, int) for x in r)
            and 0 <= r[0] <= r[1] <= len(text) for r in runs)):
        raise ExportError(f"{where}: runs must be [start, end, tokens] spans inside its text")
    stats = message.get("stats")
    if stats is not None and not isinstance(stats, dict):
        raise ExportError(f"{where}: stats must be an object")
    status = message.get("status") or "complete"
    if status not in STATUSES:
        raise ExportError(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
    mode = message.get("mode")
    return {"role": role, "text": text, "runs": runs, "stats": stats, "status": status,
            "mode": mode if isinstance(mode, str) else None}
