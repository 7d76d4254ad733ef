"""A conversation taken out of the history and brought back: Markdown to read (each reply with its
statistics line; the branch shown, or every branch one after another), JSON to keep (every
branch, and every field the history has: text, the accepted draft runs as [start, end, tokens]
character spans, statistics with origins and passes, status, mode, and which message follows
which). Importing the JSON makes a new conversation with the same branches, showing the branch
that was shown; the file is checked first, and a file that is not an export changes nothing.

In the JSON each message has an `id` (its place in the file, from 1) and a `parent` (the id of
the message it follows, earlier in the file, or null); `shown` is the last message of the branch
shown. Version 1 files (before branches) are one list, each message following the one before."""

from __future__ import annotations

import json
import re
from pathlib import Path

from draftlight import bounded_json
from draftlight.store.errors import StoreError
from draftlight.store.figure_numbers import LARGEST, sane_figures
from draftlight.store.history import COMPLETE, INTERRUPTED, History

FORMAT = "draftlight-conversation"
VERSION = 2
READS = (1, 2)
MAX_IMPORT_BYTES = 64 << 20  # an export this large is not one: refused before it is read
ROLES = ("system", "user", "assistant")
STATUSES = (COMPLETE, INTERRUPTED)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a str holds no pairs: any is alone


class ExportError(StoreError):
    """A file that cannot be imported, and why."""


def conversation_json(history: History, conversation_id: int, *, branches: str = "all") -> dict:
    """`branches`: "all" (every branch) or "shown" (only the one the conversation shows)."""
    conversation = history.conversation(conversation_id)
    if conversation is None:
        raise ExportError(f"no conversation {conversation_id}")
    every, shown = history.tree(conversation_id)
    if branches == "shown":
        every = history.messages(conversation_id)
    number = {m.id: n for n, m in enumerate(every, 1)}
    return {"format": FORMAT, "version": VERSION, "title": conversation.title,
            "created": conversation.created, "updated": conversation.updated,
            "shown": number.get(shown),
            "messages": [{"id": number[m.id], "parent": number.get(m.parent_id),
                          "role": m.role, "text": m.text, "runs": m.runs, "stats": m.stats,
                          "status": m.status, "mode": m.mode} for m in every]}


def conversation_markdown(history: History, conversation_id: int,
                          footer=lambda stats: "", *, branches: str = "shown") -> str:
    """`footer(stats)`: a reply's statistics line (the window passes its footer's words).
    With `branches="all"` every branch follows the one shown, each from its first message."""
    data = conversation_json(history, conversation_id)
    parts = [f"# {data['title'] or 'Conversation'}\n"]
    paths = _branch_paths(data)
    if branches != "all":
        paths = paths[:1]
    for n, path in enumerate(paths, 1):
        if len(paths) > 1:
            parts.append(f"---\n\n# Branch {n} of {len(paths)}"
                         f"{' (shown)' if n == 1 else ''}\n")
        for message in path:
            who = {"user": "You", "assistant": "Draftlight", "system": "System"}[message["role"]]
            parts.append(f"## {who}\n\n{message['text'].rstrip()}\n")
            line = footer(message["stats"]) if message["stats"] else ""
            if line:
                parts.append("\n".join(f"> {row}" for row in line.splitlines()) + "\n")
    return "\n".join(parts)


def _branch_paths(data: dict) -> list[list[dict]]:
    """Each branch from its first message to its last: the one shown first, then the others
    in the order they were written."""
    messages = data["messages"]
    by_id = {m["id"]: m for m in messages}
    parents = {m["parent"] for m in messages}
    leaves = [m["id"] for m in messages if m["id"] not in parents]
    if data.get("shown") in leaves:
        leaves.remove(data["shown"])
        leaves.insert(0, data["shown"])
    paths = []
    for leaf in leaves:
        path, at = [], leaf
        while at is not None:
            path.append(by_id[at])
            at = by_id[at]["parent"]
        paths.append(path[::-1])
    return paths


