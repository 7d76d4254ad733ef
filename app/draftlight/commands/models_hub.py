"""`draftlight models pull|search|files`: the Hugging Face hub in the terminal: a file downloaded
into the store (resumable), repositories searched, and a repository's GGUF files with the one
that fits this machine. store/hub.py and store/downloads.py do the work; this prints it."""

from __future__ import annotations

import argparse
import sys

from draftlight.store.progress_bars import PullProgress
from draftlight.units import format_bytes
from draftlight.user_messages import say, visible


def run_pull(args: argparse.Namespace) -> int:
    from draftlight.store.downloads import DownloadJob
    from draftlight.store.hub import HubClient
    bar = PullProgress(sys.stderr)
    job = DownloadJob(HubClient(args.endpoint), args.repo_id, args.filename,
                      revision=args.revision, sha256=args.sha256, on_progress=bar.update)
    try:
        model = job.run()
    except KeyboardInterrupt:
        job.cancel()
        bar.finish()
        say(f"interrupted; {job.part_path.name} is kept: run the same command to resume",
            file=sys.stderr)
        return 130
    finally:
        bar.finish()
    say(f"installed {model.name} ({format_bytes(model.size or 0)}) at {model.path}")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from draftlight.store.hub import HubClient
    from draftlight.units import format_age
    repos = HubClient(args.endpoint).search(args.query, sort=args.sort, limit=args.limit)
    if not repos:
        say(f"no GGUF repositories match {args.query!r}")
        return 0
    now = datetime.now(timezone.utc)
    # every field is the hub's (its owners'): shown inert, escaped before the widths
    width = max(len(visible(r.id)) for r in repos)
    for repo in repos:
        facts = [" ".join(x for x in (repo.parameter_label, repo.family) if x) or "-",
                 _counted(repo.downloads or 0, "download"), _counted(repo.likes or 0, "like"),
                 f"updated {format_age(repo.last_modified, now)}" if repo.last_modified else "",
                 repo.licence or "", "gated" if repo.gated else ""]
        say(f"{visible(repo.id):<{width}}  " + "  ".join(x for x in facts if x))
    return 0


def _counted(n: int, what: str) -> str:
    from draftlight.units import format_count
    return f"{format_count(n)} {what}{'' if n == 1 else 's'}"


def run_files(args: argparse.Namespace) -> int:
    from draftlight.engine.auto.verify_speed import verify_speed
    from draftlight.store.file_choice import file_options, recommend
    from draftlight.store.hub import HubClient
    files = HubClient(args.endpoint).list_files(args.repo_id)
    options = file_options(files, n_ctx=args.context)
    if not options:
        say(f"{args.repo_id} has no single-file GGUF model")
    on_gpu = gpu_offload()
    best = recommend(options, n_ctx=args.context,
                     fast=lambda f: bool(verify_speed(f.quant, on_gpu=on_gpu).fast))
    rows = [("FILE", "QUANT", "SIZE", "MEMORY", "VERIFY", "")]
    for option in options:
        file = option.file
        rows.append((file.path, file.quant or "?", format_bytes(file.size or 0),
                     option.fit.value if option.fit else "?",
                     verify_speed(file.quant, on_gpu=on_gpu).label or "?",
                     "<- recommended" if file == best.file else ""))
    rows = [tuple(map(visible, row)) for row in rows]  # a file's name is the repository's
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows if options else ():
        say(("  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths)) + "  " + row[5]).rstrip())
    skipped = [f.path for f in files if not f.is_single_model]
    if skipped:
        say(f"not listed (split parts or vision projectors): {len(skipped)} files")
    if options:
        say(best.reason)
    return 0


def gpu_offload() -> bool:
    """Whether this llama.cpp build offloads to a GPU (False without llama.cpp)."""
    try:
        from draftlight.engine.llama.llama_load import gpu_offload_supported
        return gpu_offload_supported()
    except ImportError:
        return False
