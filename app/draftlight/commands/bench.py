"""`draftlight bench [--questions FILE.jsonl] [--target PATH] [--draft PATH] [--modes LIST]
[--max-tokens N] [--temp T] [--limit N] [--repeats N] [--out DIR] [--engine URL]`
(modes llama:SPEC_TYPE run llama.cpp's llama-server: server_modes.py), and
`draftlight bench rollback --target PATH` (app/draftlight/bench/rollback.py), and
`draftlight bench load [--target MODEL ...]` (app/draftlight/bench/load.py)"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from draftlight.bench.load import add_load_parser
from draftlight.bench.host_cost import add_hosted_parser
from draftlight.bench.prefill import add_prefill_parser
from draftlight.bench.scale import add_scale_parser
from draftlight.bench.rollback import add_rollback_parser
from draftlight.bench.runner import BENCH_MODES, DEFAULT_QUESTIONS
from draftlight.commands.api_keys import add_api_key_arguments, api_key_from
from draftlight.modes import Mode, ModeError
from draftlight.store.default_in_terminal import default_target_in_terminal
from draftlight.user_messages import UserError, say, visible_reply
from draftlight.commands.model_paths import model_argument


def add_bench_parser(commands) -> None:
    bench = commands.add_parser(
        "bench", help="measure speedup per task category and mode",
        description="Runs each question in every mode (interleaved, one process, same max "
                    "tokens; greedy unless --temp) and writes report.json, report.md and "
                    "report.png.")
    bench.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS,
                       help="Spec-Bench style JSON lines (default: the project's own set)")
    bench.add_argument("--target", type=model_argument,
                       help="target GGUF, or a found model (ollama:NAME:TAG); default: the "
                            "bundled model")
    bench.add_argument("--draft", type=model_argument,
                       help="draft GGUF, of the target's vocabulary or another one (cross-"
                            "vocabulary); default: the target drafts for itself")
    bench.add_argument("--modes", default=",".join(BENCH_MODES),
                       help=f"comma-separated, from {','.join(BENCH_MODES)} and llama:SPEC_TYPE "
                            f"(llama.cpp's llama-server on the same target with --spec-type "
                            f"SPEC_TYPE, e.g. llama:ngram-mod, llama:none); plain is always run")
    bench.add_argument("--engine", metavar="URL",
                       help="also run the questions on the OpenAI-compatible server at URL "
                            "(mode 'remote'; it decides how it decodes)")
    add_api_key_arguments(bench, "with --engine: the server's API key")
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
                            "draftlight.bench.prediction_speed; --target, --max-tokens, --limit, --repeats "
                            "apply)")
    bench.add_argument("--retry", action="store_true",
                       help="a retry's speedup instead: each question answered, then answered "
                            "again (unchanged, and after a small edit) with the first answer as "
                            "the draft, at temperatures 0 and 0.7 (draftlight.bench.retry; "
                            "--target, --max-tokens, --limit, --repeats apply)")
    bench.set_defaults(run=run_bench)
    _add_subcommands(bench)


def _add_subcommands(bench) -> None:
    """`draftlight bench rollback`, `load`, `prefill`, `hosted` and `scale`: each its module's."""
    subcommands = bench.add_subparsers(
        dest="bench_command", metavar="{rollback,load,prefill,hosted,scale}",
        help="rollback: what a rejected draft costs a model; load: time to the first token "
             "vs a bare llama.cpp load; prefill: a long prompt's read vs bare llama.cpp; "
             "hosted: the engine's own process vs this one; scale: the app after a year of "
             "use (draftlight bench rollback -h, bench load -h, bench prefill -h, bench "
             "hosted -h, bench scale -h)")
    add_rollback_parser(subcommands)
    add_load_parser(subcommands)
    add_prefill_parser(subcommands)
    add_hosted_parser(subcommands)
    add_scale_parser(subcommands)


def run_bench(args: argparse.Namespace) -> int:
    from draftlight.engine.core.sampling import SamplingParams

    if args.repeats < 1:
        raise UserError("--repeats must be at least 1")
    typed_key = args.api_key  # shown on the command line, so left out of the report
    args.api_key = api_key_from(args)
    if args.prediction:
        from draftlight.bench.prediction_speed import main as prediction_bench
        return prediction_bench(_forwarded(args))
    if args.retry:
        from draftlight.bench.retry import main as retry_bench
        return retry_bench(_forwarded(args))
    modes = bench_modes(args.modes)
    if args.engine:
        modes.append("remote")
    questions = _questions(args)
    params = SamplingParams(temperature=args.temp, max_tokens=args.max_tokens, seed=0)
    try:
        params.validate()
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    log = _run_modes(args, modes, questions, params)
    _write_report(log, args, typed_key)
    return 0


