"""The engine's host: the process llama.cpp runs in, apart from the app (hosted.py is the
app's side). A crash in native code (a segfault, an abort, an out-of-memory kill) ends this
process and only this one: the app says so in one line and starts it again.

    python -P -m draftlight.engine.host.host_child SPEC_JSON

It says {"cpu": {"trying_extra"}} (whether it loads llama.cpp's extra buffer types on trust:
ExtraOnTrust), loads the models SPEC names (Engine.load), says {"loading": fraction} as the
weights load, then {"ready": {modes, n_ctx, load_notices}} (or {"failed": error}), and answers
one request at a time, on this process's main thread, which owns the Llama:

    {"id", "op": "generate", messages, params, mode, prediction, raw_prompt, grammar}
                                                            -> {"id", "events"}...,
                                                               {"id", "events", "end"}
                             (one line a pass: its pieces and its Progress, together; quick
                              passes share one, LINE_SECONDS)
    {"id", "op": "tokenize_chat" | "tokenize_raw" | "reserve" | "pending_measurements" | "measure_next"
           | "attach_draft" | "detach_draft" (their result: the modes now)
           | "explain_divergence", …}                                 -> {"id", "result"}
    {"id", "op": "cancel"}   (read at once, on the input's own thread: the request stops at
                              its next event or pass)

Any request may end in {"id", "error"} instead (wire.error_record). Lines are wire.encode's.
DRAFTLIGHT_HOST_DEBUG="segfault@N" or "hang@N" makes the first reply crash or hang in native
code after N pieces ("busy@N": silent but working for 3 s): how the tests reach the paths a
crash takes.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import sys
import threading
import time

from draftlight.bounded_process import answer_stream
from draftlight.engine.host import wire
from draftlight.engine.reply.events import Done, Notice, Progress
from draftlight.engine.host.host_spec import BATCHED
from draftlight.modes import Mode
from draftlight.engine.text.raw_prompt import RawPrompt

DEBUG_VARIABLE = "DRAFTLIGHT_HOST_DEBUG"
# Passes quicker than this share a line: each line wakes the app, and on two cores a wake-up
# takes a core from llama.cpp mid-pass; the window paints every 33 ms anyway.
LINE_SECONDS = 0.025


class _Output:
    """The answers' stream, shared by the main thread and the loader's progress callback."""

    def __init__(self) -> None:
        self._stream = answer_stream()
        self._lock = threading.Lock()

    def send(self, message: dict) -> None:
        with self._lock:
            self._stream.write(wire.encode(message))
            self._stream.flush()


def _read_requests(requests: queue.SimpleQueue, cancelled: set) -> None:
    for line in sys.stdin.buffer:
        message = wire.decode(line)
        if message.get("op") == "cancel":
            cancelled.add(message["id"])
        else:
            requests.put(message)
    requests.put(None)  # the app is gone


ENDING = "ending"  # in `cancelled` once a SIGTERM came: every request stops


def _stops(ident, cancelled: set) -> bool:
    return ident in cancelled or ENDING in cancelled


def _end_on_sigterm(requests: queue.SimpleQueue, cancelled: set) -> None:
    """A SIGTERM (the system shutting down, a user's kill) ends the host as its input's end
    does once the request under way has stopped (at its next pass, a long read mid-way): the
    engine closes and keeps the conversation's prompt (kept_prompt.py); only a crash or a
    SIGKILL loses it. SimpleQueue: its put may interrupt a get on the same thread."""
    def end(_signal, _frame) -> None:
        cancelled.add(ENDING)
        requests.put(None)
    signal.signal(signal.SIGTERM, end)


def _debug_failure(after: str | None):
    """(what, after how many pieces) from DEBUG_VARIABLE, or None."""
    if not after or "@" not in after:
        return None
    what, count = after.split("@", 1)
    return ((what, int(count)) if what in ("segfault", "hang", "busy") and count.isdigit()
            else None)


def _fail_natively(what: str) -> None:
    if what == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    if what == "busy":  # silent for 3 s, but working (a long prompt's batches)
        end = time.monotonic() + 3
        while time.monotonic() < end:
            pass
        return
    libc = ctypes.CDLL(None)
    while True:  # a native call that never returns (the GIL released, as llama.cpp's are)
        libc.pause()


class ExtraOnTrust:
    """llama.cpp's extra buffer types, loaded without knowing that they run on this CPU
    (cpu_check.host_tries_extra), until a request that runs batched passes ends well; then they
    are kept as running here. Where they crash, this process ends and the app starts the next
    host without them. DRAFTLIGHT_SIMULATE_AMX_CRASH=1 crashes that request as such a CPU
    does (SIGILL), on any CPU."""

    def __init__(self, trying: bool) -> None:
        self.trying = trying

    def before(self, op: str) -> None:
        from draftlight.engine.llama import cpu_check
        if self.trying and op in BATCHED and os.environ.get(cpu_check.SIMULATE_VARIABLE):
            os.kill(os.getpid(), signal.SIGILL)

    def after(self, op: str) -> None:
        if self.trying and op in BATCHED:
            from draftlight.engine.llama import cpu_check
            cpu_check.confirm_extra(cpu_check.cache_file())
            self.trying = False


def serve_requests(engine, out: _Output, requests: queue.SimpleQueue, cancelled: set,
                   debug=None, on_trust: ExtraOnTrust = ExtraOnTrust(False)) -> None:
    while (request := requests.get()) is not None:
        ident, op = request["id"], request["op"]
        should_cancel = lambda ident=ident: _stops(ident, cancelled)  # noqa: E731
        on_trust.before(op)
        try:
            if op == "generate":
                batch = _send_generation(engine, out, request, should_cancel, debug)
                on_trust.after(op)
                out.send({"id": ident, "events": batch, "end": True})
            else:
                result = _answer(engine, request, should_cancel)
                on_trust.after(op)
                out.send({"id": ident, "result": result})
        except Exception as exc:  # noqa: BLE001 - said to the app, which raises it again
            out.send({"id": ident, "error": wire.error_record(exc)})
        finally:
            cancelled.discard(ident)


def _send_generation(engine, out: _Output, request: dict, should_cancel, debug) -> list[dict]:
    """Run a "generate" request, sending its events as they come: one line a pass (its
    pieces and its Progress), or for the passes of LINE_SECONDS together when they are
    quicker than that. Returns the events not sent yet, which the end line carries."""
    ident = request["id"]
    pieces = 0
    def on_read(reading) -> None:  # sent at once: the read is one long call, no yield in it
        out.send({"id": ident, "events": [wire.event_record(reading)]})

    events = engine.generate(request["messages"], wire.params_from(request["params"]),
                             Mode.parse(request["mode"]), prediction=request.get("prediction"),
                             raw_prompt=RawPrompt.from_record(request.get("raw_prompt")),
                             grammar=request.get("grammar"),
                             should_stop=should_cancel, on_read=on_read)
    batch: list[dict] = []
    sent = 0.0
    try:
        for event in events:
            batch.append(wire.event_record(event))
            pieces += 1
            if debug is not None and pieces == debug[1]:
                out.send({"id": ident, "events": batch})
                _fail_natively(debug[0])
                batch = []
            if (isinstance(event, (Done, Notice)) or should_cancel() or isinstance(
                    event, Progress) and time.monotonic() - sent >= LINE_SECONDS):
                out.send({"id": ident, "events": batch})
                batch, sent = [], time.monotonic()
            if should_cancel():
                break
    finally:
        events.close()
    return batch


def _answer(engine, request: dict, should_cancel):
    """The result of any request but "generate", sent back in one line."""
    op = request["op"]
    if op == "tokenize_chat":
        return engine.tokenize_chat(request["messages"])
    if op == "tokenize_raw":
        return engine.tokenize_raw(RawPrompt.from_record(request["prompt"]))
    if op == "reserve":
        return engine.reserve(wire.params_from(request["params"]))
    if op == "pending_measurements":
        return list(engine.pending_measurements())
    if op == "measure_next":
        return engine.measure_next(should_cancel=should_cancel)
    if op == "attach_draft":
        from draftlight.engine.core.load_options import LoadOptions
        engine.attach_draft_file(request["path"], LoadOptions(**request["options"]),
                                 should_cancel=should_cancel)
        return [str(mode) for mode in engine.modes]
    if op == "detach_draft":
        engine.detach_draft()
        return [str(mode) for mode in engine.modes]
    if op == "explain_divergence":
        from dataclasses import asdict

        from draftlight.engine.reply.compare import explain_divergence
        found = explain_divergence(engine, request["messages"], request["a"], request["b"])
        return asdict(found) if found is not None else None
    raise ValueError(f"unknown request {op!r}")


def main(argv: list[str]) -> int:
    import json

    from draftlight.engine.reply.generator import Engine
    from draftlight.engine.core.load_options import LoadOptions
    out = _Output()
    spec = json.loads(argv[0])
    requests: queue.SimpleQueue = queue.SimpleQueue()
    cancelled: set = set()
    _end_on_sigterm(requests, cancelled)
    threading.Thread(target=_read_requests, args=(requests, cancelled), daemon=True,
                     name="requests").start()
    from draftlight.engine.llama import cpu_check
    on_trust = ExtraOnTrust(cpu_check.host_tries_extra(
        cpu_check.cache_file(), spec.get("extra_buffers_crashed", False)))
    out.send({"cpu": {"trying_extra": on_trust.trying}})
    try:
        engine = Engine.load(spec["target"], spec.get("draft"), LoadOptions(**spec["options"]),
                             LoadOptions(**spec["draft_options"]),
                             measure_later=spec.get("measure_later", False),
                             should_cancel=lambda: _stops(-1, cancelled),
                             on_progress=lambda done: out.send({"loading": done}))
        if spec.get("time_auto") and not spec.get("measure_later"):
            engine.prepare_auto(lambda: _stops(-1, cancelled))
    except Exception as exc:  # noqa: BLE001 - the app says it, in one line
        out.send({"failed": wire.error_record(exc)})
        return 0
    try:
        out.send({"ready": {"modes": [str(mode) for mode in engine.modes], "n_ctx": engine.n_ctx,
                            "load_notices": list(engine.load_notices)}})
        serve_requests(engine, out, requests, cancelled,
                       _debug_failure(os.environ.get(DEBUG_VARIABLE)), on_trust)
    finally:
        engine.close()
    return 0


def run(argv: list[str]) -> int:
    """main, then out at once: the thread reading requests may be inside a read of the input,
    where the interpreter's own shutdown would wait on its lock (a fatal error)."""
    code = main(argv)
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run(sys.argv[1:])
