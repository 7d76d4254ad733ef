"""Whether a curated model (models.toml) is on this computer already: Draftlight's own download,
or a copy another app keeps (Ollama, LM Studio, the Hugging Face cache, …), so the picker marks
a curated pair installed instead of offering to download it again.

The rule, strictest first; a copy counts on the first test it passes:

  1. Draftlight's own download (the same repository and file), or the bundled model.
  2. The same bytes: models.toml's sha256 is the digest Ollama names the blob by
     (blobs/sha256-<hex>): nothing is hashed.
  3. The same file by its name: another app names the curated repository and file
     ("bartowski/Qwen2.5-7B-Instruct-GGUF/Qwen2.5-7B-Instruct-Q4_K_M.gguf", as LM Studio and the
     Hugging Face cache do), or Ollama pulled it from the hub
     (`ollama pull hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M` stores that very file).
  4. The same model, converted by Ollama itself ("qwen2.5-coder:1.5b"): the same family (so
     the same tokenizer) and parameter count in both names, the same weight type (from the tag
     where it says, else the GGUF header), an instruction-tuned tag (Ollama's library tags are
     unless they say base or text; every curated model is one), and a size within SIZE_SLACK of
     the curated one. The bytes are not the curated file's, but it drafts and is drafted for
     alike, which is what "installed" promises in the picker. Only Ollama's library (names
     without a "/"), where those naming habits hold: another uploader's "Qwen2.5-1.5B" file
     may be the base model.
"""

from __future__ import annotations

from pathlib import Path

from draftlight.store.catalog import Catalog, CatalogModel, CuratedPair
from draftlight.store.hub import HubFile
from draftlight.store.found_models import OWN_SOURCES, SCHEMES
from draftlight.store.installed import InstalledModel
from draftlight.store.model_facts import shared_facts
from draftlight.store.model_names import (family_from_name, parameter_size_from_name,
                                          quantisation_from_name)

SIZE_SLACK = 0.10  # Ollama's conversion of a model differs from another's by a few percent
NOT_INSTRUCT_TAGS = ("base", "text")  # Ollama's tags for the pretrained-only variants


def header_weight_type(path: Path) -> str | None:
    """A file's weight type from its header ("Q4_K_M"), read once per file (model_facts)."""
    facts = shared_facts().get(path)
    return facts.weight_type if facts is not None else None


def copy_of(model: CatalogModel, models: list[InstalledModel],
            weight_type=header_weight_type, *, converted: bool = True) -> InstalledModel | None:
    """The first of `models` (store.found_models.every_model) that is `model` by the rule
    above; `weight_type(path)`: a file's weight type ("Q4_K_M"), None where unknown (only a
    tag that says it then matches). Only an Ollama model that passes the names' tests has its
    header read. `converted`: whether Ollama's own conversion counts (test 4, which holds for
    instruction-tuned models: models.toml's)."""
    here = [m for m in models if m.exists]
    if model.bundled:
        return next((m for m in here if m.source == "bundled"), None)
    for test in (_same_download, _same_bytes, _same_file_name):
        found = next((m for m in here if test(model, m)), None)
        if found is not None:
            return found
    if not converted:
        return None
    return next((m for m in here if _same_model_in_ollama(model, m, weight_type)), None)


def files_here(repo_id: str, files: list[HubFile], catalog: Catalog | None,
               models: list[InstalledModel]) -> dict[str, str]:
    """{file: the name Installed lists it by} for those of hub repository `repo_id`'s `files`
    that are on this computer: a curated one by the whole rule, any other by tests 1-3 (its
    bytes or its name; the repository may hold a base model, which test 4 cannot tell)."""
    here = {}
    for file in files:
        curated = catalog.find(repo_id, file.path) if catalog else None
        wanted = curated or CatalogModel(file.path, repo_id, file.path, file.quant or "",
                                         size=file.size, sha256=file.sha256)
        copy = copy_of(wanted, models, converted=curated is not None)
        if copy is not None:
            here[file.path] = copy.name
    return here


def pair_copies(pair: CuratedPair, models: list[InstalledModel]
                ) -> tuple[InstalledModel | None, InstalledModel | None]:
    """copy_of the pair's target and of its draft."""
    return copy_of(pair.target, models), copy_of(pair.draft, models)


def _same_download(model: CatalogModel, other: InstalledModel) -> bool:
    return (other.repo, other.file) == (model.repo, model.file)


def _same_bytes(model: CatalogModel, other: InstalledModel) -> bool:
    digest = Path(other.path).name.removeprefix("sha256-")
    return bool(model.sha256) and digest != Path(other.path).name and digest == model.sha256


def _same_file_name(model: CatalogModel, other: InstalledModel) -> bool:
    name = _found_name(other).lower()
    repo, file, quant = model.repo.lower(), model.file.lower(), model.quant.lower()
    return (name.endswith(f"{repo}/{file}") or
            other.source == SCHEMES["ollama"] and name == f"{repo}:{quant}")


def _same_model_in_ollama(model: CatalogModel, other: InstalledModel, weight_type) -> bool:
    name = _found_name(other)
    if other.source != SCHEMES["ollama"] or "/" in name:
        return False
    tag = name.partition(":")[2].lower()
    if any(word in tag.split("-") for word in NOT_INSTRUCT_TAGS):
        return False
    family = family_from_name(model.repo)
    size = parameter_size_from_name(model.file)
    if family is None or size is None or family_from_name(name) != family:
        return False
    if parameter_size_from_name(name.replace(":", "-")) != size:
        return False
    quant = quantisation_from_name(tag) or (weight_type(other.path) if weight_type else None)
    if (quant or "").upper() != model.quant.upper():
        return False
    expected = model.approx_size
    return bool(expected and other.size) and abs(other.size - expected) <= SIZE_SLACK * expected


def _found_name(other: InstalledModel) -> str:
    """A found model's name as its app gives it ("qwen2.5:7b"): its reference less the scheme."""
    scheme, _, rest = other.name.partition(":")
    return rest if scheme in SCHEMES and other.source not in OWN_SOURCES else other.name
