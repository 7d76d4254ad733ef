"""The README's picker screenshots, from the loopback hub (nothing leaves this machine):

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.support.picker_screenshots assets/

writes picker-search.png (search results, a repository's files, its drafts) and
picker-files.png (the files and drafts, wider). The hub serves listings with real-world
file sizes but no content; the machine is set to 16 GB of RAM with 11 GB free, and the models
folder is a fresh temporary one (the bundled model only), so the pictures are the same anywhere.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.support.hub_server import FakeHub

GB = 1_000_000_000
QWEN7_QUANTS = {"Q2_K": 3.02, "Q3_K_M": 3.81, "Q4_0": 4.43, "Q4_K_M": 4.68, "Q5_K_M": 5.44,
                "Q6_K": 6.25, "Q8_0": 8.10, "f16": 15.2}


def ago(days: int) -> str:
    """A date `days` before now, as the hub writes it: the pictures read the same any day."""
    when = datetime.now(timezone.utc) - timedelta(days=days, hours=1)
    return when.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def demo_hub() -> FakeHub:
    hub = FakeHub()

    def repo(repo_id, quants, **facts):
        name = repo_id.split("/")[1].removesuffix("-GGUF")
        files = {f"{name}-{q}.gguf": b"" for q in quants}
        sizes = {f"{name}-{q}.gguf": int(gb * GB) for q, gb in quants.items()}
        hub.add_repo(repo_id, files, sizes=sizes, **facts)

    repo("bartowski/Qwen2.5-7B-Instruct-GGUF", QWEN7_QUANTS, downloads=2_345_678, likes=412,
         licence="apache-2.0", parameters=7_615_616_512, architecture="qwen2",
         last_modified=ago(10))
    repo("Qwen/Qwen2.5-14B-Instruct-GGUF", {"q4_k_m": 8.99, "q8_0": 15.7}, downloads=1_104_220,
         likes=530, licence="apache-2.0", parameters=14_770_033_664, architecture="qwen2",
         last_modified=ago(90))
    repo("bartowski/Qwen2.5-Coder-7B-Instruct-GGUF", {"Q4_K_M": 4.68, "Q8_0": 8.10},
         downloads=987_000, likes=268, licence="apache-2.0", parameters=7_615_616_512,
         architecture="qwen2", last_modified=ago(50))
    repo("bartowski/Qwen2.5-0.5B-Instruct-GGUF", {"Q4_K_M": 0.40, "Q8_0": 0.53},
         downloads=876_543, likes=95, licence="apache-2.0", parameters=494_032_768,
         architecture="qwen2", last_modified=ago(2))
    repo("unsloth/Qwen2.5-3B-Instruct-GGUF", {"Q4_K_M": 1.93, "Q8_0": 3.29}, downloads=412_000,
         likes=61, licence="other", parameters=3_085_938_688, architecture="qwen2",
         last_modified=ago(140))
    repo("lmstudio-community/Qwen2.5-1.5B-Instruct-GGUF", {"Q4_K_M": 0.99, "Q8_0": 1.65},
         downloads=230_100, likes=22, licence="apache-2.0", parameters=1_543_714_304,
         architecture="qwen2", last_modified=ago(155))
    repo("meta-qwen/Qwen2.5-Math-72B-GGUF", {"Q4_K_M": 47.4}, downloads=18_400, likes=40,
         gated=True, licence="qwen", last_modified=ago(210))
    return hub


def wait_until(app, condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the picker did not show what was expected")
        app.processEvents()
        time.sleep(0.01)


RAM = (16 * 1024**3, 11 * 1024**3)  # total, free: the badges in the pictures


def render(app, out: Path) -> list[Path]:
    """Both pictures, with the picker on the demo hub; the caller has set the models folder
    and the RAM (see main)."""
    from draftlight.store.download_queue import DownloadQueue
    from draftlight.store.hub import HubClient, HubRepo
    from draftlight.ui.picker.dialog import PickerDialog

    hub = demo_hub().start()
    queue = DownloadQueue()
    written = []
    try:
        dialog = PickerDialog(None, hub=HubClient(hub.url), queue=queue)
        dialog.resize(1240, 800)
        dialog.show()
        dialog.search_panel.search_edit.setText("qwen2.5")
        wait_until(app, lambda: sum(isinstance(r, HubRepo)
                                    for r in dialog.search_panel.repos_shown()) >= 5)
        dialog.search_panel.results.setCurrentRow(0)
        wait_until(app, lambda: len(dialog.files_shown) == len(QWEN7_QUANTS))
        wait_until(app, lambda: any(o.kind == "same tokenizer"
                                    for o in dialog.drafts_panel.options_shown()))
        dialog.drafts_panel.select("qwen2.5-0.5b-instruct-q8_0")
        settle(app)
        out.mkdir(parents=True, exist_ok=True)
        if dialog.grab().save(str(out / "picker-search.png"), "PNG"):
            written.append(out / "picker-search.png")
        # The files and drafts alone, wider: the recommended row in its own colour, and the
        # drafts scrolled to the cross-vocabulary one
        details = dialog.files_panel.parentWidget()
        details.parentWidget().setSizes([260, 980])
        dialog.files_panel.tree.clearSelection()
        dialog.drafts_panel.list.scrollToBottom()
        settle(app)
        if details.grab().save(str(out / "picker-files.png"), "PNG"):
            written.append(out / "picker-files.png")
        dialog.done(0)
    finally:
        queue.close()
        hub.stop()
    return written


def settle(app) -> None:
    for _ in range(20):
        app.processEvents()


def main(out: Path) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["DRAFTLIGHT_HOME"] = tempfile.mkdtemp(prefix="draftlight-shots-")
    from draftlight.store import memory
    memory.system_memory = lambda: memory.MemoryInfo(*RAM)
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication(sys.argv[:1])
    written = render(app, out)
    print("wrote " + " and ".join(map(str, written)))
    return 0 if len(written) == 2 else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "assets")))
