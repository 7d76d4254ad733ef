"""What a row of the picker's installed list says about a model: its size, weight type, verify
speed and path (or the one line that says why its header cannot be read), its chips (where it
comes from, the other apps that keep the same file, whether it fits in memory) and its tip; and
which models the list leaves out (the bundled one once its converted default copy exists)."""

from __future__ import annotations

from PySide6.QtWidgets import QListWidgetItem

from draftlight.engine.auto.verify_speed import verify_speed
from draftlight.store.default_model import DEFAULT_NAME
from draftlight.store.installed import InstalledModel
from draftlight.store.memory import assess
from draftlight.store.model_facts import shared_facts
from draftlight.ui.picker.rows import chip, fit_chip, row_item
from draftlight.units import format_bytes


def installed_row(model: InstalledModel, memory, gpu_offload: bool) -> QListWidgetItem:
    """`model`'s row; `memory` (system_memory(), read once for the list) judges whether it fits."""
    facts, tip = model_facts(model, gpu_offload)
    origin = (f"converted from {model.converted_from}" if model.converted_from
              else model.repo or "")
    readable = model.exists and not any(f and f.startswith("unreadable") for f in facts)
    fit = assess(model.size, memory=memory) if readable and model.size and memory \
        else None
    chips = [chip(model.source)] + [chip(app) for app in also_apps(model)] + (
        [fit_chip(fit.fit)] if fit else [])
    also = "same file as " + ", ".join(model.also) if model.also else ""
    return row_item(model.name, "  ·  ".join(x for x in facts if x), chips, model,
                    "\n".join(x for x in (origin, also, tip) if x))


def model_facts(model: InstalledModel, gpu_offload: bool) -> tuple[list[str | None], str]:
    """(size, weight type, verify speed, path), and the verify speed in words; a file whose
    header cannot be read is still listed, with the one line that says why."""
    size = format_bytes(model.size) if model.size else None
    if not model.exists:
        return [size, f"file missing: {model.path}"], verify_speed(None).describe()
    facts = shared_facts().get(model.path)  # read once per file (store/model_facts.py)
    if facts is None:
        return [size, f"file missing: {model.path}"], verify_speed(None).describe()
    if facts.error:  # GGUFError (with the byte offset), PermissionError: before the path,
        return ([size, f"unreadable: {facts.error}", str(model.path)],  # which is long
                f"Its header cannot be read: {facts.error}")
    quant = facts.weight_type
    speed = verify_speed(quant, model.path, on_gpu=gpu_offload)
    return [size, quant, speed.label, str(model.path)], speed.describe()


def without_replaced_original(models: list[InstalledModel]) -> list[InstalledModel]:
    """The bundled model is left out once its converted default copy exists: the window loads
    the copy as "Default model", and two rows of one model read as two targets."""
    replaced = {m.converted_from for m in models if m.name == DEFAULT_NAME and m.converted_from}
    return [m for m in models if not (m.source == "bundled" and m.name in replaced)]


def also_apps(model) -> list[str]:
    """The other apps that keep the same file as `model` (a found model), each named once."""
    from draftlight.store.found_models import SCHEMES
    apps = [SCHEMES.get(reference.partition(":")[0]) for reference in model.also]
    return [a for a in dict.fromkeys(apps) if a and a != model.source]
