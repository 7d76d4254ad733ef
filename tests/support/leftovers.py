"""Processes a test module leaves running: found after each module, named, and stopped.

A llama-server, rpc-server or `draftlight serve` that outlives its test keeps its threads and
memory for the rest of the run. On two cores, a leftover that spins (llama.cpp's threads wait
for work busily) slows every later test that times a model or waits on one; a window test that
waits for a reply then times out far from the test that caused it. So after each module the
suite waits briefly for this process's children to end, stops the ones that do not, and lists
them at the end of the run (Linux: read from /proc; elsewhere nothing is checked)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

found: list[str] = []  # "module: pid command line" of each process stopped
# The app's own helpers, one per process for its whole life, idle between requests
# (draftlight.bounded_process): started by whichever module first needed one, not left over.
OWN_HELPERS = ("-m draftlight.engine.text.template_child", "-m draftlight.store.document_child")


def descendants(root: int | None = None) -> dict[int, str]:
    """pid -> command line of every live process below `root` (this one by default)."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat[stat.rindex(")") + 2:].split()[1])
            state = stat[stat.rindex(")") + 2]
            if state == "Z":  # already ended, not yet reaped
                continue
            parents[int(entry.name)] = parent
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(
                b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
    below, frontier = {}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in below:
                below[child] = commands.get(child, "")
                frontier.append(child)
    return below


def stop_leftovers(module: str, before: set[int], grace: float = 5.0) -> None:
    """Processes below this one that were not there before the module ran, and still run
    `grace` seconds after it ended: killed, and noted in `found`."""
    if not Path("/proc/self/stat").exists():
        return
    deadline = time.monotonic() + grace
    while True:
        left = {pid: cmd for pid, cmd in descendants().items()
                if pid not in before and not any(h in cmd for h in OWN_HELPERS)}
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    for pid, command in left.items():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        found.append(f"{module}: {pid} {command[:160]}")
