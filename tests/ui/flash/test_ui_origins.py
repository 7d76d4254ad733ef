"""Where each accepted run came from (issue 28), in the window, on a scripted engine that gives
its draft pieces origins: hover text on the run and its strip cell, a click that scrolls to the
source and marks it in the run's colour, the footer's share, and old replies without origins."""

from __future__ import annotations

import dataclasses
from collections import Counter

from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPalette, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from draftlight.engine.step.origins import Origin
from draftlight.settings import Settings
from draftlight.ui.flash.driver import DURATION, MARK_HOLD, resting_colour
from draftlight.ui.flash.reply_builder import ReplyBuilder
from draftlight.ui.flash.run_origin import RunOrigin
from tests.support.pixels import FakeClock, distance
from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401
from tests.support.origin_engine import OriginFactory, visible
from tests.support.window import run_point, send_and_wait
from tests.support.waiting import wait_until, window_state
from draftlight.modes import NGRAM

QUESTION = "The quick brown fox jumps over the lazy dog"
SYSTEM = "Answer briefly and kindly."


def script(messages, tail: str = "") -> list[tuple[str, str, int, dict | None]]:
    """"Sure:" (target), " quick brown fox" copied from the last message (3 tokens), "!",
    " so it" guessed by a draft model (2 tokens), "." and an optional long target tail."""
    last = len(messages) - 1
    copy = lambda s, e: {"kind": "message", "message": last, "start": s, "end": e}  # noqa: E731
    model = lambda p: {"kind": "model", "name": "SmolLM2-135M", "p": p}  # noqa: E731
    out = [("Sure:", "target", 0, None), (" quick", "draft", 1, copy(3, 9)),
           (" brown", "draft", 1, copy(9, 15)), (" fox", "draft", 1, copy(15, 19)),
           ("!", "target", 1, None), (" so", "draft", 2, model(0.93)),
           (" it", "draft", 2, model(0.88)), (".", "target", 2, None)]
    return out + ([(tail, "target", 3, None)] if tail else [])


def hover_text(qtbot, widget, point: QPoint) -> str:
    """What the tooltip says when the pointer rests at `point` (Qt's ToolTip event, sent
    directly as in test_ui_strip)."""
    QToolTip.hideText()
    QApplication.sendEvent(widget, QHelpEvent(QEvent.ToolTip, point, widget.mapToGlobal(point)))
    qtbot.waitUntil(QToolTip.isVisible, timeout=2000)
    return QToolTip.text()


def test_hovering_a_copied_run_or_its_cell_tells_the_message_and_its_context(qtbot,
                                                                                open_window):
    window = open_window(OriginFactory(script))
    reply = send_and_wait(qtbot, window, QUESTION)
    assert reply.runs == [[5, 21, 3], [22, 28, 2]]
    expected = f"copied from your message 1: '{QUESTION}'"
    assert hover_text(qtbot, reply.body.viewport(), run_point(reply, 0)) == expected
    cell = reply.strip.cell_rects()[1].center().toPoint()  # the pass that accepted the run
    assert hover_text(qtbot, reply.strip, cell).endswith("\n" + expected)


def test_hovering_a_guessed_run_tells_the_draft_model_and_its_probabilities(qtbot,
                                                                             open_window):
    window = open_window(OriginFactory(script))
    reply = send_and_wait(qtbot, window, QUESTION)
    text = hover_text(qtbot, reply.body.viewport(), run_point(reply, 1))
    assert text == "guessed by SmolLM2-135M, which gave these tokens probabilities 0.93, 0.88"


def test_a_copy_from_the_system_prompt_says_so(qtbot, open_window):
    first = lambda messages: [("A", "target", 0, None), (" briefly", "draft", 1, {  # noqa: E731
        "kind": "message", "message": 0, "start": 6, "end": 14}), (".", "target", 1, None)]
    settings = dataclasses.replace(Settings(), system_prompt=SYSTEM)
    factory = OriginFactory(first)
    window = open_window(factory, settings=settings)
    reply = send_and_wait(qtbot, window, QUESTION)
    assert [m["role"] for m in factory.calls[-1][0]] == ["system", "user"]
    assert reply.run_origins.tip(0) == f"copied from the system prompt: '{SYSTEM}'"
    assert not reply.run_origins.has_source(0)  # nothing in the chat to scroll to


