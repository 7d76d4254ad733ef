"""A llama-server process that Draftlight starts, watches and stops.

    server = ManagedServer(binary, ServerOptions(target=path, spec_type="ngram-simple"))
    server.start()            # a free loopback port, a random API key, waits until it answers
    server.url, server.api_key
    server.close()            # SIGTERM, then SIGKILL

No orphans: the child asks Linux to kill it when the thread that started it dies
(PR_SET_PDEATHSIG), and elsewhere a watchdog process stops it when the app dies (popen_tied,
in draftlight/lifetimes.py, and draftlight/watchdog.py), so even a SIGKILL of the app takes
the server with it; close() and an atexit hook stop it on every ordinary exit. The server
listens on 127.0.0.1 only and wants a random key, so neither other users of the machine nor
web pages can drive it. The key goes to the child in its environment (LLAMA_API_KEY), which
only its user can read: a command line is public (/proc/PID/cmdline, ps). The start waits for
a server that wants that key, not for whatever answers on the port.
"""

from __future__ import annotations

import atexit
import collections
import http.client
import os
import re
import secrets
import signal
import socket
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from draftlight.engine.core.errors import EngineError
from draftlight.engine.server.rpc import check_rpc_address
from draftlight.lifetimes import popen_tied
from draftlight.modes import Mode, ModeError

LOG_LINES = 2000  # the server's latest log lines kept for the Server log view
NO_REPACK_NOTE = ("llama-server crashed at start with llama.cpp's repacked weights (signal {signal}; "
                  "AMX kernels do that on some CPUs), so it runs without them (--no-repack): "
                  "drafts are checked more slowly")
HEALTH_TIMEOUT = 180.0  # seconds a start may take (loading a large model) before giving up
_LOG_PREFIX = re.compile(r"^\d+\.\d+\.\d+\.\d+ [A-Z] ")  # llama.cpp's "0.00.018.518 E "


class ServerStartError(EngineError):
    """The server would not start: it exited, failed to load the model, or never got healthy."""


@dataclass(frozen=True)
class ServerOptions:
    target: Path
    spec_type: str = "none"  # --spec-type: one type or a comma list (modes.py)
    draft: Path | None = None  # draft-simple / draft-eagle3 / … model
    n_ctx: int = 4096
    threads: int = 0  # 0 = the same default as the in-process engine
    draft_tokens: int | None = None  # --spec-draft-n-max
    gpu_layers: int = 0
    # The in-process engine's KV cache types (load_options.LoadOptions.k_type, v_type): with
    # the same cache both engines take the same attention path, so greedy text matches.
    k_type: str = "q8_0"
    v_type: str = "f16"
    # Other machines' rpc-servers ("host:port"): the model's layers are split over them
    rpc: tuple[str, ...] = ()
    # llama.cpp's repacked weights (its extra buffer types); off (--no-repack) where they crash
    # this CPU: engine/llama/cpu_check.py's answer for our own build, or a start that died of a signal
    repack: bool = True
    extra: tuple[str, ...] = field(default_factory=tuple)

    def arguments(self) -> list[str]:
        try:
            mode = Mode.llama(self.spec_type)
        except ModeError as exc:
            raise EngineError(f"llama.cpp speculation: {exc}") from None
        if mode.needs_draft_model and self.draft is None:
            raise EngineError(f"llama.cpp's {self.spec_type} needs a draft model")
        from draftlight.engine.core.load_options import default_threads
        args = ["-m", str(self.target), "-c", str(self.n_ctx),
                "-t", str(self.threads or default_threads()), "-np", "1", "--no-webui",
                "-ctk", self.k_type, "-ctv", self.v_type, "-fa", "on",
                "-ngl", str(self.gpu_layers), "--spec-type", self.spec_type]
        if self.draft is not None and mode.needs_draft_model:
            args += ["-md", str(self.draft)]
        if mode.needs_draft_model or "draft-mtp" in mode.spec_types:
            # the draft's (or the MTP head's) own cache: the same type as the target's
            args += ["-ctkd", self.k_type, "-ctvd", self.v_type]
        if self.draft_tokens is not None and self.spec_type != "none":
            args += ["--spec-draft-n-max", str(self.draft_tokens)]
        if self.rpc:
            for address in self.rpc:
                check_rpc_address(address)
            # llama-server looks for its RPC backend (libggml-rpc.so beside it) only when an
            # option before --rpc asks for the list of backends: a tensor override that matches
            # no tensor does. Layers go to the RPC devices only when offloaded (-ngl); -lv 4
            # logs where each layer and buffer went.
            args += ["-ot", "^draftlight-no-tensor$=CPU", "--rpc", ",".join(self.rpc),
                     "-lv", "4"]
            if self.gpu_layers == 0:
                args[args.index("-ngl") + 1] = "999"
        if not self.repack:
            args.append("--no-repack")
        return args + list(self.extra)


