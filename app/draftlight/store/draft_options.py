"""Drafts a target can use, each with why it qualifies.

Three sources, in this order: the curated pairs of models.toml (known to pair), the hub's smaller
models of the target's family (same tokenizer, guessed from the names), and any small installed
model of another family, which drafts through the tokens both vocabularies share
(app/draftlight/engine/step/cross_vocab.py). Names are only a guess: the engine compares the real vocabularies
when it loads the pair, and refuses one that shares too little.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from draftlight.store.catalog import Catalog
from draftlight.store.curated_copies import copy_of
from draftlight.store.hub import HubRepo
from draftlight.store.installed import InstalledModel
from draftlight.store.model_names import could_draft_for, family_from_name

CURATED, SAME_TOKENIZER, CROSS_VOCABULARY = "curated", "same tokenizer", "cross-vocabulary"
# An installed model drafts only if it is this much smaller than the target (a draft costs a
# share of the target's time per token: at a third of its size it rarely pays).
MAX_DRAFT_SHARE = 0.25
MAX_DRAFT_BYTES = 1_500_000_000  # when the target's size is not known yet


@dataclass(frozen=True)
class DraftOption:
    name: str  # what the list shows
    kind: str  # CURATED, SAME_TOKENIZER or CROSS_VOCABULARY
    why: str  # one line: why it qualifies
    repo: str | None = None
    file: str | None = None  # None for a hub repository whose file is chosen at download time
    size: int | None = None  # bytes, where known (exact or a hint)
    sha256: str | None = None
    path: Path | None = None  # on disk already

    @property
    def installed(self) -> bool:
        return self.path is not None


def draft_options(target_repo: str, *, target_size: int | None, catalog: Catalog | None,
                  installed: list[InstalledModel],
                  hub_repos: list[HubRepo] = ()) -> list[DraftOption]:
    """Curated, then the hub's same-family repositories, then installed cross-vocabulary
    drafts; one entry per model."""
    options: list[DraftOption] = []
    seen: set[str] = set()
    for model, paired in _curated_for(target_repo, catalog):
        have = copy_of(model, installed)  # downloaded, bundled, or another app's copy
        path = have.path if have else None
        why = ("curated pair: known to work with this target" if paired else
               f"curated: a smaller {family_from_name(model.repo)} model, same tokenizer")
        options.append(DraftOption(model.name, CURATED, why, model.repo, model.file,
                                   model.approx_size, model.sha256, path))
        seen.add(model.repo.lower())
    for repo in hub_repos:
        if repo.id.lower() in seen or not could_draft_for(target_repo, repo.id):
            continue
        family = family_from_name(repo.id)
        options.append(DraftOption(repo.id, SAME_TOKENIZER,
                                   f"same tokenizer: a smaller {family} model on the hub",
                                   repo.id))
        seen.add(repo.id.lower())
    limit = target_size * MAX_DRAFT_SHARE if target_size else MAX_DRAFT_BYTES
    target_family = family_from_name(target_repo)
    for model in installed:
        label = model.repo or model.file or model.name
        if not model.exists or not model.size or model.size > limit:
            continue
        if (model.repo or "").lower() in seen or any(o.path == model.path for o in options):
            continue
        family = family_from_name(label)
        if target_family and family == target_family and not could_draft_for(target_repo,
                                                                             label):
            continue  # the target itself (another app's copy), or too large a sibling
        if target_family and family == target_family:
            kind, why = SAME_TOKENIZER, f"same tokenizer: an installed {family} model"
        else:
            kind, why = CROSS_VOCABULARY, ("cross-vocabulary: drafts through the tokens both "
                                           "vocabularies share (measured when it loads)")
        options.append(DraftOption(model.name, kind, why, model.repo, model.file, model.size,
                                   model.sha256, model.path))
    return options


def _curated_for(target_repo: str, catalog: Catalog | None):
    if catalog is None:
        return []
    paired = [p.draft for p in catalog.pairs if p.target.repo.lower() == target_repo.lower()]
    guessed = [m for m in catalog.models
               if could_draft_for(target_repo, m.repo) and m not in paired]
    return [(m, True) for m in paired] + [(m, False) for m in guessed]
