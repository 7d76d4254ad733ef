"""`draftlight bench [--questions FILE.jsonl] [--target PATH] [--draft PATH] [--modes LIST]
[--max-tokens N] [--temp T] [--limit N] [--repeats N] [--out DIR] [--engine URL]`
(modes llama:SPEC_TYPE run llama.cpp's llama-server: server_modes.py), and
`draftlight bench rollback --target PATH` (app/bench/rollback.py)"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from app.bench.rollback import add_rollback_parser
from app.bench.runner import BENCH_MODES, DEFAULT_QUESTIONS
from app.store.default_in_terminal import default_target_in_terminal
from app.user_messages import UserError


def add_bench_parser(commands) -> None:
    bench = commands.add_parser(
        "bench", help="measure speedup per task category and mode",
        description="Runs each question in every mode (interleaved, one process, same max "
                    "tokens; greedy unless --temp) and writes report.json, report.md and "
                    "report.png.")
    bench.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS,
                       help="Spec-Bench style JSON lines (default: the project's own set)")
    bench.add_argument("--target", type=Path, help="target GGUF (default: the bundled model)")
    bench.add_argument("--draft", type=Path,
                       help="draft GGUF, of the target's vocabulary or another one (cross-"
                            "vocabulary); default: the target drafts for itself")
    bench.add_argument("--modes", default=",".join(BENCH_MODES),
                       help=f"comma-separated, from {','.join(BENCH_MODES)} and llama:SPEC_TYPE "
                            f"(llama.cpp's llama-server on the same target with --spec-type "
                            f"SPEC_TYPE, e.g. llama:ngram-mod, llama:none); plain is always run")
    bench.add_argument("--engine", metavar="URL",
                       help="also run the questions on the OpenAI-compatible server at URL "
                            "(mode 'remote'; it decides how it decodes)")
    bench.add_argument("--api-key", metavar="KEY", help="with --engine: the server's API key")
    bench.add_argument("--rpc", metavar="HOST:PORT,...",
                       help="run the llama:… modes split over these machines' rpc-servers")
    bench.add_argument("--server-binary", metavar="PATH",
                       help="the llama-server for llama:… modes (default: Settings, PATH, or "
                            "the one `draftlight engine build-server` built)")
    bench.add_argument("--max-tokens", type=int, default=128, help="new tokens per turn (128)")
    bench.add_argument("--temp", type=float, default=0.0, help="temperature (0 = greedy)")
    bench.add_argument("--limit", type=int, help="first N questions of each category")
    bench.add_argument("--repeats", type=int, default=1,
                       help="run the question set N times (error bars get tighter)")
    bench.add_argument("--out", type=Path, default=Path("bench-out"), help="report folder")
    bench.add_argument("--prediction", action="store_true",
                       help="Predicted Outputs instead: the code-editing questions with their "
                            "own code as the prediction, vs plain decoding (python -m "
                            "app.bench.prediction; --target, --max-tokens, --limit, --repeats "
                            "apply)")
    bench.set_defaults(run=run_bench)
    add_rollback_parser(bench.add_subparsers(
        dest="bench_command", metavar="rollback",
        help="rollback: what a rejected draft costs a model (draftlight bench rollback -h)"))


def run_bench(args: argparse.Namespace) -> int:
    from app.bench.lcp_pld import PromptLookupPeer
    from app.bench.report import write_reports
    from app.bench.runner import (ProgressBar, first_of_each_category, load_questions,
                                  run_benchmark)
    from app.engine.generator import Engine
    from app.engine.llama_backend import LoadOptions
    from app.engine.sampling import SamplingParams

    if args.repeats < 1:
        raise UserError("--repeats must be at least 1")
    if args.prediction:
        from app.bench.prediction import main as prediction_bench
        forwarded = ["--max-tokens", str(args.max_tokens), "--repeats", str(args.repeats),
                     "--questions", str(args.questions)]
        forwarded += ["--target", str(args.target)] if args.target else []
        forwarded += ["--limit", str(args.limit)] if args.limit else []
        return prediction_bench(forwarded)
    from app.engine.server.process import SPEC_TYPES
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in BENCH_MODES
               and not (m.startswith("llama:") and m[6:] in SPEC_TYPES)]
    if unknown:
        raise UserError(f"unknown mode(s) {', '.join(unknown)}; choose from "
                        f"{', '.join(BENCH_MODES)} or llama:TYPE with TYPE one of "
                        f"{', '.join(SPEC_TYPES)}")
    modes = ["plain"] + [m for m in modes if m != "plain"]
    if args.engine:
        modes.append("remote")
    try:
        questions = load_questions(args.questions)
    except (OSError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    if args.limit:
        questions = first_of_each_category(questions, args.limit)
    params = SamplingParams(temperature=args.temp, max_tokens=args.max_tokens, seed=0)
    try:
        params.validate()
    except ValueError as exc:
        raise UserError(str(exc)) from exc

    target = default_target_in_terminal(args.target)
    options = LoadOptions(n_ctx=4096)
    draft = args.draft or (target if "draft" in modes else None)
    servers = _server_modes(args, modes, target, draft, options)
    engine = Engine.load(target, draft, options)
    peer = PromptLookupPeer(target, options) if "lcp-pld" in modes else None
    try:
        if "auto" in modes:
            engine.prepare_auto()  # measured (or cached) before timing starts
        servers.start_all(modes)
        server_passes = servers.time_passes(modes)
        log = run_benchmark(engine, questions, modes, params, peer, ProgressBar(),
                            repeats=args.repeats, servers=servers)
        log.server_passes = server_passes
    finally:
        servers.close()
        engine.close()
        if peer:
            peer.close()
    command = "draftlight " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    if args.api_key:
        command = command.replace(args.api_key, "KEY")
    report = write_reports(log, args.out, command)
    print((args.out / "report.md").read_text())
    if not report["png_written"]:
        print("report.png skipped: install matplotlib (pip install matplotlib)", file=sys.stderr)
    return 0


def _server_modes(args, modes, target, draft, options):
    """The server engines the llama:… and remote modes need (started by run_benchmark's caller)."""
    from app.bench.server_modes import ServerModes
    from app.engine.server.build import server_for_terminal
    from app.engine.server.client import Endpoint, ServerError, check_url
    from app.engine.server.process import ServerOptions
    from app.settings import load_settings
    endpoint = None
    if args.engine:
        try:
            endpoint = Endpoint(check_url(args.engine), api_key=args.api_key)
        except ServerError as exc:
            raise UserError(str(exc)) from None
    binary, server_options = None, None
    if any(m.startswith("llama:") for m in modes):
        binary = server_for_terminal(args.server_binary or load_settings()[0].llama_server)
        # Draft-model types draft with --draft, else with the target itself (as "draft" does)
        from app.engine.errors import EngineError
        from app.engine.server.rpc import rpc_addresses
        try:
            rpc = rpc_addresses(args.rpc or "")
        except EngineError as exc:
            raise UserError(f"--rpc: {exc}") from None
        server_options = ServerOptions(target=Path(target), draft=Path(draft or target),
                                       n_ctx=options.n_ctx, threads=options.n_threads, rpc=rpc)
    return ServerModes(binary, server_options, endpoint)
