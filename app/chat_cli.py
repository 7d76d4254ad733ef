"""`draftlight chat`: one question, or an interactive chat, in the terminal."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.engine.server.cli import mode_argument
from app.store.default_in_terminal import default_target_in_terminal
from app.user_messages import UserError, note

DRAFT_COLOUR = "\x1b[1;36m"  # bold cyan: tokens a draft guessed and the target accepted
RESET = "\x1b[0m"


def add_chat_parser(commands) -> None:
    chat = commands.add_parser("chat", help="chat in the terminal",
                               description="Chat in the terminal. Accepted draft tokens are "
                                           "shown in colour.")
    chat.add_argument("--mode", type=mode_argument, default="auto", metavar="MODE",
                      help="speculation: auto (n-gram lookup and --draft, only as much as pays; "
                           "the default, as in the window), off, draft (the --draft model), "
                           "ngram (prompt lookup), or llama:SPEC_TYPE: llama.cpp's own "
                           "llama-server with --spec-type SPEC_TYPE (llama:none = plain "
                           "decoding there; llama:draft-simple uses --draft)")
    chat.add_argument("--engine", metavar="URL",
                      help="answer on a running OpenAI-compatible server at URL instead "
                           "(it decides how it decodes; --target and --mode are not used)")
    chat.add_argument("--api-key", metavar="KEY", help="with --engine: the server's API key")
    chat.add_argument("--model", metavar="NAME", help="with --engine: the model to ask for")
    chat.add_argument("--rpc", metavar="HOST:PORT,...",
                      help="split the model over these machines' rpc-servers (`draftlight "
                           "engine rpc-server` there); runs on llama-server (docs/engines.md)")
    chat.add_argument("--server-binary", metavar="PATH",
                      help="with --mode llama:…: this llama-server (default: Settings, PATH, "
                           "or the one `draftlight engine build-server` built)")
    chat.add_argument("--target", type=Path,
                      help="target GGUF (default: the bundled SmolLM2-135M)")
    chat.add_argument("--draft", type=Path,
                      help="draft GGUF: one sharing the target's vocabulary, or another one "
                           "(cross-vocabulary: it drafts through text)")
    chat.add_argument("--temp", type=float, default=0.0, help="temperature; 0 = greedy (default)")
    chat.add_argument("--seed", type=int, help="random seed for a reproducible sampled run")
    chat.add_argument("--max-tokens", type=int, default=512, help="new tokens at most (512)")
    chat.add_argument("--stats", action="store_true", help="print one line of statistics")
    chat.add_argument("--json", action="store_true", help="print JSON lines instead of text")
    chat.add_argument("--no-color", action="store_true", help="no ANSI colour")
    chat.add_argument("--ctx", type=int, help="context window in tokens (default: settings, 4096)")
    chat.add_argument("question", nargs="?",
                      help="answer this and exit ('-' reads it from stdin); omit for a chat")
    chat.set_defaults(run=run_chat)


def run_chat(args: argparse.Namespace) -> int:
    from app.engine.chat_template import FALLBACK_NOTICE
    from app.engine.generator import Engine
    from app.engine.llama_backend import LoadOptions
    from app.engine.sampling import SamplingParams
    from app.settings import load_settings
    from app.store.memory import check_models_fit

    settings, problem = load_settings()
    if problem:
        note(problem)
    # Scripts depend on it: the target is --target or the bundled model, never a setting.
    target, draft = args.target, args.draft
    mode = args.mode
    if mode == "draft" and draft is None:
        raise UserError("--mode draft needs --draft PATH")
    params = SamplingParams(temperature=args.temp, seed=args.seed, max_tokens=args.max_tokens)
    try:
        params.validate()
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    n_ctx = args.ctx or settings.n_ctx
    if n_ctx < 256:
        raise UserError("--ctx must be at least 256")
    question = sys.stdin.read() if args.question == "-" else args.question
    if question is not None and not question.strip():
        raise UserError("the message is empty")
    colour = not args.no_color and not args.json and sys.stdout.isatty()
    if args.engine:
        engine, mode = _remote_engine(args), "remote"
    else:
        target = default_target_in_terminal(target)
        check_models_fit(target, draft, n_ctx=n_ctx)  # refuses, with the numbers, before loading
        rpc = _rpc(args)
        if rpc and not mode.startswith("llama:"):
            mode = {"off": "llama:none", "draft": "llama:draft-simple"}.get(mode,
                                                                           "llama:ngram-simple")
            note(f"--rpc runs on llama-server: mode {mode}")
        if mode.startswith("llama:"):
            engine = _managed_engine(args, settings, target, draft, mode, n_ctx, rpc)
        else:
            engine = Engine.load(target, draft,
                                 LoadOptions(n_ctx=n_ctx, n_threads=settings.n_threads))
    try:
        if getattr(getattr(engine, "target", None), "load_note", ""):
            note(engine.target.load_note)
        if getattr(getattr(engine, "template", None), "is_fallback", False):
            note(FALLBACK_NOTICE.format(name=Path(target).name))
        printer = JsonPrinter() if args.json else TextPrinter(colour, args.stats)
        system = settings.system_prompt.strip()
        messages = [{"role": "system", "content": system}] if system else []
        if question is not None:
            messages.append({"role": "user", "content": question.strip()})
            answer(messages, engine, params, mode, printer)
            return 0
        return interactive(engine, params, mode, printer, messages)
    finally:
        engine.close()


def _remote_engine(args):
    from app.engine.server.client import Endpoint, ServerError, check_url
    from app.engine.server.engine import ServerEngine
    try:
        return ServerEngine.remote(Endpoint(check_url(args.engine), api_key=args.api_key,
                                            model=args.model))
    except ServerError as exc:
        raise UserError(str(exc)) from None


def _rpc(args) -> tuple[str, ...]:
    from app.engine.errors import EngineError
    from app.engine.server.rpc import rpc_addresses
    try:
        return rpc_addresses(args.rpc or "")
    except EngineError as exc:
        raise UserError(f"--rpc: {exc}") from None


def _managed_engine(args, settings, target, draft, mode, n_ctx, rpc=()):
    """llama.cpp's llama-server on `target`, started here, with the mode's --spec-type."""
    from app.engine.server.build import server_for_terminal
    from app.engine.server.engine import ServerEngine, spec_type_of
    from app.engine.server.process import NEEDS_DRAFT_MODEL, ServerOptions
    spec = spec_type_of(mode)
    if spec in NEEDS_DRAFT_MODEL and draft is None:
        raise UserError(f"--mode {mode} needs --draft PATH")
    binary = server_for_terminal(args.server_binary or settings.llama_server)
    options = ServerOptions(target=Path(target), spec_type=spec, draft=draft, n_ctx=n_ctx,
                            threads=settings.n_threads, rpc=rpc)
    note(f"starting llama-server ({binary}) with --spec-type {spec}"
         + (f", split over {', '.join(rpc)}" if rpc else ""))
    engine = ServerEngine.managed(binary, options)
    if rpc:
        from app.engine.server.rpc import placement
        note(f"placed: {placement(engine.log) or 'nothing on the other machines'}")
    return engine


def answer(messages, engine, params, mode, printer) -> str:
    from app.engine.events import Done, Notice, TextPiece
    events = engine.generate(messages, params, mode)
    try:
        for event in events:
            if isinstance(event, TextPiece):
                printer.piece(event)
            elif isinstance(event, Notice):
                printer.notice(event.message)
            elif isinstance(event, Done):
                printer.done(event)
                return event.text
    finally:
        events.close()
    return ""


def interactive(engine, params, mode, printer, start: list[dict[str, str]] | None = None) -> int:
    from app.engine.errors import EngineError
    print(f"Draftlight chat. /mode {'|'.join(engine.modes)} switches speculation, /reset starts "
          f"over, Ctrl-D quits.", file=sys.stderr)
    messages: list[dict[str, str]] = list(start or [])
    while True:
        try:
            line = input(f"[{mode}] > ")
        except EOFError:
            print(file=sys.stderr)
            return 0
        line = line.strip()
        if not line:
            continue
        if line.startswith("/mode"):
            wanted = line.split(maxsplit=1)[1] if " " in line else ""
            if wanted in engine.modes:
                mode = wanted
            else:
                print(f"draftlight: no mode {wanted!r} here; choose one of "
                      f"{', '.join(engine.modes)}", file=sys.stderr)
            continue
        if line == "/reset":
            messages = list(start or [])
            continue
        messages.append({"role": "user", "content": line})
        try:
            reply = answer(messages, engine, params, mode, printer)
        except KeyboardInterrupt:
            print("\n(stopped)", file=sys.stderr)
            messages.pop()
            continue
        except EngineError as exc:  # e.g. a message longer than the context: say so, go on
            print(f"draftlight: {exc}", file=sys.stderr)
            messages.pop()
            continue
        messages.append({"role": "assistant", "content": reply})


class TextPrinter:
    def __init__(self, colour: bool, stats: bool) -> None:
        self.colour, self.stats = colour, stats

    def piece(self, piece) -> None:
        text = piece.text
        if self.colour and piece.source == "draft" and text:
            text = f"{DRAFT_COLOUR}{text}{RESET}"
        sys.stdout.write(text)
        sys.stdout.flush()

    def notice(self, message: str) -> None:
        print(f"[{message}]", file=sys.stderr)

    def done(self, done) -> None:
        sys.stdout.write("\n")
        if self.stats:
            print(done.stats.summary())
        sys.stdout.flush()


class JsonPrinter:
    def _emit(self, obj) -> None:
        sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def piece(self, piece) -> None:
        if piece.text:
            line = {"type": "token", "text": piece.text, "source": piece.source}
            if piece.origin is not None:  # a drafted token: where it was copied or guessed from
                line["origin"] = piece.origin
            self._emit(line)

    def notice(self, message: str) -> None:
        self._emit({"type": "notice", "message": message})

    def done(self, done) -> None:
        self._emit({"type": "done", "text": done.text, "stats": done.stats.to_dict()})
