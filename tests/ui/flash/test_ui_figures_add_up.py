"""A reply's figures add up for a reader (issue 75, point 7): the footer counts what was copied
in the unit of the accepted count (tokens, of the accepted ones), says a file once, and a
reopened conversation names the attached file a run was copied from as the live reply did."""

from __future__ import annotations

from draftlight.store.attachments import Attachment, with_attachments
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import files_read, send_and_wait

CODE = "def total(items):\n    return sum(i.price for i in items)\n"
REPORT = "# Garden\n\nThe tomatoes ripened early this year.\n"


def edit_script(factory):
    """Three tokens drafted by the Predicted Output (the file being edited), two copied from
    the same file's text in the message, three written by the target."""
    def script(_mode):
        sent = factory.calls[-1][0][-1]["content"]
        at = sent.index("return sum")
        predicted = lambda s, e: {"kind": "prediction", "start": s, "end": e}  # noqa: E731
        copied = lambda s, e: {"kind": "message", "message": 0,  # noqa: E731
                               "start": at + s, "end": at + e}
        yield ("def", "draft", 0, predicted(0, 3))
        yield (" total", "draft", 0, predicted(3, 9))
        yield ("(items", "target", 0)
        yield ("):\n", "draft", 1, predicted(15, 18))
        yield ("    ", "target", 1)
        yield ("return", "draft", 2, copied(0, 6))
        yield (" sum", "draft", 2, copied(6, 10))
        yield (" of prices\n", "target", 2)
    return script


def test_an_edits_footer_counts_the_files_tokens_once_in_the_accepted_counts_unit(
        qtbot, open_window, tmp_path):
    factory = ScriptedFactory()
    factory.script = edit_script(factory)
    window = open_window(factory)
    code = tmp_path / "inventory.py"
    code.write_text(CODE)
    window.attachments.add_paths([str(code)])
    files_read(qtbot, window)
    window.attachments.chips[0].edit.click()
    view = send_and_wait(qtbot, window, "Add up the prices.")
    stats = view.figures.stats
    assert (stats.accepted, stats.drafted, stats.prediction_accepted) == (5, 5, 3)
    tips = [view.run_origins.tip(i) for i in range(len(view.runs))]
    assert all("inventory.py" in tip for tip in tips), tips  # every run says the file
    # One count for the file, of the accepted tokens: what hovering the runs adds up to.
    assert sum(run[2] for run in view.runs) == 5
    line = view.footer.text()
    assert "accepted 5 of 5 drafted tokens (100%), 5 of them copied from inventory.py" in line
    assert line.count("inventory.py") == 1 and "% of this reply" not in line
    view.grab().save("/tmp/fig-edit-footer.png")


def test_a_reopened_reply_names_the_attached_file_it_copied_from(qtbot, open_window, tmp_path):
    factory = ScriptedFactory()

    def script(_mode):
        sent = factory.calls[-1][0][-1]["content"]
        at = sent.index("The tomatoes")
        yield ("Yes:", "target", 0)
        yield (" The tomatoes", "draft", 1, {"kind": "message", "message": 0, "start": at,
                                             "end": at + 12})
        yield (" ripened", "draft", 1, {"kind": "message", "message": 0, "start": at + 12,
                                        "end": at + 20})
        yield (".", "target", 1)

    factory.script = script
    window = open_window(factory)
    report = tmp_path / "garden-report.md"
    report.write_text(REPORT)
    window.attachments.add_paths([str(report)])
    files_read(qtbot, window)
    live = send_and_wait(qtbot, window, "What ripened?")
    said = "accepted 2 of 2 drafted tokens (100%), 2 of them copied from garden-report.md"
    assert said in live.footer.text()
    tip = live.run_origins.tip(0)
    assert tip.startswith("copied from garden-report.md, line 3 (attached to your message 1)")
    conversation = window.session.conversation_id
    window.session.writes.flush()
    window.new_conversation()
    window.session.open_conversation(conversation)
    reopened = window.chat.messages[-1]
    assert reopened.footer.text() == live.footer.text()
    assert reopened.run_origins.tip(0) == tip


def test_a_reply_built_when_scrolled_back_to_names_the_attached_file_too(qtbot, open_window):
    """A long conversation builds its earlier messages a page at a time: a reply built so is
    placed after its footer was first made, and names the file as one opened at once does."""
    window = open_window(ScriptedFactory())
    history = window.history
    conversation = history.create_conversation("garden")
    question = with_attachments("What ripened?",
                                [Attachment("garden-report.md", REPORT, "utf-8", "0")])
    at = question.index("The tomatoes")
    history.add_message(conversation, "user", question)
    origin = {"kind": "message", "message": 0, "role": "user", "at": 0, "start": at,
              "end": at + 20}
    stats = {"new_tokens": 4, "target_passes": 2, "drafted": 2, "accepted": 2, "mode": "ngram",
             "origins": [origin]}
    history.add_message(conversation, "assistant", "Yes: The tomatoes ripened.",
                        runs=[[4, 25, 2]], stats=stats)
    for i in range(30):  # pages of later messages: the first pair is not built on opening
        history.add_message(conversation, "user", f"Question {i}?")
        history.add_message(conversation, "assistant", f"Answer {i}. " + "Some words. " * 40)
    window.session.open_conversation(conversation)
    chat = window.chat
    assert chat.earlier, "the first reply should wait to be scrolled to"
    chat.show_earlier(down_to=0, hold=False)
    first_reply = chat.messages[1]
    assert first_reply.text == "Yes: The tomatoes ripened."
    assert "2 of them copied from garden-report.md" in first_reply.footer.text()
