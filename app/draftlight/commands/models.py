"""`draftlight models list|pull|rm|add|search|files`: the model store in the terminal (the hub's
actions, pull, search and files, run in models_hub.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from draftlight.commands.models_found import run_add_folder, run_pairs, run_remove_folder
from draftlight.commands.models_hub import gpu_offload, run_files, run_pull, run_search
from draftlight.regular_files import require_regular
from draftlight.store.progress_bars import ConvertBar
from draftlight.units import format_bytes
from draftlight.user_messages import UserError, error_line, note, say, visible

MAX_SKIPPED_LINES = 5  # entries of other apps' folders skipped, each said in one line


def add_models_parser(commands) -> None:
    models = commands.add_parser("models", help="list, download and remove models",
                                 description="Models on this machine and on the Hugging Face hub.")
    sub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    _add_listing_parsers(sub)
    _add_store_parsers(sub)
    _add_hub_parsers(sub)


def _add_listing_parsers(sub) -> None:
    """list, pairs, add-folder, remove-folder: what is here, and where to look."""
    listing = sub.add_parser("list", help="installed models")
    listing.set_defaults(run=_telling_notices(run_list))

    pairs = sub.add_parser("pairs", help="which models here can draft for which (yours and "
                                         "other apps')")
    pairs.set_defaults(run=_telling_notices(run_pairs))

    folder = sub.add_parser("add-folder", help="list the GGUF files of a folder too (they stay "
                                               "where they are)")
    folder.add_argument("path", type=Path, metavar="FOLDER")
    folder.set_defaults(run=run_add_folder)
    unfolder = sub.add_parser("remove-folder", help="stop listing a folder added with add-folder")
    unfolder.add_argument("path", type=Path, metavar="FOLDER")
    unfolder.set_defaults(run=run_remove_folder)


def _add_store_parsers(sub) -> None:
    """pull, rm, add, convert: what changes the models installed."""
    pull = sub.add_parser("pull", help="download a GGUF file from the hub (resumes if interrupted)")
    pull.add_argument("repo_id", metavar="REPO_ID",
                      help="e.g. bartowski/Qwen2.5-0.5B-Instruct-GGUF")
    pull.add_argument("filename", metavar="FILENAME", help="the .gguf file in that repository")
    pull.add_argument("--revision", default="main", help="branch, tag or commit (main)")
    pull.add_argument("--sha256", help="expected sha256 (default: the hub's LFS sha256)")
    _add_endpoint(pull)
    pull.set_defaults(run=_telling_notices(run_pull))

    remove = sub.add_parser("rm", help="remove a model (a downloaded file is deleted)")
    remove.add_argument("name", metavar="NAME", help="as shown by `draftlight models list`")
    remove.set_defaults(run=_telling_notices(run_rm))

    add = sub.add_parser("add", help="register a GGUF file you already have (it is not moved)")
    add.add_argument("path", type=Path, metavar="PATH")
    add.set_defaults(run=_telling_notices(run_add))

    convert = sub.add_parser(
        "convert", help="re-quantise a model to another weight type (e.g. one that verifies "
                        "drafts faster on a CPU)",
        description="Write a copy of a model in another weight type with llama.cpp's quantizer. "
                    "Q4_0, Q8_0, IQ4_NL and Q4_K_M verify drafted tokens fast on a CPU; Q4_1, "
                    "Q5_1, Q5_K and Q6_K do not. Converting from an already quantised file adds "
                    "error: compare with `python -m draftlight.bench.weights`.")
    convert.add_argument("name", metavar="NAME", help="an installed model's name, or a GGUF path")
    convert.add_argument("--type", required=True, metavar="TYPE", dest="weight_type",
                         help="Q4_0, Q8_0, Q4_K_M, IQ4_NL, Q5_K_M, Q6_K, …")
    convert.set_defaults(run=_telling_notices(run_convert))


def _add_hub_parsers(sub) -> None:
    """search, files: what the hub holds."""
    search = sub.add_parser("search", help="search the hub for GGUF repositories (one line each)")
    search.add_argument("query", metavar="TEXT")
    search.add_argument("--sort", choices=("downloads", "likes", "updated"), default="downloads",
                        help="most downloaded, most liked or most recently updated first "
                             "(default: %(default)s)")
    search.add_argument("--limit", type=int, default=30, metavar="N",
                        help="at most N repositories (default: %(default)s)")
    _add_endpoint(search)
    search.set_defaults(run=_telling_notices(run_search))

    files = sub.add_parser("files", help="a hub repository's GGUF files: quant, size, whether "
                                         "it fits in memory, whether it verifies drafts fast")
    files.add_argument("repo_id", metavar="REPO_ID")
    files.add_argument("--context", type=int, default=4096, metavar="TOKENS",
                       help="context length the memory estimate is for (default: %(default)s)")
    _add_endpoint(files)
    files.set_defaults(run=_telling_notices(run_files))


def _add_endpoint(parser) -> None:
    parser.add_argument("--endpoint", metavar="URL",
                        help="hub address (default: $DRAFTLIGHT_HF_ENDPOINT, else "
                             "https://huggingface.co)")


def _telling_notices(run):
    """Run a command, then print what the store had to repair on the way (one line each)."""
    def wrapped(args: argparse.Namespace) -> int:
        from draftlight.store.installed import take_notices
        try:
            return run(args)
        finally:
            for notice in take_notices():
                note(notice)
    return wrapped


def _say_skipped(skipped: list[str]) -> None:
    """What another app's folder holds that only looks like a model: one line each (the
    first few), after the list that shows the rest."""
    for line in skipped[:MAX_SKIPPED_LINES]:
        note(line)
    if len(skipped) > MAX_SKIPPED_LINES:
        note(f"… and {len(skipped) - MAX_SKIPPED_LINES} more entries skipped")


def run_list(args: argparse.Namespace) -> int:
    from draftlight.settings import added_model_folders
    from draftlight.store.found_models import find_models, skipped_entries
    from draftlight.store.installed import list_installed
    models = list_installed()
    found = find_models(folders=added_model_folders())
    if not models and not found:
        say("no models installed")
        _say_skipped(skipped_entries())
        return 0
    unreadable: list[str] = []  # one line for each file whose header cannot be read
    rows = [(m.name, m.source, format_bytes(m.size) if m.size else "?",
             *_weights_of(m.path, unreadable), _origin(m)) for m in models]
    # Models other apps keep, used where they are: --target and --draft take the first column
    rows += [(m.reference, m.app, format_bytes(m.size) if m.size else "?",
              *_weights_of(m.path, unreadable),
              str(m.path) + (f" (also {', '.join(m.also)})" if m.also else "")) for m in found]
    rows = [tuple(map(visible, row)) for row in rows]  # before the widths: escapes are wider
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        say("  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths)) + "  " + row[5])
    on_gpu = gpu_offload()
    say("fast/slow verify: whether this machine checks a batch of drafted tokens cheaply "
        "with that weight type" + (" (GPU build: every type is fast on the GPU)" if on_gpu
                                   else "; `models convert NAME --type Q8_0` makes a fast copy that "
                                        "keeps the model's answers"))
    for problem in unreadable:
        print(error_line(problem), file=sys.stderr)
    _say_skipped(skipped_entries())
    return 2 if unreadable else 0  # as `ls` does: the whole list, and a status that says so


def _weights_of(path: Path, unreadable: list[str]) -> tuple[str, str]:
    """(weight type, verify label) of a model file, blank where the header does not say or
    the file is missing; for a header that cannot be read, why is added to `unreadable`."""
    from draftlight.engine.auto.verify_speed import verify_speed
    from draftlight.store.gguf_info import weight_type_of
    try:
        quant = weight_type_of(path)
    except FileNotFoundError:
        return "", ""  # the row says "(file missing)"
    except OSError as exc:  # GGUFError (with the byte offset), PermissionError
        unreadable.append(str(exc))
        return "?", "(header unreadable)"
    if quant is None:
        return "", ""
    speed = verify_speed(quant, path, on_gpu=gpu_offload())
    return quant or "?", speed.label + (f" (v8 {speed.v8:.1f})" if speed.v8 is not None else "")


def _origin(model) -> str:
    missing = "" if model.exists else "  (file missing)"
    if model.converted_from:
        return f"from {model.converted_from}: {model.path}{missing}"
    return (model.repo or str(model.path)) + missing


def run_convert(args: argparse.Namespace) -> int:
    from draftlight.store.convert import ConversionCancelled, conversion_target, convert, weight_type
    from draftlight.store.installed import find_installed, register_conversion
    type_name = weight_type(args.weight_type)
    candidate = Path(args.name).expanduser()
    if candidate.suffix.lower() == ".gguf" or candidate.is_file():
        if not candidate.exists():
            raise UserError(f"no such file: {candidate}")
        require_regular(candidate)  # a FIFO or a folder: one line that says which
        source, source_name = candidate.resolve(), str(candidate.resolve())
    else:
        model = find_installed(args.name)
        if not model.exists:
            raise UserError(f"{model.name}'s file is missing: {model.path}")
        source, source_name = model.path, model.name
    from draftlight.store.default_model import DEFAULT_NAME, DEFAULT_TYPE, default_model_file
    from draftlight.store.installed import BUNDLED_NAME
    if source_name == BUNDLED_NAME and type_name == DEFAULT_TYPE:
        dest = default_model_file()  # the default model itself: made once, listed as such
        if dest.exists():
            raise UserError(f"that is the default model, already made: {DEFAULT_NAME} at {dest}")
        from draftlight.store.default_model import prepare_default_model
        bar = ConvertBar(sys.stderr, f"{source.name} -> {type_name}")
        try:
            made = prepare_default_model(bar)
        finally:
            bar.finish()
        if made.note:
            raise UserError(made.note)
        say(f"made the default model {DEFAULT_NAME} at {made.path}")
        return 0
    dest = conversion_target(source, type_name)
    if dest.exists():
        raise UserError(f"{dest} already exists; remove it first "
                        f"(`draftlight models rm NAME`) to convert again")
    bar = ConvertBar(sys.stderr, f"{source.name} -> {type_name}")
    try:
        convert(source, dest, type_name, on_progress=bar)
    except (KeyboardInterrupt, ConversionCancelled):
        bar.finish()
        say("interrupted; no file was written", file=sys.stderr)
        return 130
    finally:
        bar.finish()
    model = register_conversion(dest, source_name)
    say(f"converted {source_name} to {type_name}: {model.name} "
        f"({format_bytes(model.size or 0)}) at {dest}")
    return 0


def run_rm(args: argparse.Namespace) -> int:
    from draftlight.store.installed import remove
    model = remove(args.name)
    what = "deleted" if model.source == "hub" else "forgot (the file is left in place)"
    say(f"{what} {model.name}")
    return 0


def run_add(args: argparse.Namespace) -> int:
    from draftlight.store.installed import add_local
    model = add_local(args.path)
    say(f"added {model.name} ({model.path})")
    return 0
