"""`draftlight serve`: the loaded model as an OpenAI-compatible server on localhost."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

from draftlight.commands.api_keys import add_api_key_arguments, api_key_from
from draftlight.modes import mode_argument
from draftlight.serve.background import bind, http_server, http_stack, url_of
from draftlight.serve.guard import access_for, is_loopback
from draftlight.serve.serve_worker import DEFAULT_TIME_LIMIT
from draftlight.store.default_in_terminal import default_target_in_terminal
from draftlight.user_messages import UserError, note, say
from draftlight.commands.model_paths import model_argument

DEFAULT_PORT = 8080
DEFAULT_QUEUE = 8


def add_serve_parser(commands) -> None:
    serve = commands.add_parser(
        "serve", help="serve the model over the OpenAI API on localhost",
        description="Serve the target over an OpenAI-compatible API (GET /v1/models, POST "
                    "/v1/chat/completions, streamed or not), speculating as the app does. A "
                    "request's `prediction` (Predicted Outputs) drafts wherever the reply "
                    "follows it. Ctrl-C stops.")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default: %(default)s, this machine only)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help="port (default: %(default)s; 0 = any free one)")
    serve.add_argument("--target", type=model_argument,
                       help="target GGUF, or a found model (ollama:NAME:TAG); default: the "
                            "bundled model")
    serve.add_argument("--draft", type=model_argument, help="draft GGUF (as for `draftlight chat`)")
    serve.add_argument("--mode", type=mode_argument, default="auto", metavar="MODE",
                       help="speculation when a request has no prediction: auto (default), "
                            "off, draft, ngram, or llama:SPEC_TYPE to serve through llama.cpp's "
                            "llama-server with that --spec-type (its drafted tokens still come "
                            "back in each chunk's `draftlight` field)")
    serve.add_argument("--server-binary", metavar="PATH",
                       help="with --mode llama:…: this llama-server (default: Settings, PATH, "
                            "or the one `draftlight engine build-server` built)")
    add_api_key_arguments(serve, "require 'Authorization: Bearer KEY' on every request "
                                 "(needed with a --host other machines can reach)")
    serve.add_argument("--insecure-no-key", action="store_true",
                       help="serve a --host other machines can reach without an API key")
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME[:PORT]",
                       help="answer requests sent to this host name too (repeatable); "
                            "others than this machine's loopback names get 421")
    serve.add_argument("--allow-origin", action="append", default=[], metavar="URL",
                       help="let web pages from this origin (as in http://localhost:3000) call "
                            "the API, CORS preflight included (repeatable); other pages get 403")
    serve.add_argument("--ctx", type=int, help="context window in tokens (default: settings; automatic there: what fits in free memory, up to the model's trained context)")
    serve.add_argument("--queue-size", type=int, default=DEFAULT_QUEUE, metavar="N",
                       help="requests that may wait while one runs; more get 429 (default: "
                            "%(default)s)")
    serve.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                       help="each reply stops after this many seconds of generation, with "
                            "finish_reason \"length\" (default: %(default)g; 0 = no limit)")
    serve.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    _, create_app = http_stack()
    from draftlight.engine_spec import spec_for_command_line, with_target
    from draftlight.settings import load_settings

    settings, problem = load_settings()
    if problem:
        note(problem)
    spec = spec_for_command_line(args, settings)
    if args.queue_size < 1:
        raise UserError("--queue-size must be at least 1")
    if not 0 <= args.time_limit < math.inf:  # nan fails this too
        raise UserError("--time-limit must be a number of seconds, 0 or more (0 = no limit)")
    args.api_key = api_key_from(args)
    if not is_loopback(args.host):
        _refuse_or_warn_reachable(args)
    listener = bind(args.host, args.port)  # a port in use fails now, not after loading
    access = access_for(args.host, listener.getsockname()[1], allow_hosts=args.allow_host,
                        allow_origins=args.allow_origin)
    spec = with_target(spec, default_target_in_terminal(args.target))
    # llama.cpp in a process of its own: a crash there fails one request (500), and the next
    # request starts it again
    spec = replace(spec, hosted=True)
    worker = _loaded_worker(spec, args, listener)
    server = http_server(create_app(worker, api_key=args.api_key, access=access))
    say(f"draftlight: serving {worker.model_id} at {url_of(listener)} "
        f"(mode {spec.mode}{', API key required' if args.api_key else ''}); Ctrl-C stops",
        file=sys.stderr, flush=True)
    try:
        server.run(sockets=[listener])
    finally:
        worker.stop()  # the engine is closed on its own thread
        listener.close()
        say("draftlight: server stopped", file=sys.stderr, flush=True)
    return 0


def _refuse_or_warn_reachable(args: argparse.Namespace) -> None:
    """--host is one other machines can reach: refused without a key (or --insecure-no-key),
    else said on stderr."""
    if args.api_key is None and not args.insecure_no_key:
        raise UserError(f"--host {args.host} can be reached from other machines: give a "
                        "key (--api-key-file PATH, $DRAFTLIGHT_API_KEY or --api-key KEY), or "
                        "--insecure-no-key to serve without one")
    say(f"draftlight: warning: serving on {args.host}: other machines on the network can "
        "reach the model" + ("" if args.api_key else ", and no API key is asked for")
        + "; they must call it by an address or name given with --host or --allow-host",
        file=sys.stderr, flush=True)


def _loaded_worker(spec, args: argparse.Namespace, listener):
    """The ServeWorker, started, once it has loaded the engine `spec` names; a failed load
    closes `listener` and raises the load's error."""
    from draftlight.launch import open_engine
    from draftlight.serve.serve_worker import ServeWorker

    def load():  # on the engine thread, which owns the engine
        engine = open_engine(spec)
        for line in engine.load_notices:
            note(line)
        return engine

    model_id = Path(spec.target_path).name.removesuffix(".gguf")
    worker = ServeWorker(load, spec.mode, args.queue_size, model_id,
                         time_limit=args.time_limit or None)
    worker.start()
    worker.ready.wait()
    if worker.load_error is not None:
        listener.close()
        raise worker.load_error
    return worker
