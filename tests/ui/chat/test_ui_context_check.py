"""Honest about the context (issue 39, part 2): attached files that do not fit the context with
the message and the reply's room are never cut silently. The message is not sent; the banner
gives the numbers and a choice (a larger context this machine's memory holds, or the pages of a
PDF that fit); the typed message and its files stay."""

from __future__ import annotations

from draftlight.settings import Settings
from tests.support.documents import pdf_bytes
from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import files_read, send_and_wait, wait_ready

LINE = "The committee met on Tuesday and agreed on the budget for the coming year. "


def long_pdf(path, pages: int = 40):
    path.write_bytes(pdf_bytes([[f"Page {n}."] + [LINE] * 6 for n in range(1, pages + 1)]))
    return path


def test_a_pdf_too_long_for_the_context_sends_only_the_pages_that_fit(qtbot, open_window,
                                                                      tmp_path):
    factory = ScriptedFactory()
    window = open_window(factory, Settings(max_tokens=256))
    assert window.models.n_ctx == 4096  # the scripted model's file has no header to size it
    window.attachments.add_paths([str(long_pdf(tmp_path / "minutes.pdf"))])
    files_read(qtbot, window)
    window.composer.setPlainText("Summarise the minutes.")
    window.composer.submit()
    assert factory.calls == []  # not sent
    line = window.banner.label.text()
    assert "more than the 4,096-token context" in line and "minutes.pdf's 40 fit" in line, line
    assert window.composer.toPlainText() == "Summarise the minutes."
    assert window.banner.action_button.text().startswith("Send pages 1-")
    kept = int(window.banner.action_button.text().removeprefix("Send pages 1-"))
    with qtbot.waitSignal(window.session.reply_finished, timeout=10_000):
        window.banner.action_button.click()
    sent = factory.calls[-1][0][-1]["content"]
    assert f"--- page {kept} ---" in sent and f"--- page {kept + 1} ---" not in sent
    assert sent.endswith("Summarise the minutes.") and window.composer.toPlainText() == ""
    assert len(sent) // 4 + 256 <= 4096


def test_a_larger_context_is_offered_when_memory_holds_one(qtbot, real_window, bundled_model,
                                                           tmp_path):
    # a short reply: the test is the choice and the reload, not the writing
    window = real_window(Settings(target_path=str(bundled_model), n_ctx=1024, max_tokens=16))
    wait_ready(qtbot, window)
    window.attachments.add_paths([str(long_pdf(tmp_path / "minutes.pdf", pages=12))])
    files_read(qtbot, window)
    window.composer.setPlainText("Summarise the minutes.")
    window.composer.submit()
    assert window.chat.messages == []
    assert window.banner.action_button.text() == "Use 8,192 tokens"  # SmolLM2's trained context
    window.banner.action_button.click()
    wait_ready(qtbot, window)
    assert window.models.n_ctx == 8192 and window.settings.n_ctx == 8192
    view = send_and_wait(qtbot, window, window.composer.toPlainText(), timeout=120_000)
    assert view.text.strip()
