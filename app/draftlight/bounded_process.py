"""Untrusted work in a child process whose time and memory are bounded from outside it.

A chat template is code from a model file, and an attached PDF or Word file is parsed by
libraries written for well-meaning files. One call of either can run for minutes inside C code
(`sum` of a million lists, a quadratic filter) or grow by gigabytes in one step (`|string` of a
list of long texts), and no check made between the lines of Python stops it: the interpreter
runs no tracer, budget or Ctrl-C until the call returns. So such work runs in a child:

    child = BoundedChild("draftlight.engine.text.template_child", seconds=5)
    answer = child.ask({"source": ..., ...})   # a dict; ChildFailed when it ran out

The parent waits `seconds` for each answer and then kills the child (SIGKILL), as it does when
the wait is interrupted (Ctrl-C); the next request starts a new child. The child
(`python -P -m MODULE`, whose main() calls `serve`) limits its own address space to what it
had at its start plus `memory` bytes, so a step that would grow past that fails in the child
(MemoryError, answered as such) and never in the app. It reads one JSON line per request and
writes one per answer; it ends when its input closes (the app went), and the CPU time of each
request is limited by the kernel too (RLIMIT_CPU), so a child stranded mid-request by a killed
app ends within seconds. It is started in a session of its own: a Ctrl-C in the terminal
reaches the app, which stops it.

Where the kernel offers no such limits (Windows), the deadline still holds.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

try:
    import resource
except ImportError:  # Windows
    resource = None

CHILD_COMMAND = "_bounded-child"  # hidden `draftlight` command: the frozen app's child
READY = b'{"ready": true}\n'
START_SECONDS = 60.0  # a child's own start (its imports), on a machine busy with a model load
_SLICE_SECONDS = 0.1


class ChildFailed(Exception):
    """The child gave no answer: it ran past its time, ended without one (killed for its
    memory or CPU, or crashed), or could not start. `reason` is "time", "ended" or "start";
    the message is one line."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class BoundedChild:
    """One child process running `module`, asked one request at a time (any thread)."""

    def __init__(self, module: str, *, seconds: float, memory: int = 768 << 20) -> None:
        self.module = module
        self.seconds = seconds  # the longest wait for one answer
        self.memory = memory  # bytes the child may grow by past its size at its start
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._ready = False  # the running child said it is ready
        self._last_end: int | None = None  # the exit status of the child stopped last
        self._answers: queue.Queue[bytes | None] = queue.Queue()

    def ask(self, request: dict, *, seconds: float | None = None) -> dict:
        """The child's answer to `request` (both JSON objects). `seconds`, if given, waits
        less than the child's own limit: what is left of a larger budget (serve's per request).

        Raises:
            ChildFailed: no answer within `seconds` (the child is killed), the child ended
                without one (out of memory, a crash, interrupt()), or it could not be started."""
        wait = self.seconds if seconds is None else max(0.0, min(seconds, self.seconds))
        line = json.dumps(request).encode("ascii") + b"\n"  # ASCII: lone surrogates survive
        with self._lock:
            process = self._running()
            try:
                try:
                    process.stdin.write(line)
                    process.stdin.flush()
                except OSError:  # it ended while idle (killed from outside): once more
                    self._stop()
                    process = self._running()
                    process.stdin.write(line)
                    process.stdin.flush()
                answer = _waited(self._answers, wait)
            except queue.Empty:
                self._stop()
                raise ChildFailed("time", f"it ran longer than {wait:g} s") from None
            except BaseException:  # Ctrl-C, or a broken pipe: what it was doing is abandoned
                self._stop()
                raise
            if answer is None:
                raise ChildFailed("ended", f"its process ended ({self._ending()})")
            answer = json.loads(answer)
            if "failed" in answer:  # the child ends after saying so: the next one is new
                self._stop()
            return answer

    def start(self) -> None:
        """Start the child now, so that the first request does not wait for its imports."""
        with self._lock:
            if self._process is None:
                self._spawn()

    def interrupt(self) -> None:
        """Kill the child now, from any thread and without waiting: the request it works on
        ends at once as "ended" (its asker is gone), and the next request starts a new child."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()

    def close(self) -> None:
        """Stop the child, at once: a request another thread waits on ends as "ended" (the
        app is quitting, maybe on Ctrl-C, and never waits for untrusted work)."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
        if self._lock.acquire(timeout=2):
            try:
                self._stop()
            finally:
                self._lock.release()

    def _running(self) -> subprocess.Popen:
        if self._process is not None and self._process.poll() is not None:
            self._stop()
        if self._process is None:
            self._spawn()
        process = self._process
        if self._ready:
            return process
        try:
            first = _waited(self._answers, START_SECONDS)
        except queue.Empty:
            first = None
        if first != READY:
            self._stop()
            raise ChildFailed("start", f"its helper process did not start ({self.module})")
        self._ready = True
        return process

    def _spawn(self) -> None:
        command = ([sys.executable, CHILD_COMMAND, self.module] if getattr(sys, "frozen", False)
                   else [sys.executable, "-P", "-m", self.module])
        env = {**os.environ, MEMORY_VARIABLE: str(self.memory),
               CPU_VARIABLE: str(int(self.seconds) + 5)}
        self._answers = queue.Queue()
        self._ready = False
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
        threading.Thread(target=_read_answers, args=(self._process.stdout, self._answers),
                         name=f"answers of {self.module}", daemon=True).start()

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._last_end = process.returncode

    def _ending(self) -> str:
        process = self._process
        if process is not None:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._stop()
        return ending(self._last_end)


