"""The picker dialog against the loopback hub: search, files, drafts, download, cancel."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from app.store.catalog import load_catalog  # noqa: E402
from app.store.download_queue import DownloadQueue  # noqa: E402
from app.store.downloads import JobState  # noqa: E402
from app.store.hub import HubClient  # noqa: E402
from app.store.installed import list_installed  # noqa: E402
from app.ui.picker import PickerDialog  # noqa: E402
from tests.conftest_hub import (SMALL_FILE, SMALL_REPO, SMALL_SIZE, TARGET_FILE,  # noqa: E402,F401
                                TARGET_REPO, clean_env, closed_port_url, fake_hub)

TIMEOUT_MS = 15_000
MiB, GiB = 1 << 20, 1 << 30


@pytest.fixture
def machine_memory(monkeypatch):
    """Sets the RAM the store reads for this machine (total, available), so a badge does not
    depend on the computer running the test."""
    from app.store import memory

    def set_memory(total: int, available: int) -> None:
        monkeypatch.setattr(memory, "system_memory",
                            lambda: memory.MemoryInfo(total, available))

    return set_memory


@pytest.fixture
def make_dialog(qtbot):
    made = []

    def make(url, **kwargs):
        queue = DownloadQueue()
        dialog = PickerDialog(None, hub=HubClient(url), queue=queue, **kwargs)
        qtbot.addWidget(dialog)
        made.append((dialog, queue))
        return dialog

    yield make
    for dialog, queue in made:
        queue.close()
        dialog.done(0)


def select_file(qtbot, dialog, name):
    qtbot.waitUntil(lambda: any(f.path == name for f in dialog.files_shown), timeout=TIMEOUT_MS)
    row = [f.path for f in dialog.files_shown].index(name)
    dialog.files.selectRow(row)


def test_each_file_says_whether_it_verifies_drafts_fast_on_this_machine(
        qtbot, fake_hub, make_dialog, bundled_model):
    from tests.conftest_hub import QUANTS_REPO
    cpu = make_dialog(fake_hub.url)
    cpu.show_repo(QUANTS_REPO)
    qtbot.waitUntil(lambda: len(cpu.files_shown) == 2, timeout=TIMEOUT_MS)
    assert cpu.files.horizontalHeaderItem(4).text() == "Drafts"
    verify = {cpu.files.item(r, 1).text(): cpu.files.item(r, 4) for r in range(2)}
    assert verify["Q4_0"].text() == "fast verify" and verify["Q4_1"].text() == "slow verify"
    assert "costs nearly k passes" in verify["Q4_1"].toolTip()
    assert "Q4_1, slow verify" in cpu.installed.item(0).text()  # the bundled file

    gpu = make_dialog(fake_hub.url, gpu_offload=True)
    gpu.show_repo(QUANTS_REPO)
    qtbot.waitUntil(lambda: len(gpu.files_shown) == 2, timeout=TIMEOUT_MS)
    assert {gpu.files.item(r, 4).text() for r in range(2)} == {"fast verify"}


def test_search_select_download_and_see_it_installed(qtbot, fake_hub, make_dialog,
                                                     machine_memory):
    machine_memory(64 * GiB, 32 * GiB)
    dialog = make_dialog(fake_hub.url)
    dialog.search_edit.setText("qwen2.5")
    qtbot.mouseClick(dialog.search_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: dialog.repos.count() == 2, timeout=TIMEOUT_MS)
    assert dialog.repos.item(0).text() == TARGET_REPO  # most downloaded first

    dialog.repos.setCurrentRow(1)  # the 0.5B repo
    select_file(qtbot, dialog, SMALL_FILE)
    row = dialog.files.currentRow()
    assert dialog.files.item(row, 1).text() == "Q8_0"
    assert dialog.files.item(row, 2).text() == "3.1 MB"
    assert dialog.files.item(row, 3).text() == "fits"

    fake_hub.delay_per_chunk = 0.005
    changed = []
    dialog.installed_changed.connect(lambda: changed.append(True))
    qtbot.mouseClick(dialog.download_button, Qt.LeftButton)
    (job,) = dialog.rows
    qtbot.waitUntil(lambda: "/s, ETA" in dialog.rows[job].detail.text(), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: changed == [True], timeout=TIMEOUT_MS)
    assert job.state == JobState.DONE
    assert dialog.rows[job].bar.value() == 1000
    shown = [dialog.installed.item(i).text() for i in range(dialog.installed.count())]
    assert any(text.startswith("qwen2.5-0.5b-instruct-q8_0  (hub") for text in shown)
    assert "qwen2.5-0.5b-instruct-q8_0" in {m.name for m in list_installed()}
    assert fake_hub.bytes_sent(SMALL_FILE) == SMALL_SIZE


# The 3 MiB file needs about 303 MiB: its weights, a KV cache of ~8% of them at 4k tokens, and
# 300 MiB of overhead. "too big" over 90% of the total RAM, "tight" over 90% of what is free.
@pytest.mark.parametrize("total, available, badge", [
    (64 * GiB, 32 * GiB, "fits"),
    (64 * GiB, 300 * MiB, "tight"),
    (320 * MiB, 320 * MiB, "too big"),
])
def test_a_file_gets_the_badge_for_its_size_and_the_memory_here(
        qtbot, fake_hub, make_dialog, machine_memory, total, available, badge):
    machine_memory(total, available)
    dialog = make_dialog(fake_hub.url)
    dialog.show_repo(SMALL_REPO)
    select_file(qtbot, dialog, SMALL_FILE)
    assert dialog.files.item(dialog.files.currentRow(), 3).text() == badge


def test_each_file_gets_the_badge_for_its_own_size(qtbot, fake_hub, make_dialog,
                                                   machine_memory):
    fake_hub.add_repo("org/Sizes-GGUF", {"sizes-Q4_0.gguf": bytes(2 * MiB),
                                         "sizes-Q8_0.gguf": bytes(64 * MiB)})
    # They need about 302 and 369 MiB; 90% of 370 MiB, 333 MiB, lies between the two.
    machine_memory(370 * MiB, 370 * MiB)
    dialog = make_dialog(fake_hub.url)
    dialog.show_repo("org/Sizes-GGUF")
    qtbot.waitUntil(lambda: len(dialog.files_shown) == 2, timeout=TIMEOUT_MS)
    badges = {dialog.files.item(row, 0).text(): dialog.files.item(row, 3).text()
              for row in range(dialog.files.rowCount())}
    assert badges == {"sizes-Q4_0.gguf": "fits", "sizes-Q8_0.gguf": "too big"}


def test_drafts_for_a_target_and_cancel_a_download(qtbot, fake_hub, make_dialog):
    dialog = make_dialog(fake_hub.url)
    dialog.show_repo(TARGET_REPO)

    def drafts():
        return [dialog.drafts.item(i).text() for i in range(dialog.drafts.count())]

    qtbot.waitUntil(lambda: SMALL_REPO in drafts(), timeout=TIMEOUT_MS)  # the hub's guess
    assert "qwen2.5-0.5b-instruct-q8_0 (curated)" in drafts()
    assert TARGET_REPO not in drafts() and "org/Llama-3.2-1B-Instruct-GGUF" not in drafts()

    fake_hub.delay_per_chunk = 0.05  # slow enough to cancel midway
    select_file(qtbot, dialog, TARGET_FILE)
    qtbot.mouseClick(dialog.download_button, Qt.LeftButton)
    (job,) = dialog.rows
    qtbot.waitUntil(lambda: job.progress.downloaded > 0, timeout=TIMEOUT_MS)
    qtbot.mouseClick(dialog.rows[job].cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: job.state == JobState.CANCELLED, timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: "cancelled" in dialog.rows[job].detail.text(), timeout=TIMEOUT_MS)
    assert job.part_path.exists() and not job.destination.exists()
    assert not dialog.rows[job].cancel_button.isEnabled()


def test_a_curated_pair_downloads_target_and_draft_in_one_click(qtbot, fake_hub, make_dialog,
                                                                tmp_path):
    catalog_file = tmp_path / "models.toml"
    catalog_file.write_text(f'''
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
''')
    dialog = make_dialog(fake_hub.url, catalog=load_catalog(catalog_file))
    assert dialog.pairs.count() == 1
    dialog.pairs.setCurrentRow(0)
    qtbot.mouseClick(dialog.pair_button, Qt.LeftButton)
    assert len(dialog.rows) == 2
    qtbot.waitUntil(lambda: all(j.state == JobState.DONE for j in dialog.rows), timeout=TIMEOUT_MS)
    assert {"t", "d"} <= {m.name for m in list_installed()}


def test_offline_hub_shows_one_message(qtbot, closed_port_url, make_dialog):
    dialog = make_dialog(closed_port_url)
    dialog.search_edit.setText("qwen")
    qtbot.mouseClick(dialog.search_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: "cannot reach the hub" in dialog.status.text(), timeout=TIMEOUT_MS)
    assert "Bundled and local models still work" in dialog.status.text()
    assert dialog.installed.count() >= 1  # the bundled model is still there
