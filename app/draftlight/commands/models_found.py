"""`draftlight models pairs`, `add-folder` and `remove-folder`: the models found on this
computer besides Draftlight's own (store.found_models), which can draft for which
(store.pairs), and the folders the user adds to them (Settings.model_folders)."""

from __future__ import annotations

import argparse
from pathlib import Path

from draftlight.units import format_bytes
from draftlight.user_messages import UserError, say


def run_add_folder(args: argparse.Namespace) -> int:
    from draftlight.store.found_models import find_models, forget_found
    folder = args.path.expanduser().resolve()
    if not folder.is_dir():
        raise UserError(f"{args.path} is not a folder")
    folders = _folders()
    if folder not in folders:
        _save_folders(folders + [folder])
    forget_found()
    found = [m for m in find_models(folders=_folders()) if m.app == "a folder you added"
             and folder in m.path.parents]
    say(f"{folder}: {len(found)} GGUF model{'s' if len(found) != 1 else ''} "
        f"(`draftlight models list` shows them)")
    return 0


def run_remove_folder(args: argparse.Namespace) -> int:
    folder = args.path.expanduser().resolve()
    folders = _folders()
    if folder not in folders:
        raise UserError(f"{args.path} was not added ({len(folders)} folder"
                        f"{'s' if len(folders) != 1 else ''} are)")
    _save_folders([f for f in folders if f != folder])
    say(f"{folder} is no longer listed (its files are untouched)")
    return 0


def _folders() -> list[Path]:
    from draftlight.settings import added_model_folders
    return [f.resolve() for f in added_model_folders()]


def _save_folders(folders: list[Path]) -> None:
    from dataclasses import replace
    from draftlight.settings import load_settings, save_settings
    settings = load_settings()[0]
    save_settings(replace(settings, model_folders="\n".join(str(f) for f in folders)))


def run_pairs(args: argparse.Namespace) -> int:
    """For each model, the drafts it can use here, best first."""
    from draftlight.settings import added_model_folders
    from draftlight.store.found_models import every_model
    from draftlight.store.model_facts import shared_facts
    from draftlight.store.pairs import drafts_for
    models = [m for m in every_model(added_model_folders()) if m.exists]
    facts = shared_facts()  # headers read once, kept for the window's lists too
    lines = []
    for target in models:
        for choice in drafts_for(target, models, facts)[:3]:
            lines.append(f"{target.name}  +  {choice.draft.name}  "
                         f"({format_bytes(target.size)} + {format_bytes(choice.draft.size)}; "
                         f"{choice.why})")
    facts.save()
    if not lines:
        say("no pairs: no model here is small enough to draft for another (a draft is at "
            "most a third of its target's size)")
        return 0
    for line in lines:
        say(line)
    say("use one: draftlight chat --target TARGET --draft DRAFT (same vocabulary drafts "
        "token for token; another drafts through text)")
    return 0
