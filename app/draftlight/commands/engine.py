"""`draftlight engine build-server`: find llama.cpp's llama-server, or build it once;
`draftlight engine rpc-server`: lend this machine's devices to a model split over several."""

from __future__ import annotations

import argparse
import sys

from draftlight.user_messages import say, visible


def add_engine_parser(commands) -> None:
    engine = commands.add_parser(
        "engine", help="llama.cpp's llama-server, for the llama-server engine",
        description="Tools for the server engines (docs/engines.md).")
    actions = engine.add_subparsers(dest="engine_command", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build-server", help="find llama-server or build it, and print its path",
        description="Print the path of the llama-server the llama-server engine runs: the one "
                    "Settings name, one on PATH, or one built here from the llama.cpp sources "
                    "of the installed llama-cpp-python (a few minutes, once per version; "
                    "needs cmake and a C++ compiler). Ctrl-C cancels a build.")
    build.add_argument("--sources", metavar="PATH",
                       help="build from this llama-cpp-python sdist (.tar.gz) or llama.cpp "
                            "tree instead of downloading the sdist")
    build.add_argument("--rebuild", action="store_true",
                       help="build even when a llama-server is found")
    build.add_argument("--jobs", type=int, help="parallel compile jobs (default: all cores)")
    build.set_defaults(run=run_build_server)
    rpc = actions.add_parser(
        "rpc-server", help="lend this machine to a model split over several (llama.cpp RPC)",
        description="Run llama.cpp's rpc-server: a llama-server on another machine, started "
                    "with --rpc THIS_HOST:PORT (draftlight chat/bench --rpc, or Settings ▸ "
                    "Engine), then keeps part of the model here and computes it. llama.cpp's "
                    "RPC has no authentication: whoever can reach the port can use this "
                    "machine's devices and memory (it prints which). An address other machines "
                    "can reach needs --expose-unauthenticated; use one on a private network "
                    "only, never an open one.")
    rpc.add_argument("--port", type=int, default=50052, help="port to listen on (50052)")
    rpc.add_argument("--host", default="127.0.0.1",
                     help="address to listen on (default 127.0.0.1: this machine only)")
    rpc.add_argument("--expose-unauthenticated", action="store_true",
                     help="listen on a --host other machines can reach, though anyone who "
                          "reaches it can use this machine's devices without a key")
    rpc.add_argument("--threads", type=int, help="CPU threads (default: llama.cpp's)")
    rpc.set_defaults(run=run_rpc_server)


def run_build_server(args: argparse.Namespace) -> int:
    from draftlight.engine.server.build import build_server, built_server_path, find_server
    from draftlight.settings import load_settings
    settings, _ = load_settings()
    found = None if args.rebuild else find_server(settings.llama_server or None)
    if found is None:
        if args.rebuild and built_server_path().is_file():
            built_server_path().unlink()
        found = build_server(_progress, sources=args.sources, jobs=args.jobs)
        sys.stderr.write("\n")
    say(str(found))
    return 0


def run_rpc_server(args: argparse.Namespace) -> int:
    from draftlight.engine.server.build import find_rpc_server
    from draftlight.engine.server.process import popen_tied
    from draftlight.engine.server.rpc import is_loopback_host, lent_devices, rpc_devices
    from draftlight.user_messages import UserError
    if not 0 < args.port < 65536:
        raise UserError("--port must be between 1 and 65535")
    where = f"{args.host}:{args.port}"
    exposed = not is_loopback_host(args.host)
    if exposed and not args.expose_unauthenticated:
        raise UserError(f"rpc-server has no authentication: on {where} anyone who can reach it "
                        "could use this machine's devices and memory; llama.cpp says never to "
                        "expose it to an open network. On a private network, add "
                        "--expose-unauthenticated")
    binary = find_rpc_server()
    if binary is None:
        raise UserError("no rpc-server here yet: `draftlight engine build-server` builds it "
                        "with llama-server (a few minutes, once)")
    command = [str(binary), "--host", args.host, "--port", str(args.port)]
    command += ["--threads", str(args.threads)] if args.threads else []
    # Named on its command line, the devices lent are exactly the ones printed here.
    devices = lent_devices(rpc_devices(binary))
    command += ["--device", ",".join(d.name for d in devices)] if devices else []
    lent = ", ".join(map(str, devices)) or "the devices rpc-server chooses (it did not list them)"
    if exposed:
        say(f"draftlight: warning: rpc-server on {where} has no authentication: anyone who "
            f"can reach it can use {lent} and read the model. Use it on a private network "
            "only, never an open one.", file=sys.stderr, flush=True)
    say(f"draftlight: lending this machine at {where}: {lent} (start llama-server elsewhere "
        f"with --rpc {where}); Ctrl-C stops", file=sys.stderr, flush=True)
    process = popen_tied(command)  # stops with this command, however it is stopped
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.terminate()
        process.wait(timeout=10)
        return 130


def _progress(what: str, percent: int) -> None:
    shown = f"[{percent:3d}%] " if percent >= 0 else ""
    what = visible(what)  # a build's own output can carry escapes; only "\r\x1b[K" is ours
    sys.stderr.write(f"\r\x1b[K{shown}{what}"[:120] if sys.stderr.isatty() else f"{shown}{what}\n")
    sys.stderr.flush()
