"""`draftlight chat`: one question, or an interactive chat, in the terminal."""

from __future__ import annotations

import argparse
import sys
import threading
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from draftlight.commands.api_keys import add_api_key_arguments, api_key_from
from draftlight.modes import mode_argument
from draftlight.store.default_in_terminal import default_target_in_terminal
from draftlight.user_messages import UserError, json_line, note, say, visible_reply
from draftlight.store.attachments import with_attachments
from draftlight.commands.model_paths import model_argument
from draftlight.engine_kind import EngineKind

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
    add_api_key_arguments(chat, "with --engine: the server's API key")
    chat.add_argument("--model", metavar="NAME", help="with --engine: the model to ask for")
    chat.add_argument("--rpc", metavar="HOST:PORT,...",
                      help="split the model over these machines' rpc-servers (`draftlight "
                           "engine rpc-server` there); runs on llama-server (docs/engines.md)")
    chat.add_argument("--server-binary", metavar="PATH",
                      help="with --mode llama:…: this llama-server (default: Settings, PATH, "
                           "or the one `draftlight engine build-server` built)")
    chat.add_argument("--target", type=model_argument,
                      help="target GGUF (default: the bundled SmolLM2-135M)")
    chat.add_argument("--draft", type=model_argument,
                      help="draft GGUF: one sharing the target's vocabulary, or another one "
                           "(cross-vocabulary: it drafts through text)")
    chat.add_argument("--attach", action="append", default=[], metavar="FILE",
                      help="a file to ask about (text, Markdown, code, PDF, Word, HTML): it goes "
                           "into the first message under a header naming it; repeatable")
    chat.add_argument("--edit", metavar="FILE",
                      help="a file to change: attached, and its text is the reply's Predicted "
                           "Output (drafts, never shown to the model), as serve's prediction is")
    chat.add_argument("--temp", type=float, default=0.0, help="temperature; 0 = greedy (default)")
    chat.add_argument("--seed", type=int, help="random seed for a reproducible sampled run")
    chat.add_argument("--max-tokens", type=int, default=512, help="new tokens at most (512)")
    chat.add_argument("--stats", action="store_true", help="print one line of statistics")
    chat.add_argument("--json", action="store_true", help="print JSON lines instead of text")
    chat.add_argument("--no-color", action="store_true", help="no ANSI colour")
    chat.add_argument("--ctx", type=int, help="context window in tokens (default: settings; automatic there: what fits in free memory, up to the model's trained context)")
    chat.add_argument("question", nargs="?",
                      help="answer this and exit ('-' reads it from stdin); omit for a chat")
    chat.set_defaults(run=run_chat)


def run_chat(args: argparse.Namespace) -> int:
    from draftlight.engine_spec import spec_for_command_line
    from draftlight.launch import open_engine
    from draftlight.settings import load_settings

    args.api_key = api_key_from(args)
    settings, problem = load_settings()
    if problem:
        note(problem)
    # Scripts depend on it: the target is --target or the bundled model, never a setting.
    spec = spec_for_command_line(args, settings)
    params = _sampling_params(args)
    question = sys.stdin.read() if args.question == "-" else args.question
    if question is not None and not question.strip():
        raise UserError("the message is empty")
    attachments = read_attachments(args.attach + ([args.edit] if args.edit else []))
    # --edit: the file as the reply's Predicted Output (an edit repeats most of it)
    prediction = attachments[-1].text if args.edit else None
    colour = not args.no_color and not args.json and sys.stdout.isatty()
    spec = _hosted_spec(spec, args)
    engine = open_engine(spec)
    try:
        _say_how_it_loaded(engine, spec)
        printer = JsonPrinter() if args.json else TextPrinter(colour, args.stats)
        system = settings.system_prompt.strip()
        messages = [{"role": "system", "content": system}] if system else []
        if question is not None:
            messages.append({"role": "user",
                             "content": with_attachments(question.strip(), attachments)})
            answer(messages, engine, params, spec.mode, printer, prediction)
            return 0
        if attachments:  # an interactive chat: the files open it, as a message of their own
            messages.append({"role": "user", "content": with_attachments(
                "Here are the files I want to ask about.", attachments)})
            messages.append({"role": "assistant",
                             "content": answer(messages, engine, params, spec.mode, printer)})
        return interactive(engine, params, spec.mode, printer, messages)
    finally:
        engine.close()


def _sampling_params(args: argparse.Namespace):
    from draftlight.engine.core.sampling import SamplingParams
    params = SamplingParams(temperature=args.temp, seed=args.seed, max_tokens=args.max_tokens)
    try:
        params.validate()
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    return params


