"""Linux: the program between the app and a tied child (lifetimes.popen_tied). It asks the kernel
to signal it when the thread that started it dies, checks that the app did not die first, and
becomes the child's command.

    python -I -S tie.py PARENT_PID SIGNAL COMMAND...   (the frozen app: draftlight _tie ...)

This runs after exec, not between fork and exec (a Popen preexec_fn): there Python code runs in
a copy of a process with many threads (Qt, llama.cpp, HTTP servers), and a lock another thread
held at the fork stays held in the copy for good; a tied child's start then hung before its
command ran, and with it the app thread waiting for it. Only the standard library: it runs
without site-packages.
"""

import ctypes
import os
import sys

PR_SET_PDEATHSIG = 1


def tie_and_exec(argv: list[str]) -> int:
    """PARENT_PID SIGNAL COMMAND...: become COMMAND, which gets SIGNAL when its parent dies."""
    parent, death, command = int(argv[0]), int(argv[1]), argv[2:]
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, death)
    if os.getppid() != parent:  # the app died before the line above took effect
        return 1
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"draftlight: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(tie_and_exec(sys.argv[1:]))
