"""Child processes and half-written files tied to the app's life, even when it is SIGKILLed.

    process = popen_tied(command)                     # dies with the app (Linux: even SIGKILL)
    process = popen_for_life(command)                 # ... started from any thread, even one
                                                      # that ends before the child should
    process = popen_tied(command, whole_group=True)   # ... with every process it started
    with owned(scratch):                              # marks scratch as this process's
        ...                                           # make it; it is removed afterwards
    remove_abandoned(folder, "build-*")               # at start: what killed apps left there

A killed app runs no cleanup of its own. Its children are stopped by the kernel: Linux sends them
a signal when the app dies (PR_SET_PDEATHSIG); elsewhere a watchdog process (watchdog.py) does. What
they were writing (a model being converted, a build folder: GBs) is marked beforehand with a file
naming its owner, the app's pid and start time, so the next start removes the scratch whose
owner is gone and keeps what another running Draftlight is still making.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

OWNER = ".owner-"  # scratch name + OWNER + "PID-STARTED" (start time, hundredths of a second)
# The shell between the app and a whole group: the kernel signals only the app's direct child,
# so that child (sh) turns the signal into a SIGKILL of its process group, which cmake's make and
# compilers stay in; otherwise it waits for the command and exits with its status.
_GROUP_GUARD = 'trap "kill -KILL 0" TERM; "$@" & wait $!'


def popen_tied(command: list[str], *, whole_group: bool = False, **kwargs) -> subprocess.Popen:
    """Popen a child that dies with the thread starting it, on Linux even by SIGKILL; in its
    own process group, so a Ctrl-C in the terminal reaches the app, which stops it.
    `whole_group`: the processes the child starts die with it too (Linux; elsewhere stop them
    with os.killpg(process.pid, …))."""
    if not sys.platform.startswith("linux"):  # no death signal: a watchdog process stops it
        from draftlight.watchdog import start_watchdog
        child = subprocess.Popen(command, start_new_session=True, **kwargs)
        start_watchdog(child)
        return child
    death = signal.SIGKILL
    if whole_group:
        command, death = ["/bin/sh", "-c", _GROUP_GUARD, "sh", *command], signal.SIGTERM
    _check_runnable(command[0])  # as Popen would: the shim in between cannot raise it here
    # The death signal is asked for after exec, by draftlight/tie.py, not by a preexec_fn
    # between fork and exec, where a lock another thread held stays held (tie.py says more).
    # Its own session: a Ctrl-C in the terminal goes to the app, which stops the child.
    tie = ([sys.executable, TIE_CHILD] if getattr(sys, "frozen", False)
           else [sys.executable, "-I", "-S", str(Path(__file__).with_name("tie.py"))])
    return subprocess.Popen([*tie, str(os.getpid()), str(int(death)), *command],
                            start_new_session=True, **kwargs)


TIE_CHILD = "_tie"  # hidden `draftlight` command: the frozen app runs tie.py this way
_starter = None  # the thread popen_for_life starts children on (one, for the app's life)


def popen_for_life(command: list[str], **kwargs) -> subprocess.Popen:
    """popen_tied, from a thread that lives as long as the app: a child that any thread may
    come to start (the engine's host, started again by whichever thread asked it next: a
    measuring thread that ends seconds later) dies with the app, not with that thread."""
    global _starter
    if _starter is None:
        from concurrent.futures import ThreadPoolExecutor
        _starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="child starter")
    return _starter.submit(popen_tied, command, **kwargs).result()


def _check_runnable(program: str) -> None:
    """Raise FileNotFoundError or PermissionError as Popen does for a program it cannot run."""
    found = program if os.sep in program else shutil.which(program, mode=os.F_OK)
    if found is None or not os.path.isfile(found):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if not os.access(found, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)


@contextmanager
def owned(path: Path) -> Iterator[Path]:
    """Mark `path` (a file or folder about to be made) as this process's for as long as the
    block runs; afterwards remove `path` if it is still there, then the mark."""
    me = psutil.Process()
    mark = path.with_name(f"{path.name}{OWNER}{me.pid}-{round(me.create_time() * 100)}")
    mark.touch()  # before `path` exists: a scratch without a mark is never taken for abandoned
    try:
        yield path
    finally:
        _remove(path)
        mark.unlink(missing_ok=True)


def remove_abandoned(folder: Path, pattern: str) -> list[Path]:
    """Remove the scratch in `folder` named like `pattern` whose owner is no longer running
    (and its mark); the paths removed. Scratch without a mark, or whose owner runs, is kept."""
    try:
        marks = [p for p in folder.iterdir() if OWNER in p.name]
    except OSError:
        return []
    removed = []
    for mark in marks:
        name, _, owner = mark.name.rpartition(OWNER)
        if not fnmatch.fnmatchcase(name, pattern) or _running(owner):
            continue
        _remove(folder / name)
        mark.unlink(missing_ok=True)
        removed.append(folder / name)
    return removed


def _running(owner: str) -> bool:
    """Whether the process a mark names ("PID-STARTED") still runs: the same pid started at the
    same time (a pid is reused by later processes). An unreadable mark counts as running."""
    try:
        pid, started = (int(part) for part in owner.split("-"))
    except ValueError:
        return True
    try:
        return abs(round(psutil.Process(pid).create_time() * 100) - started) <= 1
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:  # not ours to look at: someone else's, so not abandoned by us
        return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass  # Windows: still open by a child that has not quite ended; the next start
