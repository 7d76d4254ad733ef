"""One home's figures for `draftlight bench scale`, in a process of its own (so its memory is
its own): the history built from a seed, then the real window offscreen on it, with the real
engine on the bundled model. Prints one JSON object of figures.

    python -m draftlight.bench.scale_child --home DIR --conversations N [--seed S]
        [--long 2000,8000,30000] [--turns]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from draftlight.modes import AUTO

TURN = "Thank you. In one sentence, what was the main point of the last answer?"
NEW_TURN_TOKENS = 32  # a new turn's reply: only its start matters here


def rss_mb() -> float:
    """This process's resident memory now, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def ngram_step_us(length: int, steps: int = 1000, seed: int = 0) -> float:
    """Microseconds per step of n-gram lookup and auto's choice at a context of `length`
    tokens of prose-like repetition, the context handed over as the engine's step does (the
    target's tokens read in place with the newest after them: speculative.StepContext); the
    best of three runs."""
    import random

    from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
    from draftlight.engine.auto.costs import BatchCosts
    from draftlight.engine.step.drafters import NgramDrafter
    from draftlight.engine.step.speculative import StepContext

    rng = random.Random(seed)
    phrases = [[rng.randrange(5000) for _ in range(rng.randint(3, 12))] for _ in range(40)]
    text: list[int] = []
    while len(text) < length + steps + 17:  # room for the last step's draft
        text += rng.choice(phrases) if rng.random() < 0.7 else [rng.randrange(32000)]
    best = float("inf")
    for _ in range(3):
        ngram = NgramDrafter()
        auto = AdaptiveDrafter(BatchCosts({1: 1.0, 2: 1.5, 4: 2.0, 8: 3.5, 16: 6.0}, 0.01),
                               [Candidate(ngram, 0.0, 16)])
        cached = text[:length - 1]  # the target's tokens
        ngram.propose(cached + [text[length - 1]], 1)  # the index of what came before
        started = time.perf_counter()
        for step in range(steps):
            context = StepContext(cached, text[length - 1 + step])  # as the step reads it
            draft = auto.propose(context, 16, None, None)
            future = text[length + step:]
            right = 0
            while right < len(draft.tokens) and draft.tokens[right] == future[right]:
                right += 1
            auto.observe(len(draft.tokens), right, future[0], 0.01, 0.0)
            cached.append(text[length - 1 + step])
        best = min(best, (time.perf_counter() - started) / steps * 1e6)
    return best


def measure(args: argparse.Namespace) -> dict:
    os.environ["DRAFTLIGHT_HOME"] = str(args.home)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from draftlight.bench.scale_history import build
    from draftlight.store.default_model import default_model_file
    from draftlight.store.history import history_path

    out: dict = {"conversations": args.conversations}
    path = history_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    built = build(path, args.conversations, args.seed, tuple(args.long))
    out.update(messages=built.messages, build_s=built.seconds,
               history_mb=path.stat().st_size / 1e6)
    out["rss_before_window_mb"] = rss_mb()

    from PySide6.QtWidgets import QApplication

    from draftlight.settings import load_settings

    app = QApplication.instance() or QApplication([])
    settings = load_settings()[0]
    settings.max_tokens = NEW_TURN_TOKENS
    started = time.perf_counter()
    window = open_window(app, settings, path)
    out["first_paint_s"] = time.perf_counter() - started
    ready = wait(app, lambda: window.ready, 300)
    out["ready_s"] = time.perf_counter() - started if ready else None
    try:
        out.update(window_figures(app, window, path, built))
        # the window answers with the bundled file while it makes the faster copy, then loads
        # that: the turns are timed on the copy (a swap between two turns reads all again)
        out["converted"] = wait(app, lambda: window.ready and Path(
            window.models.target_path).name == default_model_file().name, 900)
        if args.turns:
            out["turns"] = {str(tokens): new_turns(app, window, conversation)
                            for tokens, conversation in sorted(built.long.items())}
        out["ngram_step_us"] = {str(n): ngram_step_us(n) for n in (1_000, 8_000, 30_000)}
        out["rss_end_mb"] = rss_mb()
        if args.turns and built.long:  # the last turns' conversation: the longest
            window = after_restart(app, window, settings, path, out, built.long[max(built.long)])
        if args.serve and built.long:
            out["serve"] = serve_figures(window, path, built.long[max(built.long)])
    finally:
        window.close()
        app.processEvents()
    return out


def open_window(app, settings, path: Path):
    from draftlight.store.history import History
    from draftlight.ui.chat.main_window import MainWindow

    window = MainWindow(settings, History(path, check_in_background=True),
                        persist_settings=False)
    window.resize(1366, 768)
    window.show()
    app.processEvents()
    return window


