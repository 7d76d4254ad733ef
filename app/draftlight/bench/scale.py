"""`draftlight bench scale [--conversations 5000] [--seed 0] [--long 2000,8000,30000]`: does the
app stay instant after a year of use?

Two homes are made up from the seed (scale_history.py): one of 10 conversations and one of
--conversations (about 40 messages each, with branches, stored runs and figures, attached
files' texts), each with the same long conversations. In each, a process of its own
(scale_child.py) opens the real window offscreen with the real engine on the bundled model and
times: start to first paint and to ready, the conversation list's first screen, search (a word
in one conversation, a word in most), opening the longest conversation with its highlights,
switching a branch, two new turns in each long conversation (the second should read only
itself: the prompt cache kept across turns), one more after the window is closed and opened
again (the cache kept across a restart), the same two turns asked of `draftlight serve` (in the
large home only), an n-gram step with auto's choice at 1,000 and 30,000 tokens, and memory. Each figure is printed against its value at 10 conversations, then
the goals, and last "K of M goals met" (each missed goal named).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

SMALL = 10  # the home every figure is compared with
NEW_MESSAGE_TOKENS = 64  # a new turn's message and its template, at most


def add_scale_parser(subcommands) -> None:
    scale = subcommands.add_parser(
        "scale", help="the app after a year of use: list, search, open, new turns, memory",
        description=__doc__.split("\n\n")[1].replace("\n", " "))
    scale.add_argument("--conversations", type=int, default=5000,
                       help="conversations in the large home (default 5000)")
    scale.add_argument("--seed", type=int, default=0, help="the made-up history's seed")
    scale.add_argument("--long", default="2000,8000,30000",
                       help="long conversations' lengths in tokens (default 2000,8000,30000)")
    scale.add_argument("--no-turns", action="store_true",
                       help="leave out the new turns (the engine's reads of long conversations)")
    scale.set_defaults(run=run_scale)


def run_scale(args: argparse.Namespace) -> int:
    from draftlight.user_messages import UserError

    try:
        long = [int(part) for part in args.long.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"--long: whole numbers, comma-separated, not {args.long!r}")
    if args.conversations < SMALL or any(n < 100 for n in long):
        raise UserError(f"--conversations must be at least {SMALL}, each --long at least 100")
    figures = {}
    for size in (SMALL, args.conversations):
        print(f"measuring a home of {size} conversations…", flush=True)
        figures[size] = measure_home(size, args.seed, long, not args.no_turns,
                                     serve=size != SMALL and not args.no_turns)
    small, large = figures[SMALL], figures[args.conversations]
    print(f"\n{large['conversations']} conversations, {large['messages']} messages "
          f"(built in {large['build_s']:.0f} s), against {SMALL}:\n")
    print(table(small, large))
    met, goals = judge(small, large)
    print()
    for line in goals:
        print(line)
    print(f"\n{met} of {len(goals)} goals met")
    return 0


def measure_home(size: int, seed: int, long: list[int], turns: bool, serve: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="draftlight-scale-") as home:
        command = [sys.executable, "-P", "-m", "draftlight.bench.scale_child", "--home", home,
                   "--conversations", str(size), "--seed", str(seed),
                   "--long", ",".join(map(str, long))] + (["--turns"] if turns else []) + (
                       ["--serve"] if serve else [])
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0 or not done.stdout.strip():
        tail = (done.stderr or "").strip().splitlines()[-5:]
        raise SystemExit(f"bench scale: the home of {size} conversations failed "
                         f"(exit {done.returncode}):\n  " + "\n  ".join(tail))
    return json.loads(done.stdout.strip().splitlines()[-1])


ROWS = [("start to first paint", "first_paint_s", "s"), ("start to ready", "ready_s", "s"),
        ("conversation list, first screen", "list_s", "ms"),
        ("search, a word in one conversation", "search_rare_s", "ms"),
        ("search, a word in most (all results)", "search_common_s", "ms"),
        ("open the longest conversation", "open_longest_s", "ms"),
        ("switch a branch", "switch_branch_s", "ms"),
        ("memory with the window open", "rss_window_mb", "MB"),
        ("history file", "history_mb", "MB")]


def table(small: dict, large: dict) -> str:
    lines = [f"| figure | {SMALL} conversations | {large['conversations']} | ratio |",
             "|---|---|---|---|"]

    def cell(value, unit):
        if value is None:
            return "–"
        return f"{value * 1000:.1f} ms" if unit == "ms" else f"{value:.2f} {unit}"

    def row(name, a, b, unit):
        ratio = f"{b / a:.2f}x" if a and b is not None else "–"
        lines.append(f"| {name} | {cell(a, unit)} | {cell(b, unit)} | {ratio} |")

    for name, key, unit in ROWS:
        row(name, small.get(key), large.get(key), unit)
    steps = large["ngram_step_us"]
    lines.append(f"| n-gram step with auto's choice, 1,000 → 30,000 tokens | "
                 f"{steps['1000']:.0f} µs | {steps['30000']:.0f} µs | "
                 f"{steps['30000'] / steps['1000']:.2f}x |")
    if "8000" in steps:  # past a few thousand tokens a lookup compares its most occurrences
        lines.append(f"| n-gram step, 8,000 → 30,000 tokens | {steps['8000']:.0f} µs | "
                     f"{steps['30000']:.0f} µs | {steps['30000'] / steps['8000']:.2f}x |")
    for length, turn in sorted(large.get("turns", {}).items(), key=lambda kv: int(kv[0])):
        if "error" in turn:
            lines.append(f"| new turn, {length}-token conversation | – | {turn['error']} | – |")
            continue
        cold, next_ = turn["cold"], turn["next"]
        lines.append(f"| new turn, {length}-token conversation: tokens read, first → next "
                     f"| {cold['prompt_tokens'] - cold['reused']} ({cold['prefill_s']:.2f} s) "
                     f"| {next_['prompt_tokens'] - next_['reused']} "
                     f"({next_['prefill_s']:.2f} s) | – |")
    longest = max(large.get("turns", {0: None}), key=int)
    restart = large.get("restart")
    if restart and "error" not in restart:
        lines.append(f"| after a restart, {longest}-token conversation: tokens read (kept "
                     f"file {large['kept_mb']:.0f} MB) | – | {_read(restart)} "
                     f"({restart['prefill_s']:.2f} s) | – |")
    serve = large.get("serve")
    if serve and "error" not in serve:
        lines.append(f"| `draftlight serve`, {longest}-token conversation: tokens read, first "
                     f"→ next | – | {_read(serve['cold'])} ({serve['cold']['seconds']:.1f} s) → "
                     f"{_read(serve['next'])} ({serve['next']['seconds']:.1f} s) | – |")
    return "\n".join(lines)


def _read(turn: dict) -> int:
    return turn["prompt_tokens"] - turn["reused"]


def judge(small: dict, large: dict) -> tuple[int, list[str]]:
    """Each goal of the issue, met or not, with its figure."""
    n = large["conversations"]
    goals: list[tuple[bool, str]] = []

    def goal(ok: bool, text: str) -> None:
        goals.append((ok, ("met:    " if ok else "missed: ") + text))

    ready, ready0 = large.get("ready_s"), small.get("ready_s")
    goal(bool(ready and ready0 and ready <= 1.2 * ready0),
         f"start to ready ≤ 1.2x a home of {SMALL}: "
         + (f"{ready / ready0:.2f}x" if ready and ready0 else "never ready"))
    goal(large["search_rare_s"] <= 0.1 and large["search_common_s"] <= 0.1,
         f"search's results ≤ 100 ms at {n}: {large['search_rare_s'] * 1000:.0f} ms (one "
         f"conversation), {large['search_common_s'] * 1000:.0f} ms (most)")
    goal(large["list_s"] <= 0.05,
         f"the list's first screen ≤ 50 ms at {n}: {large['list_s'] * 1000:.0f} ms")
    if "open_longest_s" in large:
        goal(large["open_longest_s"] <= 0.3,
             f"opening the longest conversation ≤ 300 ms: "
             f"{large['open_longest_s'] * 1000:.0f} ms")
    _reading_goals(large, goal)
    steps = large["ngram_step_us"]
    goal(steps["30000"] <= 1.1 * steps["1000"],
         f"an n-gram step at 30,000 tokens ≤ 1.1x one at 1,000: "
         f"{steps['30000'] / steps['1000']:.2f}x"
         + (f" (8,000 → 30,000: {steps['30000'] / steps['8000']:.2f}x; a lookup compares at "
            f"most 32 earlier occurrences, which a longer context has more of up to that cap)"
            if "8000" in steps else ""))
    memory, memory0 = large["rss_window_mb"], small["rss_window_mb"]
    goal(memory <= 1.1 * memory0,
         f"memory grows with what is shown, not the history (≤ 1.1x a home of {SMALL}): "
         f"{memory / memory0:.2f}x")
    return sum(ok for ok, _ in goals), [text for _, text in goals]


def _reading_goals(large: dict, goal) -> None:
    """The goals of reading only the new message: in each long conversation, after a restart
    and through `draftlight serve`."""
    for length, turn in sorted(large.get("turns", {}).items(), key=lambda kv: int(kv[0])):
        read = (turn["next"]["prompt_tokens"] - turn["next"]["reused"]
                if "next" in turn else None)
        goal(read is not None and read <= NEW_MESSAGE_TOKENS,
             f"a new turn in the {length}-token conversation reads only the new message "
             f"(≤ {NEW_MESSAGE_TOKENS} tokens): "
             + (f"{read} tokens" if read is not None else turn.get("error", "no reply")))
    if "restart" in large:
        restart = large["restart"]
        read = _read(restart) if "error" not in restart else None
        goal(read is not None and read <= NEW_MESSAGE_TOKENS,
             f"after a restart a new turn reads only the new message (the cache kept, "
             f"{large.get('kept_mb', 0):.0f} MB): "
             + (f"{read} tokens" if read is not None else restart["error"]))
    if "serve" in large:
        serve = large["serve"]
        read = _read(serve["next"]) if "error" not in serve else None
        goal(read is not None and read <= NEW_MESSAGE_TOKENS,
             "`draftlight serve` reads only what changed since the client's last request: "
             + (f"{read} tokens" if read is not None else serve["error"]))