class ManagedServer:
    """One llama-server child process. Start and close it from one thread."""

    def __init__(self, binary: str | Path, options: ServerOptions, *,
                 health_timeout: float = HEALTH_TIMEOUT,
                 on_log: Callable[[str], None] | None = None) -> None:
        self.binary = Path(binary)
        self.options = options
        self.health_timeout = health_timeout
        self.on_log = on_log
        self.log: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.api_key = secrets.token_hex(24)
        self._reader: threading.Thread | None = None
        self.note = ""  # what the user should know about how it was started

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self, should_cancel: Callable[[], bool] = lambda: False) -> None:
        """Start the server and wait until it answers with its key (the model is loaded).

        Raises:
            ServerStartError: it exited (the line saying why), or was not healthy in time."""
        for attempt in range(3):  # another program may take the free port before the server does
            self._spawn()
            try:
                self._wait_healthy(should_cancel)
                return
            except ServerStartError as exc:
                died_of = -self.process.returncode if self.process and self.process.poll() else 0
                self.close()
                if attempt < 2 and self._port_was_taken():
                    continue
                if attempt < 2 and self.options.repack and died_of in _CRASH_SIGNALS:
                    # llama.cpp's AMX kernels (repacked weights) kill it on some CPUs at its
                    # first batch; without them it runs (engine/llama/cpu_check.py finds the same
                    # for the in-process engine)
                    self.options = replace(self.options, repack=False)
                    self.note = NO_REPACK_NOTE.format(signal=signal.Signals(died_of).name)
                    self._record(f"# {self.note}")
                    continue
                raise exc from None

    def _spawn(self) -> None:
        self.port = free_port()
        command = [str(self.binary), *self.options.arguments(), "--host", "127.0.0.1",
                   "--port", str(self.port)]
        # The key in the child's environment only; a key file of the user's would add keys.
        env = dict(os.environ, LLAMA_LOG_COLORS="off", LLAMA_API_KEY=self.api_key)
        env.pop("LLAMA_ARG_API_KEY_FILE", None)
        self._record("$ " + " ".join(command))
        try:
            self.process = popen_tied(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, errors="replace",
                                      env=env)
        except OSError as exc:
            raise ServerStartError(f"cannot run {self.binary}: {exc.strerror or exc}") from None
        _RUNNING.add(self)
        self._reader = threading.Thread(target=self._read_log, args=(self.process,),
                                        name="llama-server log", daemon=True)
        self._reader.start()

    def _read_log(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            self._record(line.rstrip())

    def _record(self, line: str) -> None:
        """Keep a log line, and pass it on (the window's Server log shows each start's command
        line too, so a user sees which machines and options a server runs with)."""
        self.log.append(line)
        if self.on_log is not None:
            self.on_log(line)

    def _wait_healthy(self, should_cancel: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self.health_timeout
        impostor = False  # something answered on the port without wanting our key
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._reader.join(timeout=2)
                raise ServerStartError(f"llama-server stopped (exit status "
                                       f"{self.process.returncode}): {self.reason()}")
            if should_cancel():
                raise ServerStartError("starting llama-server was cancelled")
            answer = _answer(self.port, self.api_key)
            if answer == "ours":
                return
            impostor = impostor or answer == "another"
            time.sleep(0.1)
        why = (f"another program answers on 127.0.0.1:{self.port} (it accepts any API key)"
               if impostor else self.reason())
        raise ServerStartError(f"llama-server did not become ready within "
                               f"{self.health_timeout:.0f} s: {why}")

    def _this_run(self) -> list[str]:
        """The log lines since the latest start (its command line excluded)."""
        lines = list(self.log)
        starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
        return lines[starts[-1] + 1:] if starts else lines

    def _port_was_taken(self) -> bool:
        return any("bind" in line.lower() and "port" in line.lower() for line in self._this_run())

    def reason(self) -> str:
        """The log line that best says what went wrong (the last error, else the last line)."""
        lines = [line for line in self._this_run() if line.strip()
                 and not line.lstrip().startswith("#") and "No such file" not in line]
        errors = [line for line in lines if any(
            word in line.lower() for word in ("error", "failed", "crashed"))]
        # the line that says why, before the ones that only say that it failed
        telling = [line for line in errors if any(word in line.lower() for word in (
            "error loading", "crashed", "cannot", "invalid", "unknown", "not found", "unable"))]
        chosen = (telling or errors or lines or ["it printed nothing"])[0]
        return _LOG_PREFIX.sub("", chosen).strip()[:300]

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        process, self.process = self.process, None
        _RUNNING.discard(self)
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._reader is not None:
            self._reader.join(timeout=2)


_RUNNING: "weakref.WeakSet[ManagedServer]" = weakref.WeakSet()
_CRASH_SIGNALS = {int(getattr(signal, name)) for name in ("SIGILL", "SIGSEGV", "SIGBUS")
                  if hasattr(signal, name)}


@atexit.register
def _stop_all() -> None:
    for server in list(_RUNNING):
        server.close()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answer(port: int, key: str) -> str:
    """"ours": a loaded llama-server that holds `key`: it lists its models with the key and
    refuses a wrong one (its /health is public: any program on the port could answer that);
    "another": something that lists them without the key; "" otherwise (nothing there yet,
    or still loading: 503)."""
    def status(with_key: str) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            connection.request("GET", "/v1/models",
                               headers={"Authorization": f"Bearer {with_key}"})
            return connection.getresponse().status
        except OSError:
            return 0
        finally:
            connection.close()

    if status(key) != 200:
        return ""
    return "ours" if status("not-" + key) == 401 else "another"