def test_clicking_a_copied_run_scrolls_to_its_source_and_marks_it_in_the_runs_colour(
        qtbot, open_window):
    tail = "\n\n" + "\n\n".join(f"Line {i} of a long answer." for i in range(80))
    window = open_window(OriginFactory(lambda messages: script(messages, tail)))
    window.resize(700, 500)
    clock = FakeClock()
    window.chat.flasher.clock = clock
    reply = send_and_wait(qtbot, window, QUESTION)
    question = window.chat.messages[0]
    bar = window.chat.verticalScrollBar()
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: not visible(window.chat, question), timeout=2000)
    reply_point = reply.body.viewport().mapTo(window.chat.widget(), run_point(reply, 0))
    window.chat.ensureVisible(reply_point.x(), reply_point.y(), 0, 40)
    assert not visible(window.chat, question)

    qtbot.mouseClick(reply.body.viewport(), Qt.LeftButton, pos=run_point(reply, 0))

    assert visible(window.chat, question)
    [mark] = question.body.extraSelections()
    assert (mark.cursor.selectionStart(), mark.cursor.selectionEnd()) == (3, 19)
    assert mark.cursor.selectedText() == " quick brown fox"
    base = question.palette().color(QPalette.Window).getRgb()[:3]
    run_colour = QColor(*(round(c) for c in resting_colour(base, reply.scheme.tint(3))))
    assert distance(mark.format.background().color(), run_colour) <= 1
    assert distance(_span_background(question, 3, 19), run_colour) <= 2
    assert distance(run_colour, QColor(*base)) > 10  # it shows
    # It is held a moment, then fades away like a flash.
    clock.now += MARK_HOLD / 2
    window.chat.flasher.tick()
    assert len(question.body.extraSelections()) == 1
    clock.now += MARK_HOLD + DURATION
    window.chat.flasher.tick()
    assert question.body.extraSelections() == []
    # A click on text that the target wrote does nothing.
    bar.setValue(bar.maximum())
    before = bar.value()
    cursor = QTextCursor(reply.document)
    cursor.setPosition(2)
    qtbot.mouseClick(reply.body.viewport(), Qt.LeftButton,
                     pos=reply.body.cursorRect(cursor).center())
    assert bar.value() == before and question.body.extraSelections() == []


def _span_background(view, start: int, end: int) -> QColor:
    """The most common colour behind a one-line span of a message's text."""
    cursor = QTextCursor(view.document)
    cursor.setPosition(start + 1)
    first = view.body.cursorRect(cursor)
    cursor.setPosition(end)
    last = view.body.cursorRect(cursor)
    rect = QRect(first.left(), first.top(), last.left() - first.left(), first.height())
    image = view.body.viewport().grab(rect).toImage()
    counts = Counter(image.pixel(x, y) for x in range(image.width())
                     for y in range(image.height()))
    return QColor.fromRgb(counts.most_common(1)[0][0])


def test_the_footer_tells_the_largest_share_by_origin_and_it_survives_reopening(qtbot,
                                                                                 open_window):
    window = open_window(OriginFactory(script))
    reply = send_and_wait(qtbot, window, QUESTION)
    # Of the 5 accepted tokens, 3 were copied from the question, 2 guessed.
    assert ("accepted 5 of 5 drafted tokens (100%), 3 of them copied from your messages · "
            in reply.footer.text())
    window.session.open_conversation(window.session.conversation_id)
    reopened = window.chat.messages[-1]
    assert reopened.run_origins.origins == reply.run_origins.origins
    assert reopened.run_origins.tip(0) == f"copied from your message 1: '{QUESTION}'"
    assert reopened.footer.text() == reply.footer.text()