def _forwarded(args: argparse.Namespace) -> list[str]:
    """The options --prediction's and --retry's benchmarks take, as their command lines."""
    forwarded = ["--max-tokens", str(args.max_tokens), "--repeats", str(args.repeats),
                 "--questions", str(args.questions)]
    forwarded += ["--target", str(args.target)] if args.target else []
    forwarded += ["--limit", str(args.limit)] if args.limit else []
    return forwarded


def _questions(args: argparse.Namespace) -> list[dict]:
    from draftlight.bench.runner import first_of_each_category, load_questions
    try:
        questions = load_questions(args.questions)
    except (OSError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    if args.limit:
        questions = first_of_each_category(questions, args.limit)
    return questions


def _run_modes(args: argparse.Namespace, modes: list[str], questions: list[dict], params):
    """Load what `modes` need (the engine, lcp-pld's peer, the servers), run the questions
    in every mode, close them all; the RunLog."""
    from draftlight.bench.lcp_pld import PromptLookupPeer
    from draftlight.bench.runner import ProgressBar, run_benchmark
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.engine_spec import EngineSpec
    from draftlight.launch import open_engine

    target = default_target_in_terminal(args.target)
    options = LoadOptions(n_ctx=4096)
    draft = args.draft or (target if "draft" in modes else None)
    servers = _server_modes(args, modes, target, draft, options)
    # auto's costs are measured (or read from the cache) while loading, before timing starts
    engine = open_engine(EngineSpec(target_path=str(target), draft_path=draft and str(draft),
                                    n_ctx=options.n_ctx, time_auto="auto" in modes))
    peer = PromptLookupPeer(target, options) if "lcp-pld" in modes else None
    try:
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
    return log


def _write_report(log, args: argparse.Namespace, typed_key: str | None) -> None:
    """report.json, .md and .png in --out, naming the command that ran (without a typed
    key); the Markdown printed."""
    from draftlight.bench.report import write_reports
    command = "draftlight " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    if typed_key:
        command = command.replace(typed_key, "KEY")
    report = write_reports(log, args.out, command)
    print(visible_reply((args.out / "report.md").read_text()))  # it names models and files
    if not report["png_written"]:
        say("report.png skipped: install matplotlib (pip install matplotlib)", file=sys.stderr)


def bench_modes(text: str) -> list[str]:
    """--modes: the bench's own (plain, lcp-pld, …) and any mode, chains as llama:a+b. A chain
    is compared with its parts: they are run too."""
    modes: list[str] = []
    for word in (m.strip() for m in text.split(",")):
        if not word:
            continue
        if word in BENCH_MODES:
            modes.append(word)
            continue
        try:
            mode = Mode.parse(word)
        except ModeError:
            mode = None
        if mode is None or not mode.runs_on_llama_server:
            raise UserError(f"unknown mode {word!r}; choose from {', '.join(BENCH_MODES)}, "
                            f"llama:TYPE or llama:TYPE+TYPE (TYPE a llama.cpp --spec-type)")
        modes += [str(part) for part in mode.parts] + [str(mode)]
    return list(dict.fromkeys(["plain"] + [m for m in modes if m != "plain"]))


def _server_modes(args, modes, target, draft, options):
    """The server engines the llama:… and remote modes need (started by run_benchmark's caller)."""
    from draftlight.bench.server_modes import ServerModes
    from draftlight.engine.server.build import server_for_terminal
    from draftlight.engine.server.client import Endpoint, ServerError, check_url
    from draftlight.engine.server.process import ServerOptions
    from draftlight.settings import load_settings
    endpoint = None
    if args.engine:
        try:
            endpoint = Endpoint(check_url(args.engine), api_key=args.api_key)
        except ServerError as exc:
            raise UserError(str(exc)) from None
    binary, server_options = None, None
    from draftlight.bench.server_modes import is_llama_server_mode
    if any(is_llama_server_mode(m) for m in modes):
        binary = server_for_terminal(args.server_binary or load_settings()[0].llama_server)
        # Draft-model types draft with --draft, else with the target itself (as "draft" does)
        from draftlight.engine.core.errors import EngineError
        from draftlight.engine.server.rpc import rpc_addresses
        try:
            rpc = rpc_addresses(args.rpc or "")
        except EngineError as exc:
            raise UserError(f"--rpc: {exc}") from None
        server_options = ServerOptions(target=Path(target), draft=Path(draft or target),
                                       n_ctx=options.n_ctx, threads=options.n_threads, rpc=rpc)
    return ServerModes(binary, server_options, endpoint)