def _hosted_spec(spec, args: argparse.Namespace):
    """The EngineSpec the chat opens: its target, and llama.cpp in a process of its own."""
    from draftlight.engine_spec import with_target
    if spec.engine != EngineKind.REMOTE:
        spec = with_target(spec, default_target_in_terminal(args.target))
    # the first answer does not wait for what is measured about the models: an interactive
    # chat measures while it waits for the next line (measured_meanwhile)
    # llama.cpp in a process of its own: a crash there is one line (exit 2), not a segfault
    spec = replace(spec, measure_later=True, time_auto=False, hosted=True)
    if spec.engine == EngineKind.LLAMA_SERVER:
        note(f"starting llama-server with --spec-type {spec.spec_type}"
             + (f", split over {spec.rpc_servers}" if spec.rpc_servers else ""))
    return spec


def _say_how_it_loaded(engine, spec) -> None:
    if spec.rpc_servers:
        from draftlight.engine.server.rpc import placement
        note(f"placed: {placement(engine.log) or 'nothing on the other machines'}")
    for line in engine.load_notices:
        note(line)


def answer(messages, engine, params, mode, printer, prediction: str | None = None) -> str:
    from draftlight.engine.reply.events import Done, Notice, TextPiece
    printer.messages = messages  # where origins point (an attached file's name and page)
    events = engine.generate(messages, params, mode, prediction=prediction)
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


@contextmanager
def measured_meanwhile(engine):
    """While the block runs (the user types), the in-process engine measures what it has not
    yet (Engine.measure_next) on a thread of its own, which stops at its next pass and is
    joined when the block ends: the engine is used by one thread at a time."""
    if not hasattr(engine, "measure_next"):
        yield
        return
    from draftlight.engine.auto.measuring import MeasurementInterrupted
    stop = threading.Event()

    def measure() -> None:
        try:
            engine.measure(should_cancel=stop.is_set)
        except MeasurementInterrupted:
            pass
        except Exception as exc:  # noqa: BLE001 - auto keeps its prior; the chat goes on
            say(f"draftlight: measuring the model failed: {exc}", file=sys.stderr)

    worker = threading.Thread(target=measure, name="measuring", daemon=True)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join()


def interactive(engine, params, mode, printer, start: list[dict[str, str]] | None = None) -> int:
    """The chat after `start`: a line at a time until Ctrl-D (what each does:
    interactive_chat.Conversation), the engine measuring while it waits for one."""
    from draftlight.commands.interactive_chat import Conversation
    print(f"Draftlight chat. /mode {'|'.join(map(str, engine.modes))} switches speculation, "
          f"/retry answers the last question again (drafted by the earlier answer), /edit TEXT replaces it, "
          f"/continue writes more of the last answer, /reset starts over, Ctrl-D quits.",
          file=sys.stderr)

    def ask(messages, mode, prediction):
        return answer(messages, engine, params, mode, printer, prediction)

    conversation = Conversation(engine, ask, mode, start)
    while True:
        try:
            with measured_meanwhile(engine):
                line = input(f"[{conversation.mode}] > ")
        except EOFError:
            print(file=sys.stderr)
            return 0
        line = line.strip()
        if line:
            conversation.take(line)


class TextPrinter:
    def __init__(self, colour: bool, stats: bool) -> None:
        self.colour, self.stats = colour, stats

    def piece(self, piece) -> None:
        text = visible_reply(piece.text)  # the model's: its escapes are shown, never obeyed
        if self.colour and piece.source == "draft" and text:
            text = f"{DRAFT_COLOUR}{text}{RESET}"
        sys.stdout.write(text)
        sys.stdout.flush()

    def notice(self, message: str) -> None:
        say(f"[{message}]", file=sys.stderr)

    def done(self, done) -> None:
        sys.stdout.write("\n")
        if self.stats:
            say(done.stats.summary())
            if done.stats.auto_note:  # a note: the figures' line stays the last on stdout
                note(done.stats.auto_note)
        sys.stdout.flush()


class JsonPrinter:
    messages: list = []  # the conversation being answered (answer() sets it)

    def _emit(self, obj) -> None:
        sys.stdout.write(json_line(obj) + "\n")
        sys.stdout.flush()

    def piece(self, piece) -> None:
        if piece.text:
            line = {"type": "token", "text": piece.text, "source": piece.source}
            if piece.origin is not None:  # a drafted token: where it was copied or guessed from
                from draftlight.store.attachments import attachment_origin
                line["origin"] = attachment_origin(piece.origin, self.messages).record()
            self._emit(line)

    def notice(self, message: str) -> None:
        self._emit({"type": "notice", "message": message})

    def done(self, done) -> None:
        self._emit({"type": "done", "text": done.text, "stats": done.stats.to_dict()})


def read_attachments(paths: list[str]) -> list:
    """--attach's files, each read whole before anything loads; one that cannot be attached
    stops the command with the line that says why."""
    from draftlight.store.attachments import AttachmentError, read_attachment
    attachments = []
    for path in paths:
        try:
            attachment = read_attachment(Path(path))
        except AttachmentError as exc:
            raise UserError(f"cannot attach {exc}") from None
        if attachment.sha256 not in {a.sha256 for a in attachments}:
            attachments.append(attachment)
    return attachments
