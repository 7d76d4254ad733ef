"""Files that two Draftlight processes may write at once (the window, `chat` and `serve` on one
home), and work that must happen once between them.

    write_atomically(path, text)          # a temp file of this write's own, then os.replace
    known = read_json_object(path)        # {} for a missing, half-written or foreign file
    update_json(path, change)             # read, change(dict), write: under a lock, no lost keys
    with once(lock_path(path), on_wait, should_cancel):
        ...                               # one process at a time; the others wait, told once

A reader never sees half a file: every write goes to a temp file named for this write alone
(two writers never share one, as `x.tmp` did) and replaces the file in one step. The locks are
filelock's: an OS lock on a file in a folder of this user's own (private_folders: checked
owner, type and mode, so another user cannot make it first), released by the kernel when its
holder dies, so a lock whose holder was killed is simply taken. An update waits a few seconds
for another process's lock, then says who holds it (LockBusy), never hangs. Imports nothing of
the app but its leaf modules.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from filelock import FileLock, Timeout

from draftlight.lock_holders import lock_holder
from draftlight.private_folders import own_folder

POLL_SECONDS = 0.1  # how often a waiting process asks whether to give up
# An update holds its lock for a read and a write of a small file (milliseconds): one held
# longer than this is a stuck or foreign process, said rather than waited on for ever
UPDATE_WAIT_SECONDS = 10.0


class LockBusy(OSError):
    """Another process held a lock for longer than an update waits; the message says who."""


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` in one step (raises OSError; leaves no temp file behind)."""
    path = Path(path)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb" if isinstance(data, bytes) else "w",
                       **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as stream:
            stream.write(data)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def read_json_object(path: Path) -> dict:
    """The JSON object in `path`; {} if it is missing, unreadable, half-written or not an
    object (it is then rebuilt by the next write)."""
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def lock_path(path: Path) -> Path:
    """The lock file that guards `path`: in a folder of this user's under the system's temp
    folder (made and checked when a lock is taken: private_folders.own_folder), named for
    `path`'s absolute form, so that every process writing `path` takes the same lock and
    nothing is added beside the user's files."""
    where = os.path.abspath(Path(path))
    owner = os.getuid() if hasattr(os, "getuid") else 0  # the temp folder is the user's own
    folder = Path(tempfile.gettempdir()) / f"draftlight-locks-{owner}"
    name = hashlib.sha256(where.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return folder / f"{name}.lock"


def update_json(path: Path, change: Callable[[dict], None], *, indent: int | None = None) -> None:
    """Read the object in `path`, let `change` edit it, write it back; another process's
    update in between waits, so neither loses the other's keys.

    Raises:
        LockBusy: another process held the lock for UPDATE_WAIT_SECONDS. ForeignFolder: the
            lock folder is not this user's own. OSError: the file cannot be written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = lock_path(path)
    own_folder(lock.parent)
    held = FileLock(lock)
    try:
        held.acquire(timeout=UPDATE_WAIT_SECONDS)
    except Timeout:
        holder = lock_holder(lock) or "another process"
        raise LockBusy(f"{path.name} stayed locked by {holder} for {UPDATE_WAIT_SECONDS:g} s "
                       f"(lock file {lock}); not updated") from None
    try:
        known = read_json_object(path)
        change(known)
        write_atomically(path, json.dumps(known, indent=indent))
    finally:
        held.release()


class WaitCancelled(Exception):
    """`should_cancel` said stop while another process held the lock."""


@contextmanager
def once(lock_file: Path, *, on_wait: Callable[[], None] | None = None,
         should_cancel: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """Hold `lock_file`'s lock for the block: work that one process does for all (a conversion,
    a build). Where another process holds it, `on_wait()` is called once (lock_holder says who,
    for its line), then this one waits (WaitCancelled if `should_cancel` says stop); the block
    then usually finds the work done. Raises ForeignFolder when the lock's folder is not this
    user's own."""
    lock_file = Path(lock_file)
    own_folder(lock_file.parent)
    lock = FileLock(lock_file)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if on_wait is not None:
            on_wait()
        while True:
            if should_cancel():
                raise WaitCancelled(f"stopped waiting for {lock_file.name}") from None
            try:
                lock.acquire(timeout=POLL_SECONDS)
                break
            except Timeout:
                continue
    try:
        yield
    finally:
        lock.release()