def after_restart(app, window, settings, path: Path, out: dict, conversation: int):
    """The window closed (its engine keeps the prompt's cache: engine/llama/kept_prompt.py) and
    opened again: one new turn in the conversation of the last turns. Returns the new window."""
    from draftlight import paths
    from draftlight.engine.llama import kept_prompt

    folder = paths.cache_dir() / kept_prompt.FOLDER
    before = {f: f.stat().st_mtime_ns for f in folder.glob("*" + kept_prompt.STATE)}
    window.close()
    app.processEvents()
    # the file this close wrote (the folder also holds the bundled file's, kept when the
    # window moved to the faster copy); partial files (a write cut short) are not kept
    written = [f for f in folder.glob("*" + kept_prompt.STATE)
               if before.get(f) != f.stat().st_mtime_ns]
    out["kept_mb"] = sum(f.stat().st_size for f in written) / 1e6
    window = open_window(app, settings, path)
    if not wait(app, lambda: window.ready, 300):
        out["restart"] = {"error": "the window was never ready again"}
        return window
    out["restart"] = new_turns(app, window, conversation, turns=1)["cold"]
    return window


def serve_figures(window, path: Path, conversation: int) -> dict:
    """`draftlight serve` on the same model and context, asked twice about the conversation."""
    from draftlight.bench.scale_serve import serve_turns
    from draftlight.store.default_model import default_model_file
    from draftlight.store.history import History

    history = History(path)
    try:
        messages = [{"role": m.role, "content": m.text} for m in history.messages(conversation)]
    finally:
        history.close()
    n_ctx = window.models.n_ctx
    try:
        return serve_turns(default_model_file(), n_ctx, newest_that_fit(messages, n_ctx), TURN,
                           NEW_TURN_TOKENS)
    except (RuntimeError, OSError, SystemExit) as exc:
        return {"error": str(exc)}


def best_of(times: int, action) -> float:
    """The shortest of `times` runs of `action`, in seconds."""
    best = float("inf")
    for _ in range(times):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def window_figures(app, window, path: Path, built) -> dict:
    """The list, search, opening the longest conversation, a branch switch, memory."""
    from draftlight.bench.scale_history import COMMON, RARE
    from draftlight.store.history_search import search
    from draftlight.ui.chat import branches

    session = window.session
    out = {"list_s": best_of(3, window.conversations.refresh),
           "search_rare_s": best_of(3, lambda: search(path, RARE)),
           "search_common_s": best_of(3, lambda: search(path, COMMON)),
           "search_common_hits": len(search(path, COMMON))}
    if built.long:
        longest = built.long[max(built.long)]
        out["open_longest_s"] = best_of(2, lambda: (session.open_conversation(longest),
                                                    app.processEvents()))
        out["open_longest_messages"] = len(session.chat.messages)
    if built.branched:
        session.open_conversation(built.branched)
        app.processEvents()
        last = session.chat.messages[-1]
        out["switch_branch_s"] = best_of(1, lambda: (branches.switch(session, last, -1),
                                                     app.processEvents()))
    out["rss_window_mb"] = rss_mb()
    return out


def newest_that_fit(messages: list[dict], n_ctx: int) -> list[dict]:
    """The newest messages, from a question on, that fit the context with room to spare: what
    a client sends (serve answers a longer conversation with context_length_exceeded)."""
    from draftlight.bench.scale_history import CHARS_PER_TOKEN
    budget = 0.75 * (n_ctx - 2 * NEW_TURN_TOKENS) * CHARS_PER_TOKEN
    start, chars = len(messages), 0
    while start > 0 and chars + len(messages[start - 1]["content"]) <= budget:
        start -= 1
        chars += len(messages[start]["content"])
    while start < len(messages) and messages[start]["role"] != "user":
        start += 1
    return messages[start:]


def wait(app, condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        time.sleep(0.01)
    return True


def new_turns(app, window, conversation: int, turns: int = 2) -> dict:
    """Two messages sent in a long conversation: the first reads the conversation (cold), the
    second should read only itself (the prompt cache kept across turns)."""
    session = window.session
    session.open_conversation(conversation)
    app.processEvents()
    figures = []
    for _ in range(turns):
        done: list = []
        session.reply_finished.connect(done.append)
        sent = session.send(TURN, AUTO)
        if not sent or not wait(app, lambda: bool(done) or not session.streaming, 900):
            return {"error": "the reply did not finish"}
        wait(app, lambda: not session.streaming, 60)
        session.reply_finished.disconnect(done.append)
        view = done[0] if done else session.chat.messages[-1]
        stats = view.figures.stats if view.figures is not None else None
        if stats is None:
            return {"error": view.status or "no figures"}
        figures.append({"prompt_tokens": stats.prompt_tokens,
                        "reused": stats.reused_prompt_tokens,
                        "prefill_s": stats.prefill_seconds})
    return {"cold": figures[0], "next": figures[-1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.scale_child")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--conversations", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--long", type=lambda t: [int(x) for x in t.split(",") if x], default=[])
    parser.add_argument("--turns", action="store_true")
    parser.add_argument("--serve", action="store_true")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
