"""The picker's file table where it has no files (issue "The window, third round", item 3):
offline it says that Hugging Face cannot be reached and why, that the models already here are
under Installed, and Retry asks again; never an empty table with no word."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from tests.support.hub_server import FakeHub, synthetic_gguf  # noqa: E402
from tests.support.picker import TIMEOUT_MS  # noqa: E402


def notice_says(dialog, words: str) -> bool:
    files = dialog.files_panel
    return files.stack.currentWidget() is files.notice and words in files.notice.text()


def test_offline_the_file_table_says_why_and_retry_lists_the_files(
        qtbot, closed_port_url, make_dialog, clean_env):
    dialog = make_dialog(closed_port_url)
    dialog.resize(800, 600)
    dialog.show()
    notice = dialog.files_panel.notice
    qtbot.waitUntil(lambda: notice_says(dialog, "Can't reach Hugging Face"), timeout=TIMEOUT_MS)
    host = urlsplit(closed_port_url).netloc
    assert f"cannot reach the hub at {host}" in notice.text()  # why, as the hub call said it
    assert "listed under Installed" in notice.text()
    assert notice.retry_button.isVisible() and notice.installed_button.isVisible()
    dialog.grab().save("/tmp/picker-offline.png")

    qtbot.mouseClick(notice.installed_button, Qt.LeftButton)
    assert dialog.tabs.currentWidget() is dialog.installed_panel
    dialog.tabs.setCurrentIndex(0)

    pair = dialog.catalog.pairs[0]
    dialog.search_panel.results.setCurrentRow(0)  # a curated pair: its files cannot come
    qtbot.waitUntil(lambda: notice_says(dialog, "Can't reach Hugging Face")
                    and dialog.banner.isVisible(), timeout=TIMEOUT_MS)
    assert dialog.files_shown == [] and not dialog.files_panel.download_button.isEnabled()
    dialog.grab().save("/tmp/picker-offline-pair.png")

    hub = FakeHub()  # the hub comes back, on the same address
    hub.add_repo(pair.target.repo, {pair.target.file: synthetic_gguf(1 << 12)})
    hub.start(urlsplit(closed_port_url).port)
    try:
        qtbot.mouseClick(notice.retry_button, Qt.LeftButton)
        qtbot.waitUntil(lambda: bool(dialog.files_shown), timeout=TIMEOUT_MS)
        assert dialog.files_panel.stack.currentWidget() is dialog.files_panel.tree
        assert not dialog.banner.isVisible()
        dialog.grab().save("/tmp/picker-back-online.png")
    finally:
        hub.stop()


def test_before_a_choice_and_for_a_repository_without_a_model_the_table_says_so(
        qtbot, fake_hub, make_dialog):
    from tests.support.hub_fixtures import SPLIT_REPO
    dialog = make_dialog(fake_hub.url)
    assert notice_says(dialog, "No model chosen yet")
    dialog.show_repo(SPLIT_REPO)  # split parts and a projector: nothing to list alone
    qtbot.waitUntil(lambda: notice_says(dialog, f"No single-file GGUF model in {SPLIT_REPO}"),
                    timeout=TIMEOUT_MS)
    assert "3 split or vision-projector files are not listed" in dialog.files_panel.notice.text()
    assert not dialog.files_panel.notice.retry_button.isVisible()
