"""Versions of a conversation in the window (issue 40): a question edited, a reply regenerated.
Each makes a sibling in the history (store/history.py keeps the tree); the chat shows one branch,
with ‹ n/m › on each message that has other versions, and the history remembers which.

An edited question is sent as a new sibling of the first version, after the message before it,
and its answer is drafted from the first version's answer (a Predicted Output: the model never
sees it), as Regenerate's is. The files attached to the first version stay attached.
"""

from __future__ import annotations

from draftlight.store.history import HistoryError
from draftlight.modes import OFF, Mode


def refresh(session) -> None:
    """Each message's ‹ n/m ›, from the history (messages not saved yet have one version)."""
    for view in session.chat.messages:
        row = view.message_id
        ids = [None]
        if row is not None and row.id is not None:
            try:
                ids = session.history.siblings(row.id)
            except HistoryError:
                ids = [row.id]
        view.branches.set_versions(ids.index(row.id) if row and row.id in ids else 0, len(ids))


def version_label(session, view) -> str:
    """"your earlier answer (version 2)": a reply as the answer that drafts its next version."""
    row = view.message_id
    try:
        ids = session.history.siblings(row.id) if row is not None and row.id is not None else []
    except HistoryError:
        ids = []
    return (f"your earlier answer (version {ids.index(row.id) + 1})" if row and row.id in ids
            else "your earlier answer")


def saved_id(view) -> int | None:
    """The history id of a message shown (None: not written yet)."""
    return view.message_id.id if view is not None and view.message_id is not None else None


def show_source(session, message_id: int, start: int, end: int, tokens: int) -> bool:
    """Show an earlier version's answer (the version a run was copied from: its origin's
    message_id) in its branch, with text[start:end] marked in the run's colour; False when
    it is not found (deleted) or a reply is being written."""
    if session.streaming or session.conversation_id is None:
        return False
    open_at(session, session.conversation_id, message_id)
    view = next((v for v in session.chat.messages if saved_id(v) == message_id), None)
    if view is None:
        return False
    session.chat.mark_copy(view, start, end, tokens)
    return True


def switch(session, view, step: int) -> bool:
    """Show the version `step` (-1, +1) away from `view`'s; False when there is none or a reply
    is being written."""
    row = view.message_id
    if session.streaming or row is None or row.id is None or session.conversation is None:
        return False
    try:
        ids = session.history.siblings(row.id)
        at = ids.index(row.id) + step
        if not 0 <= at < len(ids):
            return False
        session.writes.flush()
        session.history.show_branch(ids[at])
    except (HistoryError, ValueError) as exc:
        session.error.emit(str(exc))
        return False
    session.open_conversation(session.conversation_id)
    return True


def edit(session, view, text: str, mode: Mode) -> bool:
    """Send `text` as a new version of user message `view` (its attached files kept): what
    followed it leaves the screen (kept in the history), the new question is answered."""
    chat = session.chat
    if session.streaming or view not in chat.messages or view.role != "user":
        return False
    at = chat.messages.index(view)
    after = chat.messages[at + 1] if at + 1 < len(chat.messages) else None
    earlier = after.text if after is not None and after.role == "assistant" and \
        after.text.strip() else None
    label = version_label(session, after) if earlier else None
    before = chat.earlier[-1] if at == 0 and chat.earlier else (
        chat.messages[at - 1] if at > 0 else None)
    parent = before.message_id if before is not None else None
    question = view.text[:view.own_start] + text  # the files attached to the first version
    for old in chat.messages[at:]:
        chat.remove_message(old)
    new = chat.add_message("user", question)
    if session.conversation is not None:
        new.message_id = session.save(session.writes.add_message, session.conversation, "user",
                                       question, parent=parent)
    session.start_reply(mode, prediction=earlier if mode != OFF else None,
                         prediction_from=label and label.replace(
                             "your earlier answer", "the answer to your earlier question"),
                         prediction_id=saved_id(after) if earlier else None)
    refresh(session)
    return True


def open_at(session, conversation_id: int, message_id: int) -> None:
    """Open a conversation at one of its messages (a search hit), in the branch that holds it,
    with that message in view."""
    if session.streaming:
        return
    try:
        if not session.history.read_only:
            session.writes.flush()
            session.history.show_branch(message_id)
    except HistoryError as exc:
        session.error.emit(str(exc))
    session.open_conversation(conversation_id)
    view = session.chat.view_of(message_id)  # built if it is among the earlier messages
    if view is not None:
        session.chat.scroll_to(view)
