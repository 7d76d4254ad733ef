"""Bench modes answered by a server engine, next to Draftlight's own on the same questions:
"llama:SPEC" = llama.cpp's llama-server started here with --spec-type SPEC (one process per
type, started once and kept for the run), "remote" = a running server (`--engine URL`).

Their token ids are not exposed, so they are compared with plain decoding on text; their
drafted and accepted counts are the server's own, their passes rebuilt from its counters
(app/draftlight.engine.server.pass_tracker.py); their memory is the server process's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from draftlight.bench.server_curve import time_passes
from draftlight.engine.core.errors import EngineError
from draftlight.engine.reply.events import Done, TextPiece
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.server.client import Endpoint
from draftlight.engine.server.server_engine import ServerEngine
from draftlight.engine.server.spec_types import spec_type_of
from draftlight.engine.server.process import ServerOptions
from draftlight.modes import REMOTE, Mode, ModeError

# The bench names its rows by words (bench/runner.py's BENCH_MODES, and these modes' text)
REMOTE_WORD = str(REMOTE)


def server_mode(word: str) -> Mode | None:
    """The mode a bench word names when a server engine answers it (llama:… or remote)."""
    try:
        mode = Mode.parse(word)
    except ModeError:
        return None
    return mode if mode.runs_on_llama_server or mode == REMOTE else None


def is_server_mode(word: str) -> bool:
    return server_mode(word) is not None


def is_llama_server_mode(word: str) -> bool:
    mode = server_mode(word)
    return mode is not None and mode.runs_on_llama_server


class ServerModes:
    """The server engines of one bench run. close() stops the servers it started."""

    def __init__(self, binary: Path | None, options: ServerOptions | None,
                 endpoint: Endpoint | None = None) -> None:
        self.binary, self.options, self.endpoint = binary, options, endpoint
        self.engines: dict[str, ServerEngine] = {}

    def _key(self, mode: str) -> str:
        """Which server answers `mode`: its own per spec type, but over RPC one for all (an
        rpc-server serves one llama-server at a time), restarted with each reply's spec type
        (ServerEngine.generate; a start is not part of any reply's time)."""
        return "llama" if self.options and self.options.rpc and mode != REMOTE_WORD else mode

    def engine(self, mode: str) -> ServerEngine:
        key = self._key(mode)
        if key not in self.engines:
            if mode == REMOTE_WORD:
                self.engines[key] = ServerEngine.remote(self.endpoint)
            else:
                options = ServerOptions(**{**self.options.__dict__,
                                           "spec_type": spec_type_of(Mode.parse(mode))})
                self.engines[key] = ServerEngine.managed(self.binary, options)
        return self.engines[key]

    def start_all(self, modes: list[str]) -> None:
        """Start every server before timing begins (a start is not part of any reply)."""
        for mode in modes:
            if is_server_mode(mode):
                self.engine(mode)

    def time_passes(self, modes: list[str]) -> dict:
        """llama-server's pass times before the run (server_curve.py): {"machines": the RPC
        helpers, "split" (over them) or "local" (this machine): {k: ms}, "remote": the same
        for a llama-server at --engine URL, which may itself run over RPC}. Over RPC the same
        model is also timed on this machine alone, in a server started for that and stopped
        again ("local", or "local_error" when it cannot run here, e.g. it does not fit). That
        server computes as the helpers do, without llama.cpp's repacked CPU weights (which RPC
        devices do not use), so the difference is what RPC itself adds. "error",
        "local_error" and "remote_error" say why a side was not timed; the run goes on."""
        passes = {}
        if REMOTE_WORD in modes:  # a llama-server (over RPC or not) at --engine URL is timed too
            passes["remote_url"] = self.endpoint.base
            try:
                passes["remote"] = time_passes(self.endpoint)
            except EngineError as exc:  # e.g. not a llama-server
                passes["remote_error"] = str(exc)
        llama = [m for m in modes if is_llama_server_mode(m)]
        return passes | self._time_llama_server(llama) if llama else passes

    def _time_llama_server(self, llama: list[str]) -> dict:
        plain = str(Mode.llama("none"))
        mode = plain if plain in llama else llama[0]
        rpc = self.options.rpc
        passes = {"machines": list(rpc)}
        try:
            passes["split" if rpc else "local"] = time_passes(self.engine(mode).endpoint)
        except EngineError as exc:
            return passes | {"error": str(exc)}
        if rpc:
            try:
                alone = ServerEngine.managed(self.binary, replace(
                    self.options, rpc=(), spec_type="none",
                    extra=(*self.options.extra, "--no-repack")))
            except EngineError as exc:
                passes["local_error"] = str(exc)
            else:
                try:
                    passes["local"] = time_passes(alone.endpoint)
                finally:
                    alone.close()
        return passes

    def run(self, mode: str, messages, params: SamplingParams) -> tuple[Done, int]:
        """(Done, drafted pieces seen in the stream) of one reply."""
        engine = self.engine(mode)
        done, drafted_pieces = None, 0
        for event in engine.generate(messages, params, server_mode(mode)):
            if isinstance(event, TextPiece) and event.source == "draft":
                drafted_pieces += 1
            elif isinstance(event, Done):
                done = event
        return done, drafted_pieces

    def rss_mb(self, mode: str) -> float:
        """The server process's resident memory (0 for a remote server)."""
        engine = self.engines.get(self._key(mode))
        server = engine.server if engine else None
        if server is None or server.pid is None:
            return 0.0
        try:
            import psutil
            return psutil.Process(server.pid).memory_info().rss / 2**20
        except Exception:  # noqa: BLE001 - gone, or psutil missing: no figure
            return 0.0

    def close(self) -> None:
        for engine in self.engines.values():
            engine.close()
        self.engines.clear()