def write_export(history: History, conversation_id: int, path: Path, footer=lambda s: "", *,
                 branches: str = "all") -> None:
    """Markdown for a .md path (the branch shown unless `branches="all"`), JSON otherwise
    (every branch); written whole or not at all."""
    path = Path(path)
    if path.suffix.lower() in (".md", ".markdown"):
        text = conversation_markdown(history, conversation_id, footer, branches=branches)
    else:
        text = json.dumps(conversation_json(history, conversation_id), ensure_ascii=False,
                          indent=1)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def import_conversation(history: History, path: Path, *, notes: list[str] | None = None) -> int:
    """A new conversation from an exported JSON file; its id. Nothing is written unless the
    whole file checks out. A reply's figure holding a number no use can hold (an Infinity, a
    4,000-digit count: figure_numbers.py) is dropped, with one line for it added to `notes`.

    Raises:
        ExportError: not an export, too large, or a message that is not well formed.
        OSError: the file cannot be read."""
    path = Path(path)
    try:
        data = bounded_json.read(path, MAX_IMPORT_BYTES)
    except bounded_json.BoundsError as exc:
        raise ExportError(f"{path.name} is not a Draftlight export ({exc})") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ExportError(f"{path.name} is not a Draftlight export (not JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportError(f"{path.name} is not a Draftlight export")
    version = data.get("version")
    if version not in READS:
        raise ExportError(f"{path.name} is an export of version {version!r}; this "
                          f"Draftlight reads versions {', '.join(map(str, READS))}")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise ExportError(f"{path.name}: 'messages' is not a list")
    checked = [_checked(m, n) for n, m in enumerate(messages, 1)]
    for number, message in enumerate(checked, 1):
        if message["stats"] is not None:
            message["stats"], dropped = sane_figures(message["stats"])
            if dropped and notes is not None:
                notes.append(f"message {number}: figures left out, their numbers out of "
                             f"bounds ({'; '.join(dropped[:3])}"
                             f"{f'; and {len(dropped) - 3} more' if len(dropped) > 3 else ''})")
    parents = _parents(messages, version)
    shown = data.get("shown") if version > 1 else len(checked)
    if checked and shown not in range(1, len(checked) + 1):
        raise ExportError(f"{path.name}: 'shown' is not one of its messages")
    title = _whole_characters(data.get("title")) if isinstance(data.get("title"), str) else ""
    conversation_id = history.create_conversation(title[:200] or path.stem)
    written: dict[int, int] = {}
    for number, (message, parent) in enumerate(zip(checked, parents), 1):
        written[number] = history.add_message(
            conversation_id, message["role"], message["text"], runs=message["runs"],
            stats=message["stats"], status=message["status"], mode=message["mode"],
            parent=written.get(parent))
    if checked:
        history.show_branch(written[shown])
    return conversation_id


def _parents(messages: list, version: int) -> list[int | None]:
    """Each message's parent as a place in the file (from 1): in version 1 the message before;
    in version 2 its `parent`, which must come earlier in the file (and ids must be 1, 2, …)."""
    if version == 1:
        return [n - 1 or None for n in range(1, len(messages) + 1)]
    parents = []
    for number, message in enumerate(messages, 1):
        parent = message.get("parent")
        if message.get("id") != number or not (
                parent is None or (isinstance(parent, int) and 1 <= parent < number)):
            raise ExportError(f"message {number}: its id must be {number} and its parent an "
                              "earlier message's id or null")
        parents.append(parent)
    return parents


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
            and 0 <= r[0] <= r[1] <= len(text) and 0 <= r[2] <= LARGEST for r in runs)):
        raise ExportError(f"{where}: runs must be [start, end, tokens] spans inside its text")
    stats = message.get("stats")
    if stats is not None and not isinstance(stats, dict):
        raise ExportError(f"{where}: stats must be an object")
    status = message.get("status") or "complete"
    if status not in STATUSES:
        raise ExportError(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
    mode = message.get("mode")
    return {"role": role, "text": _whole_characters(text), "runs": runs,
            "stats": _whole_characters(stats), "status": status,
            "mode": _whole_characters(mode) if isinstance(mode, str) else None}


def _whole_characters(value):
    """`value` with each lone surrogate (a `\\ud800` escape with no pair: JSON allows it, no
    text can hold it, and SQLite refused the message half-way through the import) in its text
    and keys as U+FFFD, one character for one, so runs still fall where they did."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_whole_characters(item) for item in value]
    if isinstance(value, dict):  # nested at most bounded_json.MAX_DEPTH deep
        return {_whole_characters(key): _whole_characters(item) for key, item in value.items()}
    return value
