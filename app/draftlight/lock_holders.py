"""Who holds a lock file, for the line that says why a command waits or gave up waiting.
Imports nothing of the app.

On Linux the kernel lists every flock (filelock's kind) in /proc/locks, with the holder's pid
and the locked file's device and inode; elsewhere, or for a holder in another PID namespace
(shown as pid 0 or -1), nothing is known but that some process holds it.
"""

from __future__ import annotations

import os
from pathlib import Path

LOCKS = Path("/proc/locks")
MAX_COMMAND = 100  # characters of the holder's command line shown


def lock_holder(lock_file: Path) -> str:
    """"process 4242 (draftlight models convert x.gguf --type Q8_0)", or "" when the holder
    cannot be told."""
    try:
        status = os.stat(lock_file)
        listed = LOCKS.read_text(encoding="ascii", errors="replace")
    except (OSError, ValueError):
        return ""
    inode = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    for line in listed.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 4242 00:2d:1234 0 EOF"; a waiter's reads "1: -> FLOCK …"
        fields = line.split()
        if len(fields) >= 6 and fields[1] != "->" and fields[5] == inode:
            return _process(fields[4])
    return ""


def _process(pid: str) -> str:
    if not pid.isdigit() or int(pid) <= 0:
        return ""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").replace(b"\0", b" ")
    except OSError:
        return f"process {pid}"
    text = command.decode("utf-8", "replace")
    text = text if len(text) <= MAX_COMMAND else text[:MAX_COMMAND - 1] + "…"
    return f"process {pid} ({text})" if text else f"process {pid}"