def test_an_old_conversation_without_origins_opens_as_before(qtbot, open_window):
    window = open_window(OriginFactory(script))
    history = window.session.history
    conversation = history.create_conversation("old")
    history.add_message(conversation, "user", QUESTION)
    stats = {"new_tokens": 3, "drafted": 2, "accepted": 2, "mode": "ngram"}  # no "origins"
    history.add_message(conversation, "assistant", "Sure: quick brown.", runs=[[5, 17, 2]],
                        stats=stats)
    window.session.open_conversation(conversation)
    reply = window.chat.messages[-1]
    assert reply.runs == [[5, 17, 2]] and reply.run_origins.origins == [None]
    assert reply.run_origins.tip(0) == ""
    assert "accepted 2 of 2 drafted tokens (100%) · " in reply.footer.text()  # no origins
    cell = reply.strip.cell_rects()[1].center().toPoint()
    assert "from" not in hover_text(qtbot, reply.strip, cell).split("\n")[-1]
    qtbot.mouseClick(reply.body.viewport(), Qt.LeftButton, pos=run_point(reply, 0))
    assert window.chat.messages[0].body.extraSelections() == []


# --- the reply model (no Qt) ------------------------------------------------------------------

def test_a_runs_origin_merges_its_tokens():
    builder = ReplyBuilder()
    record = lambda s, e, m=1: {"kind": "message", "message": m, "start": s, "end": e}  # noqa: E731
    copy = lambda s, e, m=1: Origin("message", message=m, start=s, end=e)  # noqa: E731
    builder.add("a", "target", 0)
    builder.add(" b", "draft", 1, copy(4, 6))
    builder.add(" c", "draft", 1, copy(6, 8))  # contiguous: the span grows
    builder.add("!", "target", 1)
    builder.add(" d", "draft", 2, copy(4, 6))
    builder.add(" e", "draft", 2, copy(20, 22))  # elsewhere: the first token's span
    builder.add(" f", "draft", 2, copy(22, 24))
    builder.add("!", "target", 2)
    builder.add(" g", "draft", 3, copy(0, 2, m=0))
    builder.add(" h", "draft", 3, Origin("reply", start=2, end=4))  # another kind
    builder.add("!", "target", 3)
    builder.add(" i", "draft", 4, Origin("model", name="X", text=" i"))
    builder.add(" j", "draft", 4, Origin("model", name="X", text=" j"))
    builder.add(" k", "draft", 5)  # unknown
    builder.add(" l", "draft", 6, Origin("model", name="X", p=0.5))
    builder.add(" m", "draft", 6, Origin("model", name="X", p=0.25))
    stored = [o.record() if o else None for o in builder.origins]
    assert stored == [record(4, 8), record(4, 6), record(0, 2, m=0),
                      {"kind": "model", "name": "X", "text": " i j"}, None,
                      {"kind": "model", "name": "X", "p": [0.5, 0.25]}]
    assert [RunOrigin.from_record(r) for r in stored] == builder.origins  # read back alike
    assert len(builder.origins) == len(builder.runs)


def test_a_stored_origin_of_the_wrong_shape_is_read_as_far_as_it_holds():
    assert RunOrigin.from_record({"kind": "message", "at": "3", "start": 1.5, "role": 7,
                                  "from": "a.py", "file": "yes", "p": ["x"]}) == RunOrigin(
        "message", source="a.py")
    assert RunOrigin.from_record({"at": 1}) is None and RunOrigin.from_record([1]) is None


def test_copies_from_an_earlier_reply_and_from_this_one_are_told_and_marked(qtbot,
                                                                             open_window):
    def turns(messages):
        if len(messages) == 1:
            return script(messages)
        return [("Yes", "target", 0, None),
                (" quick brown", "draft", 1, {"kind": "message", "message": 1,
                                              "start": 5, "end": 17}),
                (",", "target", 1, None),
                (" Yes", "draft", 2, {"kind": "reply", "start": 0, "end": 3}),
                (".", "target", 2, None)]

    window = open_window(OriginFactory(turns))
    clock = FakeClock()
    window.chat.flasher.clock = clock
    first = send_and_wait(qtbot, window, QUESTION)
    second = send_and_wait(qtbot, window, "Again?")
    assert second.text == "Yes quick brown, Yes."
    assert second.run_origins.tip(0) == f"copied from an earlier reply: '{first.text}'"
    assert second.run_origins.tip(1) == f"copied from this reply, earlier: '{second.text}'"
    clock.now += DURATION + 1  # the replies' own flashes are over
    window.chat.flasher.tick()
    qtbot.mouseClick(second.body.viewport(), Qt.LeftButton, pos=run_point(second, 0))
    [mark] = first.body.extraSelections()
    assert mark.cursor.selectedText() == "quick brown"  # found in the rendered Markdown
    qtbot.mouseClick(second.body.viewport(), Qt.LeftButton, pos=run_point(second, 1))
    [mark] = second.body.extraSelections()
    assert (mark.cursor.selectionStart(), mark.cursor.selectedText()) == (0, "Yes")


