"""`draftlight engine build-server`: find llama.cpp's llama-server, or build it once."""

from __future__ import annotations

import argparse
import sys


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


def run_build_server(args: argparse.Namespace) -> int:
    from app.engine.server.build import build_server, built_server_path, find_server
    from app.settings import load_settings
    settings, _ = load_settings()
    found = None if args.rebuild else find_server(settings.llama_server or None)
    if found is None:
        if args.rebuild and built_server_path().is_file():
            built_server_path().unlink()
        found = build_server(_progress, sources=args.sources, jobs=args.jobs)
        sys.stderr.write("\n")
    print(found)
    return 0


def _progress(what: str, percent: int) -> None:
    shown = f"[{percent:3d}%] " if percent >= 0 else ""
    sys.stderr.write(f"\r\x1b[K{shown}{what}"[:120] if sys.stderr.isatty() else f"{shown}{what}\n")
    sys.stderr.flush()
