"""The `draftlight` command. With no arguments it opens the window; subcommands run in the terminal.

Errors a user can cause (missing file, not a GGUF, incompatible draft, …) print one line to
stderr and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from draftlight import __version__
from draftlight.user_messages import UserError, error_line

EXIT_USAGE = 2
QUANTIZE_CHILD = "_quantize-child"  # hidden: draftlight.store.convert.CHILD_COMMAND
CPU_CHECK_CHILD = "_cpu-check-child"  # hidden: draftlight.engine.llama.cpu_check.CHILD_COMMAND
WATCHDOG_CHILD = "_watchdog"  # hidden: draftlight.watchdog.CHILD_COMMAND
TIE_CHILD = "_tie"  # hidden: draftlight.lifetimes.TIE_CHILD
BOUNDED_CHILD = "_bounded-child"  # hidden: draftlight.bounded_process.CHILD_COMMAND
ENGINE_HOST = "_engine-host"  # hidden: draftlight.engine.host.hosted.CHILD_COMMAND


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draftlight",
        description="Local chat with visible speculative decoding. Without a command, opens the app.")
    parser.add_argument("--version", action="version", version=f"draftlight {__version__}")
    parser.add_argument("--screenshot", metavar="PATH",
                        help="run offscreen, send --prompt, save a PNG of the window, exit")
    parser.add_argument("--record", metavar="OUT.gif",
                        help="run offscreen, send --prompt, save an animated GIF of the chat "
                             "while the reply streams, exit")
    parser.add_argument("--seconds", type=float, default=15.0, metavar="N",
                        help="with --record: record at most N seconds of the reply "
                             "(default: %(default)s)")
    parser.add_argument("--dark", action="store_true",
                        help="a dark window palette (as a dark system theme gives)")
    parser.add_argument("--prompt", help="message to send with --screenshot or --record")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    from draftlight.commands.bench import add_bench_parser
    from draftlight.commands.chat import add_chat_parser
    from draftlight.commands.engine import add_engine_parser
    from draftlight.commands.serve import add_serve_parser
    from draftlight.commands.models import add_models_parser
    add_chat_parser(commands)
    add_serve_parser(commands)
    add_models_parser(commands)
    add_bench_parser(commands)
    add_engine_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [QUANTIZE_CHILD]:  # the frozen app runs its own quantizer child this way
        from draftlight.store.quantize_child import quantize_child
        source, temp, weights, threads = argv[1:5]
        return quantize_child(source, temp, weights, int(threads))
    if argv[:1] == [CPU_CHECK_CHILD]:  # ... and its CPU check's child (draftlight.engine.llama.cpu_check)
        from draftlight.engine.llama.cpu_check_child import child
        return child(*argv[1:3])
    if argv[:1] == [WATCHDOG_CHILD]:  # ... and the watchdog of its helpers (macOS, Windows)
        from draftlight.watchdog import main as watchdog
        return watchdog(argv[1:5])
    if argv[:1] == [TIE_CHILD]:  # ... and what starts its helpers on Linux (draftlight.tie)
        from draftlight.tie import tie_and_exec
        return tie_and_exec(argv[1:])
    if argv[:1] == [ENGINE_HOST]:  # ... and its engine's host (draftlight.engine.host.hosted)
        from draftlight.engine.host.host_child import run as host
        return host(argv[1:])
    if argv[:1] == [BOUNDED_CHILD] and argv[1].startswith("draftlight."):  # ... its bounded children
        import importlib
        return importlib.import_module(argv[1]).main()
    parser = build_parser()
    args = parser.parse_args(argv)
    from draftlight.launch import remove_what_crashes_left
    remove_what_crashes_left()  # a killed run's half-written models and build folders
    try:
        if args.command is None:
            return _run_gui(args)
        return args.run(args)
    except KeyboardInterrupt:
        return 130
    except UserError as exc:
        print(error_line(exc), file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - known failures become one line, see below
        from draftlight.engine.core.errors import EngineError
        if isinstance(exc, (EngineError, OSError)):
            print(error_line(exc), file=sys.stderr)
            return EXIT_USAGE
        raise


def _run_gui(args: argparse.Namespace) -> int:
    if args.screenshot and not args.prompt:
        raise UserError("--screenshot needs --prompt")
    if args.record and not args.prompt:
        raise UserError("--record needs --prompt")
    if args.record and args.screenshot:
        raise UserError("--record and --screenshot: choose one")
    if not 0 < args.seconds <= 600:
        raise UserError("--seconds must be between 0 and 600")
    from draftlight.ui.desktop import run_app
    attach = None
    if args.record:
        from draftlight.capture.recording import RecordRun
        def attach(window):
            return RecordRun(window, args.record, args.prompt, args.seconds)
    elif args.screenshot:
        from draftlight.capture.screenshot import ScreenshotRun
        def attach(window):
            return ScreenshotRun(window, args.screenshot, args.prompt)
    # a recording shows the mode Settings choose, the default (auto) on a fresh install: auto
    # starts from priors fitted on recorded answers and drafts a certain copy from the first reply
    return run_app(args.prompt, offscreen=attach is not None, attach=attach, dark=args.dark)


def gui_main() -> int:
    """Entry point of the `draftlight-gui` script (no console window on Windows)."""
    return main(sys.argv[1:])
