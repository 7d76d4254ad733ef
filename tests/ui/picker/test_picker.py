"""The picker's files against the loopback hub: quant groups, memory badges, the verify column,
the recommended file for this machine's RAM, a download with cancel, and the offline banner."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from draftlight.store.downloads import JobState  # noqa: E402
from draftlight.store.installed import list_installed  # noqa: E402
from tests.support.hub_fixtures import (QUANTS_REPO, SMALL_FILE, SMALL_REPO,  # noqa: E402
                                        SMALL_SIZE, TARGET_FILE, TARGET_REPO)
from tests.support.picker import GB, TIMEOUT_MS, GiB, MiB  # noqa: E402


@pytest.fixture
def machine_memory(monkeypatch):
    """Sets the RAM the store reads for this machine (total, available), so a badge does not
    depend on the computer running the test."""
    from draftlight.store import memory

    def set_memory(total: int, available: int) -> None:
        monkeypatch.setattr(memory, "system_memory",
                            lambda: memory.MemoryInfo(total, available))

    return set_memory


def show_files(qtbot, dialog, repo_id, count):
    dialog.show_repo(repo_id)
    qtbot.waitUntil(lambda: len(dialog.files_shown) == count, timeout=TIMEOUT_MS)
    return dialog.files_panel


def no_draft(dialog):
    """Badges for the target alone: no draft chosen."""
    dialog.drafts_panel.list.setCurrentRow(-1)
    dialog.files_panel.set_draft_bytes(0)


def test_each_file_says_whether_it_verifies_drafts_fast_on_this_machine(
        qtbot, fake_hub, make_dialog):
    cpu = show_files(qtbot, make_dialog(fake_hub.url), QUANTS_REPO, 2)
    assert cpu.tree.headerItem().text(4) == "Drafts"
    q40, q41 = (cpu.row_texts(f"SmolLM2-135M-Instruct.{q}.gguf") for q in ("Q4_0", "Q4_1"))
    assert q40["Drafts"] == "fast verify" and q41["Drafts"] == "slow verify"
    assert "costs nearly k passes" in cpu._item_for("SmolLM2-135M-Instruct.Q4_1.gguf").toolTip(4)

    gpu = show_files(qtbot, make_dialog(fake_hub.url, gpu_offload=True), QUANTS_REPO, 2)
    assert {gpu.row_texts(f.path)["Drafts"] for f in gpu.files_shown} == {"fast verify"}


def test_files_are_grouped_by_quantisation_largest_first(qtbot, fake_hub, make_dialog):
    fake_hub.add_repo("org/Groups-GGUF", {f"m-{q}.gguf": b"" for q in
                                          ("Q4_0", "Q8_0", "Q4_K_M", "F16", "Q2_K")},
                      sizes={"m-F16.gguf": 16 * GB})
    panel = show_files(qtbot, make_dialog(fake_hub.url), "org/Groups-GGUF", 5)
    groups = {panel.tree.topLevelItem(i).text(0): [panel.tree.topLevelItem(i).child(j).data(
        0, Qt.UserRole).quant for j in range(panel.tree.topLevelItem(i).childCount())]
        for i in range(panel.tree.topLevelItemCount())}
    assert list(groups) == ["16-bit", "8-bit", "4-bit", "2-bit"]
    assert sorted(groups["4-bit"]) == ["Q4_0", "Q4_K_M"]


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
    panel = show_files(qtbot, dialog, SMALL_REPO, 2)
    no_draft(dialog)
    assert panel.row_texts(SMALL_FILE)["Memory"] == badge


def test_the_badge_counts_the_draft_and_the_context(qtbot, fake_hub, make_dialog,
                                                    machine_memory):
    fake_hub.add_repo("org/Edge-GGUF", {"edge-Q4_0.gguf": b""}, sizes={"edge-Q4_0.gguf": 2 * GB})
    # 2 GB needs ~2.47 GB at 4k, with 1 GB of draft ~3.55 GB, alone at 32k ~3.59 GB (its KV
    # cache grows 8x); "too big" is over 90% of 3.8 GB, 3.42 GB
    machine_memory(int(3.8 * GB), int(3.8 * GB))
    dialog = make_dialog(fake_hub.url)
    panel = show_files(qtbot, dialog, "org/Edge-GGUF", 1)
    no_draft(dialog)
    assert panel.row_texts("edge-Q4_0.gguf")["Memory"] == "fits"
    panel.set_draft_bytes(1 * GB)
    assert panel.row_texts("edge-Q4_0.gguf")["Memory"] == "too big"
    panel.set_draft_bytes(0)
    panel.context_box.setCurrentIndex(panel.context_box.findData(32768))
    assert panel.row_texts("edge-Q4_0.gguf")["Memory"] == "too big"


SIZES = {"Q2_K": 1.0, "Q4_K_M": 2.0, "Q5_K_M": 2.5, "Q8_0": 4.0, "F16": 8.0}


@pytest.mark.parametrize("total, available, recommended, words", [
    (32 * GiB, 24 * GiB, "F16", "the largest file that verifies drafts fast and leaves 25%"),
    (16 * GiB, 7 * GiB, "Q8_0", "the largest file that verifies drafts fast"),
    # Q5_K_M would fit too, but it verifies drafts slowly on a CPU: Q4_K_M is preferred
    (16 * GiB, 4 * GiB, "Q4_K_M", "verifies drafts fast"),
    (16 * GiB, 1 * GiB, "Q2_K", "but tight"),
    (1 * GiB, 1 * GiB, None, "None of these files fits"),
])
def test_the_recommended_file_is_the_largest_that_fits_with_headroom(
        qtbot, fake_hub, make_dialog, machine_memory, total, available, recommended, words):
    fake_hub.add_repo("org/Sizes-GGUF", {f"sizes-{q}.gguf": b"" for q in SIZES},
                      sizes={f"sizes-{q}.gguf": int(gb * GB) for q, gb in SIZES.items()})
    machine_memory(total, available)
    dialog = make_dialog(fake_hub.url)
    panel = show_files(qtbot, dialog, "org/Sizes-GGUF", 5)
    no_draft(dialog)
    chosen = panel.recommendation.file
    assert (chosen.quant if chosen else None) == recommended
    assert words in panel.reason.text() and panel.reason.isVisibleTo(dialog)
    if recommended:
        row = panel.row_texts(f"sizes-{recommended}.gguf")
        assert row["File"].startswith("★ ")
        assert panel.selected_file() == chosen  # the download button takes it by default


def test_download_a_file_and_see_it_installed(qtbot, fake_hub, make_dialog, machine_memory):
    machine_memory(64 * GiB, 32 * GiB)
    dialog = make_dialog(fake_hub.url)
    panel = show_files(qtbot, dialog, SMALL_REPO, 2)
    assert panel.select_file(SMALL_FILE)
    assert panel.row_texts(SMALL_FILE) == {  # the largest that fits: recommended
        "File": f"★ {SMALL_FILE}", "Quant": "Q8_0", "Size": "3.1 MB", "Memory": "fits",
        "Drafts": "fast verify"}

    fake_hub.delay_per_chunk = 0.005
    changed = []
    dialog.installed_changed.connect(lambda: changed.append(True))
    qtbot.mouseClick(panel.download_button, Qt.LeftButton)
    (job,) = dialog.rows
    qtbot.waitUntil(lambda: "/s, ETA" in dialog.rows[job].detail.text(), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: changed == [True], timeout=TIMEOUT_MS)
    assert job.state == JobState.DONE and dialog.rows[job].bar.value() == 1000
    assert "qwen2.5-0.5b-instruct-q8_0" in {m.name for m in list_installed()}
    assert "qwen2.5-0.5b-instruct-q8_0" in {m.name for m in dialog.installed_panel.models_shown()}
    assert fake_hub.bytes_sent(SMALL_FILE) == SMALL_SIZE


def test_cancel_a_download_keeps_the_partial_file(qtbot, fake_hub, make_dialog):
    dialog = make_dialog(fake_hub.url)
    panel = show_files(qtbot, dialog, TARGET_REPO, 1)
    fake_hub.delay_per_chunk = 0.05  # slow enough to cancel midway
    panel.select_file(TARGET_FILE)
    qtbot.mouseClick(panel.download_button, Qt.LeftButton)
    (job,) = dialog.rows
    qtbot.waitUntil(lambda: job.progress.downloaded > 0, timeout=TIMEOUT_MS)
    qtbot.mouseClick(dialog.rows[job].cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: "cancelled" in dialog.rows[job].detail.text(), timeout=TIMEOUT_MS)
    assert job.part_path.exists() and not job.destination.exists()
    assert not dialog.rows[job].cancel_button.isEnabled()


def test_offline_shows_a_banner_whose_retry_asks_again(qtbot, closed_port_url, make_dialog,
                                                       clean_env):
    from urllib.parse import urlsplit

    from tests.support.hub_server import FakeHub
    dialog = make_dialog(closed_port_url)
    dialog.show()
    dialog.search_panel.search_edit.setText("qwen")
    dialog.search_panel.search_now()
    banner = dialog.banner
    qtbot.waitUntil(lambda: banner.isVisible() and "cannot reach the hub" in banner.label.text(),
                    timeout=TIMEOUT_MS)
    assert "Bundled and local models still work" in banner.label.text()
    assert banner.action_button.text() == "Retry" and banner.action_button.isVisible()
    assert dialog.installed_panel.models_shown()  # the bundled model is still there

    hub = FakeHub()  # the hub comes back, on the same address
    hub.add_repo("org/Qwen3-GGUF", {"qwen3-Q4_0.gguf": b"x"})
    hub.start(urlsplit(closed_port_url).port)
    try:
        qtbot.mouseClick(banner.action_button, Qt.LeftButton)
        qtbot.waitUntil(lambda: len(dialog.search_panel.repos_shown()) == 1, timeout=TIMEOUT_MS)
        assert dialog.search_panel.repos_shown()[0].id == "org/Qwen3-GGUF"
        assert not banner.isVisible()
    finally:
        hub.stop()


def test_a_hub_error_on_a_repository_shows_in_the_banner_with_retry(qtbot, fake_hub,
                                                                    make_dialog):
    from tests.support.hub_fixtures import GATED_REPO
    dialog = make_dialog(fake_hub.url)
    dialog.show()
    dialog.show_repo(GATED_REPO)
    banner = dialog.banner
    qtbot.waitUntil(lambda: banner.isVisible() and "is gated" in banner.label.text(),
                    timeout=TIMEOUT_MS)
    assert "set a token" in banner.label.text() and banner.action_button.text() == "Retry"
    asked = len(fake_hub.requests)
    qtbot.mouseClick(banner.action_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: banner.isVisible() and len(fake_hub.requests) > asked,
                    timeout=TIMEOUT_MS)  # asked again, and told again


def test_offline_the_banner_shows_as_the_picker_opens_and_nothing_pretends(
        qtbot, closed_port_url, make_dialog, clean_env):
    # The picker offline (issue 36, item 8): said at once, before any click; a search that
    # gets no answer shows no results (not the curated list under the failure); a pair
    # cannot be downloaded before a target file is chosen.
    dialog = make_dialog(closed_port_url)
    dialog.show()
    banner = dialog.banner
    qtbot.waitUntil(lambda: banner.isVisible() and "cannot reach the hub" in banner.label.text(),
                    timeout=TIMEOUT_MS)
    search = dialog.search_panel
    assert search.repos_shown()  # the curated pairs, from the package, still listed
    search.search_edit.setText("qwen")
    search.search_now()
    qtbot.waitUntil(lambda: "No answer from the hub" in search.summary.text(),
                    timeout=TIMEOUT_MS)
    assert search.repos_shown() == [] and "“qwen”" in search.summary.text()
    search.search_edit.clear()
    search.search_now()
    assert search.repos_shown()  # the curated pairs again
    assert not dialog.drafts_panel.pair_button.isEnabled()
    assert dialog.files_panel.selected_file() is None


def test_download_pair_waits_for_a_target_file(qtbot, closed_port_url, fake_hub, make_dialog,
                                               clean_env):
    offline = make_dialog(closed_port_url)
    offline.show()
    offline.search_panel.results.setCurrentRow(0)  # a curated pair: its draft is listed ...
    drafts = offline.drafts_panel
    qtbot.waitUntil(lambda: bool(drafts.options_shown()), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: offline.banner.isVisible(), timeout=TIMEOUT_MS)
    assert offline.files_shown == []  # ... but no file of the target came
    assert drafts.selected() is not None and not drafts.pair_button.isEnabled()
    assert "target's file" in drafts.pair_button.toolTip()

    from tests.support.hub_fixtures import TARGET_REPO
    online = make_dialog(fake_hub.url)
    online.show()
    online.show_repo(TARGET_REPO)
    qtbot.waitUntil(lambda: bool(online.files_shown), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: online.drafts_panel.pair_button.isEnabled(), timeout=TIMEOUT_MS)
