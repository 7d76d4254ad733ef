"""`draftlight models list|pull|rm|add|search|files`: the model store in the terminal."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from app.units import format_bytes
from app.user_messages import note

# tqdm scales bytes with SI prefixes (unit_divisor=1000), like app.units.format_bytes
BAR_FORMAT = "{percentage:3.0f}% |{bar}| {n_fmt}B/{total_fmt}B  {rate_fmt}  ETA {remaining}"


def add_models_parser(commands) -> None:
    models = commands.add_parser("models", help="list, download and remove models",
                                 description="Models on this machine and on the Hugging Face hub.")
    sub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)

    listing = sub.add_parser("list", help="installed models")
    listing.set_defaults(run=_telling_notices(run_list))

    pull = sub.add_parser("pull", help="download a GGUF file from the hub (resumes if interrupted)")
    pull.add_argument("repo_id", metavar="REPO_ID",
                      help="e.g. bartowski/Qwen2.5-0.5B-Instruct-GGUF")
    pull.add_argument("filename", metavar="FILENAME", help="the .gguf file in that repository")
    pull.add_argument("--revision", default="main", help="branch, tag or commit (main)")
    pull.add_argument("--sha256", help="expected sha256 (default: the hub's LFS sha256)")
    pull.set_defaults(run=_telling_notices(run_pull))

    remove = sub.add_parser("rm", help="remove a model (a downloaded file is deleted)")
    remove.add_argument("name", metavar="NAME", help="as shown by `draftlight models list`")
    remove.set_defaults(run=_telling_notices(run_rm))

    add = sub.add_parser("add", help="register a GGUF file you already have (it is not moved)")
    add.add_argument("path", type=Path, metavar="PATH")
    add.set_defaults(run=_telling_notices(run_add))

    search = sub.add_parser("search", help="search the hub for GGUF repositories")
    search.add_argument("query", metavar="QUERY")
    search.set_defaults(run=_telling_notices(run_search))

    files = sub.add_parser("files", help="list a hub repository's GGUF files")
    files.add_argument("repo_id", metavar="REPO_ID")
    files.set_defaults(run=_telling_notices(run_files))

    for parser in (pull, search, files):
        parser.add_argument("--endpoint", metavar="URL",
                            help="hub address (default: $DRAFTLIGHT_HF_ENDPOINT, else "
                                 "https://huggingface.co)")


def _telling_notices(run):
    """Run a command, then print what the store had to repair on the way (one line each)."""
    def wrapped(args: argparse.Namespace) -> int:
        from app.store.installed import take_notices
        try:
            return run(args)
        finally:
            for notice in take_notices():
                note(notice)
    return wrapped


def run_list(args: argparse.Namespace) -> int:
    from app.store.installed import list_installed
    models = list_installed()
    if not models:
        print("no models installed")
        return 0
    width = max(len(m.name) for m in models)
    for model in models:
        size = format_bytes(model.size) if model.size else "?"
        origin = model.repo or str(model.path)
        missing = "" if model.exists else "  (file missing)"
        print(f"{model.name:<{width}}  {model.source:<7}  {size:>9}  {origin}{missing}")
    return 0


def run_pull(args: argparse.Namespace) -> int:
    from app.store.downloads import DownloadJob
    from app.store.hub import HubClient
    bar = PullProgress(sys.stderr)
    job = DownloadJob(HubClient(args.endpoint), args.repo_id, args.filename,
                      revision=args.revision, sha256=args.sha256, on_progress=bar.update)
    try:
        model = job.run()
    except KeyboardInterrupt:
        job.cancel()
        bar.finish()
        print(f"interrupted; {job.part_path.name} is kept: run the same command to resume",
              file=sys.stderr)
        return 130
    finally:
        bar.finish()
    print(f"installed {model.name} ({format_bytes(model.size or 0)}) at {model.path}")
    return 0


def run_rm(args: argparse.Namespace) -> int:
    from app.store.installed import remove
    model = remove(args.name)
    what = "deleted" if model.source == "hub" else "forgot (the file is left in place)"
    print(f"{what} {model.name}")
    return 0


def run_add(args: argparse.Namespace) -> int:
    from app.store.installed import add_local
    model = add_local(args.path)
    print(f"added {model.name} ({model.path})")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from app.store.hub import HubClient
    for repo in HubClient(args.endpoint).search(args.query):
        gated = "  (gated)" if repo.gated else ""
        print(f"{repo.id}  {repo.downloads or 0:,} downloads{gated}")
    return 0


def run_files(args: argparse.Namespace) -> int:
    from app.store.hub import HubClient
    for file in HubClient(args.endpoint).list_files(args.repo_id):
        unusable = "" if file.is_single_model else "  (split or projector: not supported)"
        print(f"{file.path}  {file.quant or '?'}  {format_bytes(file.size or 0)}{unusable}")
    return 0


class PullProgress:
    """`models pull` on stderr: a tqdm bar (bytes, speed, ETA) while downloading, then a line
    for the sha256 check, which takes a while on a large file."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.bar: tqdm | None = None

    def update(self, job, progress) -> None:
        from app.store.downloads import JobState
        if progress.state == JobState.DOWNLOADING and progress.total:
            if self.bar is None:
                self.bar = self._start(job, progress)
            self.bar.update(progress.downloaded - self.bar.n)
        elif progress.state == JobState.VERIFYING:
            self.finish()
            print(f"verifying sha256 of {job.filename} …", file=self.stream, flush=True)

    def _start(self, job, progress) -> tqdm:
        if progress.resumed_from:
            print(f"resuming {job.filename} at {format_bytes(progress.resumed_from)}",
                  file=self.stream, flush=True)
        tty = self.stream.isatty()
        # a log (not a terminal) gets a status every few seconds, not ten a second
        return tqdm(total=progress.total, initial=progress.resumed_from, file=self.stream,
                    unit="B", unit_scale=True, unit_divisor=1000, bar_format=BAR_FORMAT,
                    dynamic_ncols=tty, mininterval=0.1 if tty else 5.0)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
