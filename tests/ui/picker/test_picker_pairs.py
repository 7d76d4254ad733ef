"""Drafts for a target in the picker, each labelled with why it qualifies, and "Download pair":
both files on one progress bar, cancel, resume."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from draftlight.store.catalog import load_catalog  # noqa: E402
from draftlight.store.downloads import JobState  # noqa: E402
from draftlight.store.installed import list_installed  # noqa: E402
from tests.support.hub_fixtures import (SMALL_FILE, SMALL_REPO, SMALL_SIZE,  # noqa: E402
                                        TARGET_FILE, TARGET_REPO)
from tests.support.picker import GB, TIMEOUT_MS  # noqa: E402

TARGET_SIZE = 4 << 20  # hub_fixtures' target file
BIG_REPO = "org/Qwen2.5-14B-Instruct-GGUF"


@pytest.fixture
def pair_catalog(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text(f'''
default = "t"
[[models]]
name = "t"
repo = "{TARGET_REPO}"
file = "{TARGET_FILE}"
quant = "Q4_K_M"
[[models]]
name = "d"
repo = "{SMALL_REPO}"
file = "{SMALL_FILE}"
quant = "Q8_0"
size_hint = 3000000
[[pairs]]
target = "t"
draft = "d"
tokenizer = "Qwen2.5 BPE, 151,936 rows (the model cards)"
''')
    return load_catalog(path)


def drafts_by_name(dialog):
    return {o.name: o for o in dialog.drafts_panel.options_shown()}


def test_drafts_say_why_they_qualify(qtbot, fake_hub, make_dialog):
    fake_hub.add_repo(BIG_REPO, {"big-Q4_K_M.gguf": b""}, sizes={"big-Q4_K_M.gguf": 9 * GB})
    dialog = make_dialog(fake_hub.url)
    dialog.show_repo(BIG_REPO)
    qtbot.waitUntil(lambda: SMALL_REPO in drafts_by_name(dialog) and bool(dialog.files_shown),
                    timeout=TIMEOUT_MS)
    drafts = drafts_by_name(dialog)
    assert drafts["qwen2.5-0.5b-instruct-q8_0"].kind == "curated"  # models.toml's Qwen draft
    assert "same tokenizer" in drafts["qwen2.5-0.5b-instruct-q8_0"].why
    assert drafts[SMALL_REPO].kind == "same tokenizer"
    assert drafts[SMALL_REPO].why == "same tokenizer: a smaller qwen2.5 model on the hub"
    assert TARGET_REPO not in drafts  # 7B is over a third of 14B: it would not pay (issue 54)
    bundled = drafts["smollm2-135m-instruct-q4_1"]  # installed, of another vocabulary
    assert bundled.kind == "cross-vocabulary" and bundled.installed
    assert bundled.why.startswith("cross-vocabulary: drafts through the tokens both")
    assert "org/Llama-3.2-1B-Instruct-GGUF" not in drafts  # another family, not installed
    items = [dialog.drafts_panel.list.item(i) for i in range(dialog.drafts_panel.list.count())]
    chips = {item.text(): [text for text, _ in item.data(Qt.UserRole + 2)] for item in items}
    assert chips["smollm2-135m-instruct-q4_1"] == ["cross-vocabulary", "installed"]


def test_a_small_target_gets_no_installed_draft_of_its_size(qtbot, fake_hub, make_dialog):
    dialog = make_dialog(fake_hub.url)
    dialog.show_repo(TARGET_REPO)  # 4 MiB: the 98 MB bundled model is no draft for it
    qtbot.waitUntil(lambda: SMALL_REPO in drafts_by_name(dialog) and bool(dialog.files_shown),
                    timeout=TIMEOUT_MS)
    assert "smollm2-135m-instruct-q4_1" not in drafts_by_name(dialog)


def test_download_pair_one_bar_for_both_cancel_and_resume(qtbot, fake_hub, make_dialog,
                                                          pair_catalog):
    dialog = make_dialog(fake_hub.url, catalog=pair_catalog)
    dialog.show()
    search = dialog.search_panel
    assert search.results.count() == 1  # the curated pair, before any search
    search.results.setCurrentRow(0)
    qtbot.waitUntil(lambda: dialog.files_panel.selected_file() is not None
                    and dialog.drafts_panel.selected() is not None, timeout=TIMEOUT_MS)
    assert dialog.files_panel.selected_file().path == TARGET_FILE
    assert dialog.drafts_panel.selected().name == "d"

    fake_hub.delay_per_chunk = 0.05  # slow enough to cancel midway (3 s for the target)
    qtbot.mouseClick(dialog.drafts_panel.pair_button, Qt.LeftButton)
    (row,) = dialog.pair_rows
    assert not dialog.rows  # one row for the pair, not one per file
    assert [j.filename for j in row.pair.jobs] == [TARGET_FILE, SMALL_FILE]
    qtbot.waitUntil(lambda: row.pair.progress.downloaded > 0, timeout=TIMEOUT_MS)
    progress = row.pair.progress
    assert progress.total == TARGET_SIZE + 3_000_000  # the draft's size hint until it starts
    qtbot.waitUntil(lambda: 0 < row.bar.value() < 1000 and "/s, ETA" in row.detail.text(),
                    timeout=TIMEOUT_MS)
    assert row.detail.text().startswith("2 files: ")

    qtbot.mouseClick(row.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: row.shown_state == JobState.CANCELLED, timeout=TIMEOUT_MS)
    first, second = row.pair.jobs
    assert first.part_path.exists() and not first.destination.exists()
    assert second.state == JobState.CANCELLED  # cancelled while queued: never started
    assert row.resume_button.isVisible() and not row.cancel_button.isVisible()
    kept = first.part_path.stat().st_size

    fake_hub.delay_per_chunk = 0.0
    changed = []
    dialog.installed_changed.connect(lambda: changed.append(True))
    qtbot.mouseClick(row.resume_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: row.shown_state == JobState.DONE, timeout=TIMEOUT_MS)
    assert row.pair.progress.total == TARGET_SIZE + SMALL_SIZE  # the real sizes, once known
    assert row.bar.value() == 1000 and row.detail.text() == "done: 2 files installed"
    assert {"t", "d"} <= {m.name for m in list_installed()}
    qtbot.waitUntil(lambda: changed == [True], timeout=TIMEOUT_MS)
    resumed = [r for r in fake_hub.file_requests(TARGET_FILE) if r.range_start]
    assert resumed and resumed[-1].range_start == kept  # went on from the partial file


def test_a_hub_draft_is_fetched_as_its_q8_0_file(qtbot, fake_hub, make_dialog):
    dialog = make_dialog(fake_hub.url)
    dialog.show_repo(TARGET_REPO)
    qtbot.waitUntil(lambda: SMALL_REPO in drafts_by_name(dialog), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: dialog.files_panel.selected_file() is not None, timeout=TIMEOUT_MS)
    dialog.drafts_panel.select(SMALL_REPO)
    qtbot.mouseClick(dialog.drafts_panel.pair_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(dialog.pair_rows) == 1, timeout=TIMEOUT_MS)
    (row,) = dialog.pair_rows
    assert [j.filename for j in row.pair.jobs] == [TARGET_FILE, SMALL_FILE]  # Q8_0, not Q4_K_M
    qtbot.waitUntil(lambda: row.shown_state == JobState.DONE, timeout=TIMEOUT_MS)
