"""Bench modes answered by a server engine, next to Draftlight's own on the same questions:
"llama:SPEC" = llama.cpp's llama-server started here with --spec-type SPEC (one process per
type, started once and kept for the run), "remote" = a running server (`--engine URL`).

Their token ids are not exposed, so they are compared with plain decoding on text; their
drafted and accepted counts are the server's own, their passes rebuilt from its counters
(app/engine/server/provenance.py); their memory is the server process's.
"""

from __future__ import annotations

from pathlib import Path

from app.engine.events import Done, TextPiece
from app.engine.sampling import SamplingParams
from app.engine.server.client import Endpoint
from app.engine.server.engine import LLAMA_PREFIX, REMOTE_MODE, ServerEngine, spec_type_of
from app.engine.server.process import ServerOptions


def is_server_mode(mode: str) -> bool:
    return mode.startswith(LLAMA_PREFIX) or mode == REMOTE_MODE


class ServerModes:
    """The server engines of one bench run. close() stops the servers it started."""

    def __init__(self, binary: Path | None, options: ServerOptions | None,
                 endpoint: Endpoint | None = None) -> None:
        self.binary, self.options, self.endpoint = binary, options, endpoint
        self.engines: dict[str, ServerEngine] = {}

    def engine(self, mode: str) -> ServerEngine:
        if mode not in self.engines:
            if mode == REMOTE_MODE:
                self.engines[mode] = ServerEngine.remote(self.endpoint)
            else:
                options = ServerOptions(**{**self.options.__dict__,
                                           "spec_type": spec_type_of(mode)})
                self.engines[mode] = ServerEngine.managed(self.binary, options)
        return self.engines[mode]

    def start_all(self, modes: list[str]) -> None:
        """Start every server before timing begins (a start is not part of any reply)."""
        for mode in modes:
            if is_server_mode(mode):
                self.engine(mode)

    def run(self, mode: str, messages, params: SamplingParams) -> tuple[Done, int]:
        """(Done, drafted pieces seen in the stream) of one reply."""
        engine = self.engine(mode)
        done, drafted_pieces = None, 0
        for event in engine.generate(messages, params, mode):
            if isinstance(event, TextPiece) and event.source == "draft":
                drafted_pieces += 1
            elif isinstance(event, Done):
                done = event
        return done, drafted_pieces

    def rss_mb(self, mode: str) -> float:
        """The server process's resident memory (0 for a remote server)."""
        server = self.engines[mode].server if mode in self.engines else None
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
