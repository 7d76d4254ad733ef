"""What the flash costs: the same greedy reply on the real bundled model, in the real window
(offscreen), with "Flash accepted drafts" on and off, alternating. Prints tokens/s of each,
the ratio, and the GUI thread's CPU time per reply.

    python -m app.ui.flash_cost [--tokens 160] [--repeats 3] [--mode ngram]

A script, not a test: timings on a shared machine are too noisy to assert on.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

# A copy task: most of the reply arrives as accepted drafts, so the flash runs all along (a
# short "repeat after me" accepted 12 tokens of 120 and barely flashed).
PROMPT = ("Copy this text exactly, word for word:\n\n"
          "The United States of America declared independence in 1776. The Declaration of "
          "Independence was adopted by the Continental Congress in Philadelphia on July 4, "
          "1776. It announced that the thirteen American colonies regarded themselves as "
          "independent sovereign states, no longer under British rule. The document was "
          "written mostly by Thomas Jefferson and edited by the Congress before it was signed.")


def _one_reply(window, prompt: str) -> tuple[float, float, int]:
    """(tokens/s, GUI-thread CPU seconds, flash frames) of one reply."""
    from PySide6.QtCore import QEventLoop
    loop = QEventLoop()
    window.session.reply_finished.connect(loop.quit)
    ticks = window.chat.flasher.ticks
    cpu = time.thread_time()  # the GUI thread is the one running this loop
    window.send(prompt)
    loop.exec()
    cpu = time.thread_time() - cpu
    window.session.reply_finished.disconnect(loop.quit)
    view = window.chat.messages[-1]
    return (view.stats or {}).get("tokens_per_second", 0.0), cpu, window.chat.flasher.ticks - ticks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.ui.flash_cost")
    parser.add_argument("--tokens", type=int, default=160)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mode", default="ngram")
    parser.add_argument("--prompt", default=PROMPT)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from app.paths import bundled_model_path
    from app.settings import Settings
    from app.store.history import History
    from app.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    settings = Settings(target_path=str(bundled_model_path()), max_tokens=args.tokens,
                        mode=args.mode, temperature=0.0)
    history = History(":memory:")
    window = MainWindow(settings, history, persist_settings=False)
    window.show()
    loop = QEventLoop()
    window.model_ready.connect(loop.quit)
    if not window.ready:
        loop.exec()
    results: dict[bool, list[tuple[float, float, int]]] = {True: [], False: []}
    _one_reply(window, args.prompt)  # warm-up: caches, auto's timing, first layout
    for _ in range(args.repeats):
        for flash in (True, False):
            window.chat.set_flash(flash)
            window.session.new_conversation()
            results[flash].append(_one_reply(window, args.prompt))
    for flash in (True, False):
        rates = [r for r, _, _ in results[flash]]
        cpus = [c for _, c, _ in results[flash]]
        frames = [f for _, _, f in results[flash]]
        print(f"flash {'on ' if flash else 'off'}: {statistics.median(rates):6.1f} tok/s "
              f"(runs {', '.join(f'{r:.1f}' for r in rates)}), GUI-thread CPU "
              f"{statistics.median(cpus):.3f} s per reply, {statistics.median(frames):.0f} "
              "flash frames")
    on = statistics.median(r for r, _, _ in results[True])
    off = statistics.median(r for r, _, _ in results[False])
    print(f"ratio on/off: {on / off:.3f} (target: within 2%)" if off else "no speed measured")
    window.close()
    window.shutdown()
    history.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
