"""The curated models of models.toml: targets, drafts and the pairs known to work together."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from draftlight import paths
from draftlight.store.model_names import MAX_DRAFT_PARAMETERS, parameter_size_from_name
from draftlight.store.errors import CatalogError

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_MODEL_KEYS = {"name", "repo", "file", "quant", "size", "size_hint", "sha256", "bundled"}


@dataclass(frozen=True)
class CatalogModel:
    name: str  # unique key, also the installed name
    repo: str  # Hugging Face repo id
    file: str  # GGUF file name in the repo
    quant: str  # quantisation, e.g. "Q4_K_M"
    size: int | None = None  # exact bytes, where known for certain
    size_hint: int | None = None  # approximate bytes, for the memory badge only
    sha256: str | None = None  # lowercase hex, where published
    bundled: bool = False  # shipped with the app, never downloaded

    @property
    def approx_size(self) -> int | None:
        return self.size or self.size_hint


@dataclass(frozen=True)
class CuratedPair:
    target: CatalogModel
    draft: CatalogModel
    tokenizer: str  # the tokenizer the two share, and where that is stated

    @property
    def label(self) -> str:
        return f"{self.target.name} + {self.draft.name}"


@dataclass(frozen=True)
class Catalog:
    default: CatalogModel
    models: tuple[CatalogModel, ...]
    pairs: tuple[CuratedPair, ...]

    def get(self, name: str) -> CatalogModel | None:
        return next((m for m in self.models if m.name == name), None)

    def find(self, repo: str, file: str) -> CatalogModel | None:
        return next((m for m in self.models if m.repo == repo and m.file == file), None)


def load_catalog(path: Path | None = None) -> Catalog:
    """Read and validate models.toml (by default the one `draftlight.paths` finds).

    Raises:
        CatalogError: the file is missing, is not valid TOML, or an entry is invalid; the
            message names the file and the entry.
    """
    path = path or paths.curated_models_file()
    try:
        with open(path, "rb") as stream:
            data = tomllib.load(stream)
    except FileNotFoundError:
        raise CatalogError(f"{path}: the curated models file is missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: not valid TOML ({exc})") from None

    def fail(message: str):
        raise CatalogError(f"{path.name}: {message}")

    models = _parse_models(data, fail)
    default_name = data.get("default")
    if not isinstance(default_name, str) or default_name not in models:
        fail(f"'default' must name one of the [[models]] entries (got {default_name!r})")
    pairs = _parse_pairs(data, models, fail)
    return Catalog(models[default_name], tuple(models.values()), tuple(pairs))


def _parse_models(data: dict, fail) -> dict[str, CatalogModel]:
    """The [[models]] entries by name (at least one, no name twice)."""
    raw_models = data.get("models")
    if not isinstance(raw_models, list) or not raw_models:
        fail("no [[models]] entries")
    models: dict[str, CatalogModel] = {}
    for index, raw in enumerate(raw_models, start=1):
        model = _parse_model(raw, where=f"[[models]] entry {index}", fail=fail)
        if model.name in models:
            fail(f"two [[models]] entries are named {model.name!r}")
        models[model.name] = model
    return models


def _parse_pairs(data: dict, models: dict[str, CatalogModel], fail) -> list[CuratedPair]:
    """The [[pairs]] entries: two different [[models]] names, the tokenizer they share said,
    and a draft at most a third of its target's size."""
    pairs = []
    for index, raw in enumerate(data.get("pairs", []), start=1):
        if not isinstance(raw, dict) or set(raw) != {"target", "draft", "tokenizer"}:
            fail(f"[[pairs]] entry {index}: needs exactly 'target', 'draft' and 'tokenizer' "
                 f"(the tokenizer they share, with its source)")
        for role in ("target", "draft"):
            if raw[role] not in models:
                fail(f"[[pairs]] entry {index}: {role} {raw[role]!r} is not a [[models]] name")
        if raw["target"] == raw["draft"]:
            fail(f"[[pairs]] entry {index}: target and draft are the same model")
        if not isinstance(raw["tokenizer"], str) or len(raw["tokenizer"].strip()) < 20:
            fail(f"[[pairs]] entry {index}: 'tokenizer' must say which tokenizer the two share "
                 f"and where that is stated")
        target, draft = models[raw["target"]], models[raw["draft"]]
        sizes = [parameter_size_from_name(m.file) for m in (target, draft)]
        if None not in sizes and sizes[1] > sizes[0] * MAX_DRAFT_PARAMETERS:
            fail(f"[[pairs]] entry {index}: the draft {draft.name} is more than a third of "
                 f"{target.name}'s size: it would cost as much as it saves")
        pairs.append(CuratedPair(target, draft, raw["tokenizer"].strip()))
    return pairs


def _parse_model(raw, *, where: str, fail) -> CatalogModel:
    if not isinstance(raw, dict):
        fail(f"{where}: not a table")
    label = f"{where} ({raw.get('name', '?')})"
    unknown = set(raw) - _MODEL_KEYS
    if unknown:
        fail(f"{label}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("name", "repo", "file", "quant"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            fail(f"{label}: '{key}' is missing or not a string")
    if not _REPO_ID.match(raw["repo"]):
        fail(f"{label}: 'repo' must look like owner/name (got {raw['repo']!r})")
    if "/" in raw["file"] or "\\" in raw["file"] or not raw["file"].endswith(".gguf"):
        fail(f"{label}: 'file' must be a plain .gguf file name (got {raw['file']!r})")
    for key in ("size", "size_hint"):
        value = raw.get(key)
        if value is not None and (type(value) is not int or value <= 0):
            fail(f"{label}: '{key}' must be a positive whole number of bytes")
    sha = raw.get("sha256")
    if sha is not None and (not isinstance(sha, str) or not _SHA256.match(sha)):
        fail(f"{label}: 'sha256' must be 64 lowercase hex digits")
    if not isinstance(raw.get("bundled", False), bool):
        fail(f"{label}: 'bundled' must be true or false")
    return CatalogModel(name=raw["name"], repo=raw["repo"], file=raw["file"], quant=raw["quant"],
                        size=raw.get("size"), size_hint=raw.get("size_hint"), sha256=sha,
                        bundled=raw.get("bundled", False))
