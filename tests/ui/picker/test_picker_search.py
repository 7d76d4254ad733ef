"""The picker's search against the loopback hub: one request per pause in the typing, the three
sort orders, and rows that show what the hub tells about each repository."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from draftlight.store.hub import HubRepo  # noqa: E402
from draftlight.ui.picker.search import DEBOUNCE_MS  # noqa: E402
from draftlight.ui.picker.rows import CHIPS_ROLE, SECONDARY_ROLE  # noqa: E402
from tests.support.hub_server import FakeHub  # noqa: E402
from tests.support.picker import TIMEOUT_MS  # noqa: E402

REPOS = {  # id: downloads, likes, last update
    "bartowski/Qwen2.5-7B-Instruct-GGUF": (900, 10, "2026-03-01T00:00:00.000Z"),
    "Qwen/Qwen2.5-14B-Instruct-GGUF": (500, 70, "2026-01-01T00:00:00.000Z"),
    "unsloth/Qwen2.5-3B-Instruct-GGUF": (100, 30, "2026-11-01T00:00:00.000Z"),
}


@pytest.fixture
def listed_hub(clean_env):
    fake_hub = FakeHub()
    for repo_id, (downloads, likes, updated) in REPOS.items():
        fake_hub.add_repo(repo_id, {"m-Q4_0.gguf": b"x"}, downloads=downloads, likes=likes,
                          last_modified=updated, licence="apache-2.0")
    fake_hub.add_repo("meta/Qwen2.5-Gated-72B-GGUF", {"g-Q4_0.gguf": b"x"}, gated=True,
                      parameters=72_700_000_000, architecture="qwen2", licence="qwen")
    fake_hub.add_repo("org/Qwen2.5-Safetensors", {"model.safetensors": b"x"}, tags=["pytorch"])
    yield fake_hub.start()
    fake_hub.stop()


def hub_rows(panel) -> list[HubRepo]:
    return [r for r in panel.repos_shown() if isinstance(r, HubRepo)]


def searches(hub) -> list[str]:
    return [r.query.get("search", [""])[0] for r in hub.search_requests()]


def test_typing_sends_one_request_per_pause(qtbot, listed_hub, make_dialog):
    panel = make_dialog(listed_hub.url).search_panel
    qtbot.keyClicks(panel.search_edit, "qwen")  # four edits, no pause between them
    qtbot.waitUntil(lambda: len(hub_rows(panel)) == 4, timeout=TIMEOUT_MS)
    qtbot.wait(2 * DEBOUNCE_MS)
    assert searches(listed_hub) == ["qwen"]

    qtbot.keyClicks(panel.search_edit, "2.5-3")
    qtbot.waitUntil(lambda: len(hub_rows(panel)) == 1, timeout=TIMEOUT_MS)
    qtbot.wait(2 * DEBOUNCE_MS)
    assert searches(listed_hub) == ["qwen", "qwen2.5-3"]
    query = listed_hub.search_requests()[-1].query
    assert query["filter"] == ["gguf"] and "likes" in query["expand"]


@pytest.mark.parametrize("sort, hub_sort, order", [
    ("downloads", "downloads", ["bartowski", "Qwen", "unsloth"]),
    ("likes", "likes", ["Qwen", "unsloth", "bartowski"]),
    ("updated", "lastModified", ["unsloth", "bartowski", "Qwen"]),
])
def test_results_follow_the_chosen_sort(qtbot, listed_hub, make_dialog, sort, hub_sort, order):
    panel = make_dialog(listed_hub.url).search_panel
    panel.search_edit.setText("instruct")
    panel.set_sort(sort)
    panel.search_now()
    qtbot.waitUntil(lambda: len(hub_rows(panel)) == 3 and listed_hub.search_requests()[-1].query[
        "sort"] == [hub_sort], timeout=TIMEOUT_MS)
    assert [r.publisher for r in hub_rows(panel)] == order


def test_a_row_shows_publisher_size_family_counts_date_licence_and_gating(
        qtbot, listed_hub, make_dialog):
    panel = make_dialog(listed_hub.url).search_panel
    panel.search_edit.setText("qwen2.5")
    panel.search_now()
    qtbot.waitUntil(lambda: len(hub_rows(panel)) == 4, timeout=TIMEOUT_MS)
    items = {panel.results.item(i).data(256).id: panel.results.item(i)
             for i in range(panel.results.count())}
    gated = items["meta/Qwen2.5-Gated-72B-GGUF"]
    assert gated.text() == "Qwen2.5-Gated-72B-GGUF"
    facts = gated.data(SECONDARY_ROLE)
    assert facts.startswith("meta  ·  72.7B  ·  qwen2.5  ·  ↓ 0  ·  ♥ 0")
    assert gated.data(SECONDARY_ROLE).endswith("qwen")
    assert [text for text, _colour in gated.data(CHIPS_ROLE)] == ["gated"]
    seven = items["bartowski/Qwen2.5-7B-Instruct-GGUF"].data(SECONDARY_ROLE)
    assert "7B" in seven and "↓ 900" in seven and "♥ 10" in seven and "apache-2.0" in seven
    assert "updated " in seven and items["bartowski/Qwen2.5-7B-Instruct-GGUF"].data(
        CHIPS_ROLE) == []
    assert "org/Qwen2.5-Safetensors" not in items  # not a GGUF repository


def test_an_empty_box_lists_the_curated_pairs_without_asking_the_hub(qtbot, listed_hub,
                                                                     make_dialog):
    panel = make_dialog(listed_hub.url).search_panel
    assert panel.repos_shown() and not hub_rows(panel)
    qtbot.keyClicks(panel.search_edit, "q")
    qtbot.waitUntil(lambda: bool(hub_rows(panel)), timeout=TIMEOUT_MS)
    panel.search_edit.clear()
    qtbot.waitUntil(lambda: not hub_rows(panel), timeout=TIMEOUT_MS)
    assert searches(listed_hub) == ["q"]


def test_the_readme_screenshots_render_from_the_loopback_hub(qtbot, qapp, tmp_path,
                                                              monkeypatch, clean_env):
    from PySide6.QtGui import QImage

    from draftlight.store import memory
    from tests.support import picker_screenshots
    monkeypatch.setattr(memory, "system_memory", lambda: memory.MemoryInfo(
        *picker_screenshots.RAM))
    written = picker_screenshots.render(qapp, tmp_path)
    assert [p.name for p in written] == ["picker-search.png", "picker-files.png"]
    sizes = [QImage(str(p)).size() for p in written]
    assert sizes[0].width() == 1240 and sizes[1].width() > 900
