"""What the flash costs: the same greedy reply on the real bundled model, in the real window
(offscreen), with "Flash accepted drafts" on and off, alternating. Prints tokens/s of each,
the ratio, the GUI thread's CPU time per reply and its longest stall while a reply streams (the
longest gap between the ticks of a 5 ms timer on it).

    python -m draftlight.bench.flash_cost [--tokens 160] [--repeats 3] [--mode ngram]
                                          [--in-process]

The window runs its engine in a process of its own (engine/host/hosted.py); `--in-process` loads
it in the window's process instead, as the app did before, to compare.

A script, not a test: timings on a shared machine are too noisy to assert on.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

# A copy task: most of the reply arrives as accepted drafts, so the flash runs all along (a
# short "repeat after me" accepted 12 tokens of 120 and barely flashed; one paragraph was copied
# in 54 tokens, under half a second of flashing).
PROMPT = ("Copy this text exactly, word for word:\n\n"
          "The United States of America declared independence in 1776. The Declaration of "
          "Independence was adopted by the Continental Congress in Philadelphia on July 4, "
          "1776. It announced that the thirteen American colonies regarded themselves as "
          "independent sovereign states, no longer under British rule. The document was "
          "written mostly by Thomas Jefferson and edited by the Congress before it was signed. "
          "Water evaporates from oceans, lakes and rivers when the sun warms them. The vapour "
          "rises, cools and condenses into clouds. When the droplets in a cloud grow heavy "
          "enough, they fall as rain or snow. Some of that water flows over the ground into "
          "streams and rivers, some soaks into the soil and becomes groundwater, and plants "
          "return some of it to the air through their leaves. In time the water reaches the "
          "sea again, and the cycle begins once more.")


# Student's t, two-sided 95%, by degrees of freedom (beyond the table: 2.0)
T_95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
        10: 2.23, 11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 19: 2.09, 29: 2.05}


def _one_reply(window, prompt: str) -> tuple[float, float, int, float]:
    """(tokens/s, GUI-thread CPU seconds, flash frames, longest stall in seconds) of one
    reply."""
    from PySide6.QtCore import QEventLoop, QTimer
    loop = QEventLoop()
    window.session.reply_finished.connect(loop.quit)
    ticks = window.chat.flasher.ticks
    last, stall = [time.perf_counter()], [0.0]

    def tick() -> None:
        now = time.perf_counter()
        stall[0] = max(stall[0], now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    cpu = time.thread_time()  # the GUI thread is the one running this loop
    window.send(prompt)
    loop.exec()
    cpu = time.thread_time() - cpu
    timer.stop()
    window.session.reply_finished.disconnect(loop.quit)
    view = window.chat.messages[-1]
    return ((view.stats or {}).get("tokens_per_second", 0.0), cpu,
            window.chat.flasher.ticks - ticks, stall[0])


def in_process_factory():
    """The window's factory, with the engine loaded in the window's own process."""
    from draftlight.launch import open_engine
    from draftlight.ui.engine.factory import LlamaEngineFactory

    class InProcessFactory(LlamaEngineFactory):
        def load_engine(self, spec, *, should_cancel=lambda: False, on_progress=None):
            return open_engine(spec, should_cancel=should_cancel, on_progress=on_progress)

    return InProcessFactory()


def ratio_interval(ratios: list[float]) -> tuple[float, float, float]:
    """Geometric mean of paired ratios with a 95% t-interval on their logarithms."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), math.exp(mean), math.exp(mean)
    half = T_95.get(len(logs) - 1, 2.0) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean - half), math.exp(mean), math.exp(mean + half)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.flash_cost")
    parser.add_argument("--tokens", type=int, default=160)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mode", default="ngram")
    parser.add_argument("--prompt", default=PROMPT)
    parser.add_argument("--in-process", action="store_true",
                        help="the engine in the window's process (as before it had its own)")
    args = parser.parse_args(argv)
    app, window, history = _open_window(args)
    results: dict[bool, list[tuple[float, float, int, float]]] = {True: [], False: []}
    _one_reply(window, args.prompt)  # warm-up: caches, auto's timing, first layout
    for repeat in range(args.repeats):
        # ABBA order: whatever the second reply of a pair gains or loses (the first one's views
        # being deleted meanwhile, a warmer cache) falls on both settings alike.
        for flash in ((True, False) if repeat % 2 == 0 else (False, True)):
            window.chat.set_flash(flash)
            window.session.new_conversation()
            results[flash].append(_one_reply(window, args.prompt))
    _print_results(results, args.in_process)
    window.close()
    window.shutdown()
    history.close()
    app.processEvents()
    return 0


def _open_window(args: argparse.Namespace):
    """(the application, the real window offscreen with the bundled model loaded, its history
    in memory)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from draftlight.paths import bundled_model_path
    from draftlight.settings import Settings
    from draftlight.store.history import History
    from draftlight.ui.chat.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    settings = Settings(target_path=str(bundled_model_path()), max_tokens=args.tokens,
                        mode=args.mode, temperature=0.0)
    history = History(":memory:")
    window = MainWindow(settings, history, persist_settings=False,
                        factory=in_process_factory() if args.in_process else None)
    window.show()
    loop = QEventLoop()
    window.model_ready.connect(loop.quit)
    if not window.ready:
        loop.exec()
    return app, window, history


def _print_results(results: dict[bool, list[tuple[float, float, int, float]]],
                   in_process: bool) -> None:
    """Each setting's medians, then the ratio of paired replies' speeds with its interval."""
    for flash in (True, False):
        rates = [r for r, _, _, _ in results[flash]]
        cpus = [c for _, c, _, _ in results[flash]]
        frames = [f for _, _, f, _ in results[flash]]
        stalls = [s for _, _, _, s in results[flash]]
        print(f"flash {'on ' if flash else 'off'}: {statistics.median(rates):6.1f} tok/s "
              f"(runs {', '.join(f'{r:.1f}' for r in rates)}), GUI-thread CPU "
              f"{statistics.median(cpus):.3f} s per reply, {statistics.median(frames):.0f} "
              f"flash frames, longest GUI stall {1000 * max(stalls):.0f} ms")
    ratios = [on[0] / off[0] for on, off in zip(results[True], results[False]) if off[0]]
    print(f"engine: {'in the window' if in_process else 'in its own process'}")
    if ratios:
        low, mid, high = ratio_interval(ratios)
        print(f"ratio on/off: {mid:.3f} (95% interval {low:.3f}–{high:.3f} over "
              f"{len(ratios)} pairs; target: within 2%)")
    else:
        print("no speed measured")


if __name__ == "__main__":
    sys.exit(main())
