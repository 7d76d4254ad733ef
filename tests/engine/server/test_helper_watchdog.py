"""Where there is no parent-death signal (macOS, Windows), a helper the app started (llama-server,
rpc-server) is stopped by a watchdog process when the app dies, even by SIGKILL. Checked here on
Linux by taking the other systems' path: the app's sys.platform says darwin."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil

APP = """
import sys, time
import psutil  # noqa: F401 - before the platform changes: it loads its Linux part
from draftlight.engine.server.process import popen_tied
sys.platform = "darwin"  # as on macOS: popen_tied has no death signal to ask for
helper = popen_tied([sys.executable, "-c", "import time; time.sleep(120)"])
print(helper.pid, flush=True)
time.sleep(120)
"""


def test_a_helper_stops_when_the_app_is_killed_without_a_death_signal():
    app = subprocess.Popen([sys.executable, "-P", "-c", APP], stdout=subprocess.PIPE, text=True)
    helper = None
    try:
        helper = psutil.Process(int(app.stdout.readline()))
        watchdogs = [p for p in psutil.Process(app.pid).children() if p.pid != helper.pid]
        app.kill()
        app.wait(timeout=10)
        _, alive = psutil.wait_procs([helper, *watchdogs], timeout=15)
        assert not alive, f"still running after the app died: {alive}"
        assert watchdogs  # the helper was stopped by the watchdog, which ended too
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        if helper is not None and helper.is_running():
            helper.kill()


GROUP_APP = """
import subprocess, sys, time
import psutil  # noqa: F401
from draftlight.lifetimes import popen_tied
sys.platform = "darwin"
# as cmake starts make and the compilers: a helper with a child of its own
helper = popen_tied([sys.executable, "-c",
                     "import subprocess, sys, time; "
                     "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
                     "print(c.pid, flush=True); time.sleep(120)"], stdout=subprocess.PIPE, text=True)
print(helper.pid, helper.stdout.readline().strip(), flush=True)
time.sleep(120)
"""


def test_what_a_helper_started_stops_with_it_when_the_app_is_killed():
    """A build's cmake starts make and compilers: on macOS and Windows the watchdog stops
    those too (before, it killed the helper alone and its children ran on)."""
    app = subprocess.Popen([sys.executable, "-P", "-c", GROUP_APP], stdout=subprocess.PIPE,
                           text=True)
    started = []
    try:
        started = [psutil.Process(int(pid)) for pid in app.stdout.readline().split()]
        app.kill()
        app.wait(timeout=10)
        _, alive = psutil.wait_procs(started, timeout=15)
        assert not alive, f"still running after the app died: {alive}"
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        for process in started:
            if process.is_running():
                process.kill()


def test_a_pid_reused_by_another_process_counts_as_the_app_gone():
    """The frozen app's hidden command: the app is named by pid and start time, so a pid that
    now belongs to another process (this one, started at another time) is not the app."""
    from draftlight.cli import main
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        started = psutil.Process(helper.pid).create_time()
        assert main(["_watchdog", str(os.getpid()), "1.0", str(helper.pid), repr(started)]) == 0
        assert helper.wait(timeout=10) != 0  # killed
    finally:
        if helper.poll() is None:
            helper.kill()
            helper.wait()
