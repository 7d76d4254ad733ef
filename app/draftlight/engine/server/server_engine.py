"""A server engine: the same events as the in-process engine, from a server over HTTP.

    engine = ServerEngine.managed(binary, ServerOptions(target=path), spec_type="ngram-mod")
    engine = ServerEngine.remote(Endpoint("http://host:8080", api_key="…"))
    for event in engine.generate(messages, params, Mode.parse("llama:ngram-mod")):
        ...  # TextPiece(text, source, pass) ... then Done(text, stats)

Managed: Draftlight's own llama-server child (process.py); a mode "llama:SPEC" runs it with
--spec-type SPEC, restarting it when SPEC changes. Remote: a server already running; it decides
how it decodes, so there is one mode, "remote". Which tokens were drafted comes from the
counters llama-server streams (pass_tracker.py), or from a vLLM server's chunking checked against
its per-step metrics (vllm_metrics.py); a server that sends neither gets "unknown" tokens and a
footer that says so. reply_labels.py decides which, per reply.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator

from draftlight.engine.text.control_text import neutralized
from draftlight.engine.core.errors import EngineError
from draftlight.engine.reply.events import Done, Event, Notice, Progress, Stats, TextPiece
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.server.client import (Endpoint, ServerError, post_json, stream_chat,
                                             with_model)
from draftlight.engine.server.process import (HEALTH_TIMEOUT, ManagedServer, ServerOptions,
                                              ServerStartError)
from draftlight.engine.server.rpc import no_longer_answer, unreachable
from draftlight.engine.server.reply_labels import ReplyLabels
from draftlight.engine.server.vllm_metrics import STREAM_OPTIONS
from draftlight.engine.server.spec_types import (runnable_spec_types, spec_type_of,
                                                 why_not_runnable)
from draftlight.modes import REMOTE, SPEC_TYPES, Mode

# llama.cpp's request fields: per-chunk counters, raw text (no reasoning split), and no
# sampler of its own beyond those the request names (its min_p defaults to 0.05).
LLAMA_FIELDS = {"timings_per_token": True, "reasoning_format": "none", "cache_prompt": True}
STOP_REASONS = {"stop": "eos", "length": "max_tokens"}


class ServerEngine:
    """Use from one thread (the one that started a managed server), and close() it."""

    def __init__(self, endpoint: Endpoint | None, *, binary: Path | None = None,
                 options: ServerOptions | None = None,
                 on_log: Callable[[str], None] | None = None,
                 spec_types: tuple[str, ...] = SPEC_TYPES) -> None:
        self.endpoint = endpoint
        self.binary, self.options, self.on_log = binary, options, on_log
        self.server: ManagedServer | None = None
        self._spec_types = spec_types
        self._extra_fields = True  # llama.cpp's fields, stream_options: dropped if refused
        self._vllm_steps = False  # the last reply's chunks were shown to be vLLM's steps
        self._model_asked = False  # a remote server was asked which model it serves
        self._control_text_cache: dict[str, set[str]] = {}  # message text -> markers in it
        self._notices: tuple[str, ...] = ()  # said at the start (how it was loaded)

    @classmethod
    def managed(cls, binary: str | Path, options: ServerOptions, *,
                on_log: Callable[[str], None] | None = None,
                should_cancel: Callable[[], bool] = lambda: False,
                notices: tuple[str, ...] = ()) -> "ServerEngine":
        """Start llama-server with `options` (its spec_type is the first mode). The modes on
        offer are those these models can run: draft-model types with a draft model, MTP with a
        target that carries MTP layers. `notices`: what the user should know about how it
        was started (load_notices)."""
        engine = cls(None, binary=Path(binary), options=options, on_log=on_log,
                     spec_types=runnable_spec_types(options))
        engine._start(options, should_cancel)
        engine._notices = notices + ((engine.server.note,) if engine.server.note else ())
        return engine

    @classmethod
    def remote(cls, endpoint: Endpoint) -> "ServerEngine":
        return cls(endpoint)

    @property
    def is_managed(self) -> bool:
        return self.binary is not None

    @property
    def modes(self) -> tuple[Mode, ...]:
        if not self.is_managed:
            return (REMOTE,)
        singles = tuple(Mode.llama(t) for t in self._spec_types)
        running = Mode.llama(self.options.spec_type)  # a chain it was started with is on offer
        return singles if running in singles else singles + (running,)

    @property
    def load_notices(self) -> tuple[str, ...]:
        """How it was started, where the user should know (without repacked weights where
        they crash this CPU); llama-server says the rest in its log (View ▸ Server log)."""
        return self._notices

    @property
    def n_ctx(self) -> int:
        """The managed server's context window; 0 for a remote server (it does not say)."""
        return self.options.n_ctx if self.is_managed else 0

    def tokenize_chat(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt as llama-server renders and tokenizes it (/apply-template, /tokenize).

        Raises:
            ServerError: not a llama-server, or it refused."""
        prompt = post_json(self.endpoint, "/apply-template",
                           {"messages": self._as_text(messages)})["prompt"]
        return post_json(self.endpoint, "/tokenize",
                         {"content": prompt, "add_special": True, "parse_special": True})["tokens"]

    def _as_text(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """`messages` with the model's control tokens in them made text (control_text.py): the
        managed llama-server parses special tokens in the whole prompt it renders. A remote
        server renders and tokenizes as it does; it is not ours to rewrite what is sent there."""
        if not self.is_managed:
            return messages
        markers: set[str] = set()
        for message in messages:
            markers |= self._control_texts(message.get("content"))
        return neutralized(messages, markers)

    def _control_texts(self, text) -> set[str]:
        """The control tokens' texts that llama-server's tokenizer finds in `text`."""
        if not isinstance(text, str) or not text:
            return set()
        if text not in self._control_text_cache:
            parsed = post_json(self.endpoint, "/tokenize", {
                "content": text, "parse_special": True, "with_pieces": True})["tokens"]
            plain = set(post_json(self.endpoint, "/tokenize",
                                  {"content": text, "parse_special": False})["tokens"])
            if len(self._control_text_cache) > 512:
                self._control_text_cache.clear()
            self._control_text_cache[text] = {
                token["piece"] for token in parsed
                if token["id"] not in plain and isinstance(token.get("piece"), str)}
        return self._control_text_cache[text]

    def reserve(self, params: SamplingParams) -> int:
        """As the in-process engine: the reply's max_tokens, at most a quarter of the context."""
        return min(params.max_tokens, max(self.n_ctx // 4, 1))

    @property
    def spec_type(self) -> str | None:
        return self.options.spec_type if self.is_managed else None

    @property
    def log(self) -> list[str]:
        return list(self.server.log) if self.server else []

    def _start(self, options: ServerOptions, should_cancel=lambda: False) -> None:
        missing = [t for t in options.spec_type.split(",") if t not in self._spec_types]
        if missing:
            raise EngineError(why_not_runnable(options, missing[0]))
        gone = unreachable(options.rpc)
        if gone:
            raise ServerStartError(
                f"{', '.join(gone)} {'does' if len(gone) == 1 else 'do'} not answer: start "
                f"`draftlight engine rpc-server` there, or leave it out of the machines")
        self.close()
        server = ManagedServer(self.binary, options, on_log=self.on_log)
        server.start(should_cancel)
        # its options as it runs (without repacked weights where a start crashed): the next
        # start (another spec type) keeps them
        self.server, self.options = server, server.options
        self.endpoint = Endpoint(server.url, api_key=server.api_key)

    def use_spec_type(self, spec_type: str) -> bool:
        """Restart the managed server with another --spec-type; False if it already runs it."""
        if spec_type == self.options.spec_type and self.server and self.server.running:
            return False
        self._start(replace(self.options, spec_type=spec_type))
        return True

    def _alive(self, grace: float = 2.0) -> bool:
        """Whether the managed server still runs (a crashing one gets `grace` seconds to go)."""
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not self.server.running:
                return False
            time.sleep(0.1)
        return self.server.running

    def _why_it_stopped(self) -> str:
        line = f"llama-server stopped mid-reply: {self.server.reason()}"
        gone = unreachable(self.options.rpc)
        if gone:
            line += f" {no_longer_answer(gone)}"
        return line

    def close(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.close()

    def generate(self, messages: list[dict[str, str]], params: SamplingParams, mode: Mode, *,
                 prediction: str | None = None) -> Iterator[Event]:
        params.validate()
        if self.is_managed:
            spec = spec_type_of(mode)
            if spec != self.options.spec_type or not (self.server and self.server.running):
                yield Notice(f"Starting llama-server with --spec-type {spec}… (it has "
                             f"{HEALTH_TIMEOUT:.0f} s to load the model)")
                self.use_spec_type(spec)
            mode = Mode.llama(spec)
        else:
            mode = REMOTE
        if prediction:
            yield Notice("A server engine cannot draft from a predicted output; it is ignored.")
        stats = Stats(mode=mode, draft_kind="llama-server" if self.is_managed else "server")
        started = time.perf_counter()
        labels = ReplyLabels(vllm_marked=self._vllm_steps)
        text: list[str] = []
        timings: dict = {}
        finish = ""
        reported = [0]  # drafted tokens the Progress events have told so far

        def emit(piece: str, tokens: list[tuple[str, int]]) -> Iterator[Event]:
            if stats.new_tokens == 0:
                stats.prefill_seconds = time.perf_counter() - started
            stats.new_tokens += len(tokens)
            text.append(piece)
            for i, (source, step) in enumerate(tokens):  # the text goes with the last
                yield TextPiece(piece if i == len(tokens) - 1 else "", source, step)
            _fill(stats, timings, labels.passes, started)
            drafted, reported[0] = stats.drafted - reported[0], stats.drafted
            yield Progress(replace(stats), pass_drafted=drafted)

        try:
            for chunk in self._stream(messages, params):
                timings = chunk.get("timings") or timings
                for choice in chunk.get("choices") or []:
                    finish = choice.get("finish_reason") or finish
                for piece, tokens in labels.read(chunk):
                    yield from emit(piece, tokens)
        except GeneratorExit:
            stats.stop_reason = "cancelled"
            raise
        for piece, tokens in labels.end():
            yield from emit(piece, tokens)
        _fill(stats, timings, labels.passes, started)
        stats.stop_reason = STOP_REASONS.get(finish, finish or "eos")
        self._vllm_steps = labels.settle(stats)
        yield Done("".join(text), stats)

    def _stream(self, messages, params: SamplingParams) -> Iterator[dict]:
        body = {"messages": self._as_text(messages), "max_tokens": params.max_tokens,
                "temperature": params.temperature, "top_p": params.top_p}
        if self._extra_fields:
            body |= LLAMA_FIELDS | {"top_k": params.top_k, "min_p": params.min_p}
            if not self.is_managed:  # vLLM: each chunk's token count, and the final metrics
                body["stream_options"] = STREAM_OPTIONS
        if params.seed is not None:
            body["seed"] = params.seed
        if not self.is_managed and not self._model_asked:
            self.endpoint, self._model_asked = with_model(self.endpoint), True
        try:
            yield from stream_chat(self.endpoint, body)
        except ServerError as exc:
            cut = "(HTTP " not in str(exc)  # the stream broke, or the server went away
            if self.is_managed and self.server is not None and cut and not self._alive():
                raise ServerError(self._why_it_stopped()) from None
            # An OpenAI-style server may refuse llama.cpp's fields or vLLM's stream_options:
            # ask again without them.
            if not self._extra_fields or "(HTTP 400)" not in str(exc) or self.is_managed:
                raise
            self._extra_fields = False
            body = {k: v for k, v in body.items() if k not in LLAMA_FIELDS
                    and k not in ("top_k", "min_p", "stream_options")}
            yield from stream_chat(self.endpoint, body)


def _fill(stats: Stats, timings: dict, passes: int, started: float) -> None:
    """Stats from the server's own counters; times from here (what the user waits)."""
    stats.seconds = time.perf_counter() - started
    stats.target_passes = passes
    if not timings:
        return
    stats.drafted = int(timings.get("draft_n", 0))
    stats.accepted = int(timings.get("draft_n_accepted", 0))
    stats.prompt_tokens = int(timings.get("prompt_n", 0)) + int(timings.get("cache_n", 0))
    stats.reused_prompt_tokens = int(timings.get("cache_n", 0))
    stats.verify_seconds = float(timings.get("predicted_ms", 0.0)) / 1000
