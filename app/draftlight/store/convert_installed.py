"""Convert an installed model to another weight type and list the copy: what `models convert
NAME --type T` does, for the picker (which runs it on a worker thread)."""

from __future__ import annotations

from typing import Callable

from draftlight.store.convert import ConversionError, ConvertProgress, convert, conversion_target, \
    weight_type
from draftlight.store.default_model import DEFAULT_NAME, DEFAULT_TYPE
from draftlight.store.installed import BUNDLED_NAME, InstalledModel, register_conversion

# What the picker offers: the types whose batched CPU kernels verify drafts cheaply (verify_speed)
OFFERED_TYPES = ("Q8_0", "Q4_0", "Q4_K_M", "IQ4_NL")


def convert_installed(model: InstalledModel, type_name: str, *,
                      on_progress: Callable[[ConvertProgress], None] | None = None,
                      should_cancel: Callable[[], bool] | None = None) -> InstalledModel:
    """Write `model` re-quantised to `type_name` in the converted folder and register it.

    Raises:
        ConversionError: the file is missing, the copy exists already, or converting failed;
            ConversionCancelled when `should_cancel` said stop.
    """
    type_name = weight_type(type_name)
    if not model.exists:
        raise ConversionError(f"{model.name}'s file is missing: {model.path}")
    if model.name == BUNDLED_NAME and type_name == DEFAULT_TYPE:
        raise ConversionError(f"that copy is the default model, {DEFAULT_NAME}, made on first use")
    dest = conversion_target(model.path, type_name)
    if dest.exists():
        raise ConversionError(f"{dest.name} exists already; delete it first to convert again")
    convert(model.path, dest, type_name, on_progress=on_progress, should_cancel=should_cancel)
    return register_conversion(dest, model.name)