def test_on_the_real_model_a_repeated_phrase_is_shown_as_copied_from_the_users_message(
        qtbot, real_window, bundled_model):
    # The whole path: llama.cpp, n-gram drafts, the engine's origins, the worker, the window.
    window = real_window(dataclasses.replace(Settings(), target_path=str(bundled_model),
                                             mode=NGRAM, max_tokens=40))
    wait_until(qtbot, lambda: window.ready and not window.loading, "the models to load", 120_000,
               lambda: window_state(window))
    question = "Repeat after me: the United States of America declared independence in 1776."
    reply = send_and_wait(qtbot, window, question, timeout=120_000)
    copied = [i for i, origin in enumerate(reply.run_origins.origins)
              if origin and origin.kind == "message"]
    assert copied, (reply.runs, reply.run_origins.origins)
    assert hover_text(qtbot, reply.body.viewport(), run_point(reply, copied[0])).startswith(
        "copied from your message 1: '")
    assert "copied from your message" in reply.footer.text()


def test_the_footer_names_the_attached_file_a_copy_came_from_not_your_messages():
    """"copied from your messages" where the copy came from an attached file (issue 54): the
    file is named; counted in tokens, as the accepted count is (issue 75)."""
    from draftlight.store.attachments import Attachment, with_attachments
    from draftlight.ui.flash.origin_words import Source, summary
    report = "The harvest moon rises over the quiet fields of the valley tonight."
    message = with_attachments("Summarise it.", [Attachment("report.txt", report, "utf-8", "0")])
    start = message.index("harvest moon")
    origin = RunOrigin("message", role="user", at=0, message=0, start=start, end=start + 30)
    runs, origins = [[0, 30, 6]], [origin]
    source = Source("user", message, 1)
    assert summary(runs, origins, lambda o: source) == "6 of them copied from report.txt"
    typed = dataclasses.replace(origin, start=message.index("Summarise"),
                                end=message.index("Summarise") + 5)
    assert summary(runs, [typed], lambda o: source) == "6 of them copied from your messages"
    assert summary(runs, origins) == "6 of them copied from your messages"


def test_the_footer_tells_the_largest_share_and_the_predicted_outputs():
    """What was given to edit or retry is said even where another share is larger; a file
    being edited and the same file's text in the message are one share."""
    from draftlight.store.attachments import Attachment, with_attachments
    from draftlight.ui.flash.origin_words import Source, summary
    guessed = RunOrigin("model", name="SmolLM2-135M", p=[0.9])
    earlier = RunOrigin("prediction", start=0, end=4, source="your earlier answer (version 1)",
                        file=False)
    runs = [[0, 4, 5], [5, 9, 3], [10, 12, 1]]
    assert summary(runs, [guessed, earlier, guessed]) == (
        "6 of them guessed by the draft model, 3 copied from your earlier answer (version 1)")
    assert summary(runs, [earlier, guessed, None]) == (
        "5 of them copied from your earlier answer (version 1)")
    message = with_attachments("Fix it.", [Attachment("a.py", "x = 1\n", "utf-8", "0")])
    copied = RunOrigin("message", role="user", at=0, message=0, start=message.index("x = 1"),
                       end=message.index("x = 1") + 5)
    edited = RunOrigin("prediction", start=0, end=5, source="a.py", file=True)
    assert summary(runs, [edited, copied, guessed], lambda o: Source("user", message, 1)) == (
        "8 of them copied from a.py")
