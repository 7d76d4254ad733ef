"""Stops a helper process (llama-server, rpc-server) when the app that started it dies, on
systems with no parent-death signal (macOS, Windows; Linux has PR_SET_PDEATHSIG: process.py).

    start_watchdog(helper)   # in the app, right after starting the helper
    # a small process polls the app; once the app is gone, however it ended, it kills the helper

The watchdog names both processes by pid and start time, so a pid the system hands to another
process after one of them ended is never mistaken for it. It ends by itself once the helper has
ended. It runs `python -P -m draftlight.watchdog`, or the frozen app's hidden
command; it loads no model code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil

CHILD_COMMAND = "_watchdog"  # hidden `draftlight` command, for the frozen app
POLL_SECONDS = 0.5


def start_watchdog(helper: subprocess.Popen) -> None:
    """Start a watchdog that kills `helper` when this process dies. Nothing to keep: it ends by
    itself when the helper has ended."""
    app = psutil.Process()
    try:
        started = psutil.Process(helper.pid).create_time()
    except psutil.Error:  # the helper has already ended
        return
    args = [str(app.pid), repr(app.create_time()), str(helper.pid), repr(started)]
    command = ([sys.executable, CHILD_COMMAND, *args] if getattr(sys, "frozen", False)
               else [sys.executable, "-P", "-m", "draftlight.watchdog", *args])
    # Out of the terminal's process group: a Ctrl-C there is for the app, which stops the helper;
    # on Windows without a console window of its own either.
    detached = ({"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW}
                if sys.platform == "win32" else {"start_new_session": True})
    subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, **detached)


def _alive(pid: int, started: float) -> psutil.Process | None:
    """The process `pid` if it is still the one that started at `started` and has not ended
    (a zombie has ended: its parent has yet to collect it), else None."""
    try:
        process = psutil.Process(pid)
        if (abs(process.create_time() - started) < 0.01
                and process.status() != psutil.STATUS_ZOMBIE):
            return process
    except psutil.Error:
        pass
    return None


def watch(app_pid: int, app_started: float, helper_pid: int, helper_started: float) -> int:
    """Until the helper ends: once the app is gone, kill the helper."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is for the app
    while (helper := _alive(helper_pid, helper_started)) is not None:
        if _alive(app_pid, app_started) is None:
            _kill_tree(helper)
            return 0
        time.sleep(POLL_SECONDS)
    return 0


def _kill_tree(helper: psutil.Process) -> None:
    """Kill the helper and every process it started (cmake's make and compilers, say): those
    are listed before the helper dies, as they are then no longer its children; on macOS its
    process group (popen_tied starts it in a session of its own) goes too."""
    try:
        descendants = helper.children(recursive=True)
    except psutil.Error:
        descendants = []
    for process in (helper, *descendants):
        try:
            process.kill()
        except psutil.Error:  # it ended meanwhile
            pass
    if hasattr(os, "killpg"):
        try:
            os.killpg(helper.pid, signal.SIGKILL)  # its group: what started after the list
        except OSError:  # no such group left
            pass


def main(argv: list[str]) -> int:
    app_pid, app_started, helper_pid, helper_started = argv[:4]
    return watch(int(app_pid), float(app_started), int(helper_pid), float(helper_started))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
