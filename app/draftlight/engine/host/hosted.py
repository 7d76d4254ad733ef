"""The in-process engine, run in a process of its own (host_child.py): what llama.cpp does
wrong — a segfault, an abort, an out-of-memory kill, a call that never returns — ends that
process, never the app. The app gets one line (EngineCrashed) with the reply's text so far
kept by whoever showed it, and the next request starts the host again.

    engine = HostedEngine(HostSpec(target, draft, options, draft_options))
    for event in engine.generate(messages, params, "auto"):   # the same events, the same
        ...                                                    # ChatEngine as Engine's

Requests go one at a time (the host owns its Llama on one thread); each event crosses as
wire.py's record. `silence_seconds`: the longest the host may say nothing in the middle of a
request while using no CPU (a reply's passes and a measurement's steps each say something in
far less; a long prompt's batches say nothing, but keep the CPU busy) before it is taken for
hung and ended.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace


from draftlight.engine.host import wire
from draftlight.engine.core.errors import EngineCrashed
from draftlight.engine.reply.events import Event, Notice
from draftlight.engine.host.host_child import DEBUG_VARIABLE
from draftlight.engine.host.host_lines import HostLines
from draftlight.engine.host.host_waits import HostWaits
from draftlight.engine.host.host_spec import BATCHED, ExtraBuffersCrashed, HostSpec
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.text.raw_prompt import RawPrompt
from draftlight.modes import Mode

CHILD_COMMAND = "_engine-host"  # hidden `draftlight` command: the frozen app's host
SILENCE_SECONDS = 300.0
SILENCE_VARIABLE = "DRAFTLIGHT_HOST_SILENCE"  # seconds, for tests of a hang
# How long a closing host may take to end: it writes the kept prompt, kept_prompt.MAX_BYTES
# (256 MiB) at most, under a second into the page cache and about 10 s at 25 MB/s, a slow
# disk's pace once the page cache pushes back. A host killed past it leaves a partial file,
# never read; the window is hidden by then, so only the app's exit waits this long.
CLOSE_SECONDS = 12.0


class HostedEngine(HostWaits):
    """A ChatEngine whose Engine lives in the host process (and measure_next, as Engine's)."""

    def __init__(self, spec: HostSpec, *, should_cancel: Callable[[], bool] | None = None,
                 on_progress: Callable[[float], None] | None = None,
                 silence_seconds: float | None = None) -> None:
        self.spec = spec
        self.silence_seconds = silence_seconds or float(os.environ.get(SILENCE_VARIABLE,
                                                                        SILENCE_SECONDS))
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # one request at a time
        self._process: subprocess.Popen | None = None
        self._lines: HostLines | None = None
        self.modes: tuple[Mode, ...] = ()
        self.n_ctx = 0
        self.load_notices: tuple[str, ...] = ()
        self.restarts = 0  # hosts started again after a crash
        self._interrupted = False  # interrupt(): cancel the request under way
        self._trying_extra = False  # the host tries llama.cpp's extra buffers on trust
        self._say_notes = False  # the next reply begins with load_notices (a restart's)
        self._start(should_cancel, on_progress)

    # --- the ChatEngine ---------------------------------------------------------------------

    def generate(self, messages: list[dict[str, str]], params: SamplingParams, mode: Mode, *,
                 prediction: str | None = None,
                 raw_prompt: RawPrompt | None = None,
                 grammar: str | None = None) -> Iterator[Event]:
        """The host's events for this reply (Engine.generate's: `raw_prompt` completes a text
        as given, `grammar` constrains it); closing the iterator cancels it there.

        Raises:
            EngineCrashed: the host ended or hung mid-reply (the events so far were given)."""
        request = {"op": "generate", "messages": messages, "params": wire.params_record(params),
                   "mode": str(mode), "prediction": prediction,
                   "raw_prompt": raw_prompt.record() if raw_prompt is not None else None,
                   "grammar": grammar}
        with self._lock:
            for attempt in range(2):
                ident = self._send(request)
                if self._say_notes:  # started again without the extra buffers: says why
                    self._say_notes = False
                    yield from (Notice(note) for note in self.load_notices)
                given = ended = False
                try:
                    while True:
                        message = self._about(ident)
                        for record in message.get("events", ()):
                            given = True
                            yield wire.event_from(record)
                        if "end" in message or "error" in message:
                            ended = True  # the host is done with it, either way
                            if "error" in message:
                                raise wire.error_from(message["error"])
                            self._trying_extra = False  # they ran: the host kept them
                            return
                except ExtraBuffersCrashed:
                    if given or attempt:
                        raise
                finally:
                    if not ended and self._alive():  # closed early: the host stops the reply
                        self._cancel(ident)

    def tokenize_chat(self, messages: list[dict[str, str]]) -> list[int]:
        return self._ask({"op": "tokenize_chat", "messages": messages})

    def tokenize_raw(self, prompt: RawPrompt) -> list[int]:
        return self._ask({"op": "tokenize_raw", "prompt": prompt.record()})

    def reserve(self, params: SamplingParams) -> int:
        return self._ask({"op": "reserve", "params": wire.params_record(params)})

    def pending_measurements(self) -> tuple[str, ...]:
        return tuple(self._ask({"op": "pending_measurements"}))

    def measure_next(self, should_cancel: Callable[[], bool] | None = None) -> str:
        return self._ask({"op": "measure_next"}, should_cancel)

    def measure(self, should_cancel: Callable[[], bool] | None = None) -> None:
        while self.measure_next(should_cancel):
            pass

    def attach_draft_file(self, path: str, options: LoadOptions, *,
                          should_cancel: Callable[[], bool] | None = None) -> None:
        """Engine.attach_draft on the draft model in `path`, opened in the host (a host
        started again later loads it too)."""
        self.modes = wire.modes_from(self._ask({"op": "attach_draft", "path": path,
                                                "options": asdict(options)}, should_cancel))
        self.spec = replace(self.spec, draft=path, draft_options=options)

    def detach_draft(self) -> None:
        self.modes = wire.modes_from(self._ask({"op": "detach_draft"}))
        self.spec = replace(self.spec, draft=None)

    def explain_divergence(self, messages: list[dict[str, str]], a: list[int], b: list[int]):
        """compare.explain_divergence, in the host (it reads the target's logits)."""
        from draftlight.engine.reply.compare import Divergence
        found = self._ask({"op": "explain_divergence", "messages": messages, "a": a, "b": b})
        return Divergence(**found) if found else None

    @property
    def pid(self) -> int | None:
        """The host's process id (None between a crash and the next request)."""
        return self._process.pid if self._alive() else None

    def interrupt(self) -> None:
        """Thread-safe: the request under way stops at its next pass in the host, even while
        its thread waits for a long prompt's read."""
        self._interrupted = True

    def kill(self) -> None:
        """Thread-safe: end the host at once (a window closing waits for nothing); the
        request under way ends with EngineCrashed."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def close(self) -> None:
        """End the host: its input closes, it keeps the prompt's cache for the next host
        (kept_prompt.py) and frees its models; one that does not end within CLOSE_SECONDS is
        killed (a window never waits long for llama.cpp)."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=CLOSE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    # --- the host process -------------------------------------------------------------------

    def _start(self, should_cancel=None, on_progress=None) -> None:
        try:
            self._launch(should_cancel, on_progress)
        except ExtraBuffersCrashed:  # at its load: again without them, at once
            self.close()
            self.restarts += 1
            self._launch(should_cancel, on_progress)

    def _launch(self, should_cancel=None, on_progress=None) -> None:
        command = ([sys.executable, CHILD_COMMAND] if getattr(sys, "frozen", False)
                   else [sys.executable, "-P", "-m", "draftlight.engine.host.host_child"])
        env = dict(os.environ)
        env.pop(DEBUG_VARIABLE, None)
        if os.environ.get(DEBUG_VARIABLE):  # taken by the next host only: one started
            env[DEBUG_VARIABLE] = os.environ.pop(DEBUG_VARIABLE)  # again is clean
        from draftlight.lifetimes import popen_for_life
        self._process = popen_for_life([*command, json.dumps(self.spec.record())],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._lines = HostLines(self._process.stdout)
        while True:
            message = self._next(should_cancel, loading=True)
            if "cpu" in message:
                self._trying_extra = bool(message["cpu"].get("trying_extra"))
            elif "loading" in message and on_progress is not None:
                on_progress(message["loading"])
            elif "failed" in message:
                self.close()
                raise wire.error_from(message["failed"])
            elif "ready" in message:
                ready = message["ready"]
                self.modes = wire.modes_from(ready["modes"])
                self.n_ctx = ready["n_ctx"]
                self.load_notices = tuple(ready["load_notices"])
                return

    def _alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _send(self, message: dict) -> int:
        self._interrupted = False  # an interrupt() of an earlier request
        if not self._alive():  # it crashed before: started again, as the user expects
            self.close()
            self.restarts += 1
            self._start()
        ident = next(self._ids)
        try:
            self._write({"id": ident, **message})
        except OSError:
            raise self._crashed() from None
        return ident

    def _ask(self, message: dict, should_cancel=None):
        with self._lock:
            for attempt in range(2):
                ident = self._send(message)
                try:
                    answer = self._about(ident, should_cancel)
                except ExtraBuffersCrashed:
                    if attempt:
                        raise
                    continue  # asked again of a host without them
                if "error" in answer:
                    raise wire.error_from(answer["error"])
                if message["op"] in BATCHED:
                    self._trying_extra = False  # they ran: the host kept them
                return answer["result"]

    def _about(self, ident: int, should_cancel=None) -> dict:
        """The host's next message about request `ident`."""
        while True:
            message = self._next(should_cancel, cancel_id=ident)
            if message.get("id") == ident:
                return message
            # else what an earlier, abandoned request still said

    def _cancel(self, ident: int) -> None:
        """Stop request `ident` in the host and read what it still says, to its end."""
        try:
            self._write({"id": ident, "op": "cancel"})
            while True:
                message = self._next()
                if message.get("id") == ident and ("end" in message or "error" in message
                                                   or "result" in message):
                    return
        except (OSError, EngineCrashed):
            pass

    def _write(self, message: dict) -> None:
        self._process.stdin.write(wire.encode(message))
        self._process.stdin.flush()