def ending(code: int | None) -> str:
    """How a child ended, from its return code: "SIGSEGV", "exit status 1"."""
    if code is None:
        return "for an unknown reason"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _waited(answers: queue.Queue, seconds: float):
    """The next answer within `seconds` (queue.Empty if none), looked for in short waits: a
    Ctrl-C the kernel gave another thread is acted on within one of them, not at the end."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return answers.get(timeout=min(_SLICE_SECONDS, max(deadline - time.monotonic(), 0)))
        except queue.Empty:
            if time.monotonic() >= deadline:
                raise


def _read_answers(stream, answers: queue.Queue) -> None:
    """The child's output, line by line, into `answers`; None once it ends."""
    try:
        for line in stream:
            answers.put(line)
    except (OSError, ValueError):  # closed by _stop
        pass
    answers.put(None)


# --- the child's side -------------------------------------------------------------------------

MEMORY_VARIABLE = "DRAFTLIGHT_CHILD_MEMORY"  # bytes past its start size the child may take
CPU_VARIABLE = "DRAFTLIGHT_CHILD_CPU"  # CPU seconds one request may take


def serve(handle: Callable[[dict], dict]) -> int:
    """The child's loop: `handle` each request line until the input closes. A request that
    runs out of memory is answered {"failed": "memory"}, and the child ends (its heap is
    no longer worth keeping)."""
    answers = answer_stream()
    _limit_memory(int(os.environ.get(MEMORY_VARIABLE, 768 << 20)))
    cpu_seconds = int(os.environ.get(CPU_VARIABLE, 10))
    answers.write(READY)
    answers.flush()
    for line in sys.stdin.buffer:
        _limit_cpu(cpu_seconds)
        try:
            answer = handle(json.loads(line))
        except MemoryError:
            answer = None
        answers.write(json.dumps(answer if answer is not None else {"failed": "memory"})
                      .encode("ascii") + b"\n")
        answers.flush()
        if answer is None:
            return 0
    return 0


def answer_stream():
    """The child's answers: its standard output, kept for them alone (binary); what a library
    prints goes to standard error from now on and can never be taken for an answer."""
    stream = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    # Native code writes to descriptor 1, not to sys.stdout: it too goes to standard error, or
    # a line llama.cpp printed would reach the app as junk among the answers (host_lines.py)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return stream


def _limit_memory(extra: int) -> None:
    if resource is None or not os.path.exists("/proc/self/statm"):  # RLIMIT_AS: Linux's
        return
    with open("/proc/self/statm") as statm:
        size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size + extra if hard == resource.RLIM_INFINITY else min(hard, size + extra)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _limit_cpu(seconds: int) -> None:
    """The kernel ends the child (SIGXCPU) once this request has used `seconds` of CPU."""
    if resource is None:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime) + 1 + seconds
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or soft <= hard:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
