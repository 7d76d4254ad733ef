"""Re-quantise a GGUF model to another weight type with llama.cpp's own quantizer.

The weight type decides how cheaply a CPU verifies a draft: llama.cpp's batched CPU kernels
(repack, llamafile sgemm) cover Q4_0, Q8_0, IQ4_NL and Q4_K but not Q4_1, so the same model in
Q8_0 checks 8 tokens for the price of 4.7 one-token passes where Q4_1 pays 5.7 (docs/weights.md).

The quantizer runs in a child process (store/quantize_child.py, reporting each tensor as a JSON
line): a llama.cpp call cannot be interrupted from Python, while a child can be stopped at once
(Ctrl-C, a window closed) without leaving a thread writing into a file. It writes
`.<name>.converting` next to the destination, loads the result to verify it, and only then is
the file renamed into place: a partial model never carries a model's name. The quantizer dies
with the app, and a `.converting` file a killed app left is removed at the next start
(remove_abandoned_conversions, draftlight.lifetimes).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from draftlight.lifetimes import owned, popen_tied, remove_abandoned
from draftlight.lock_holders import lock_holder
from draftlight.private_folders import ForeignFolder
from draftlight.shared_files import WaitCancelled, lock_path, once
from draftlight.store.errors import StoreError
from draftlight.store.gguf_info import read_gguf_info

# Weight types a user may ask for -> bits per weight (llama.cpp's figures, for the size estimate).
# Left out: the IQ1/IQ2/IQ3 types, which need an importance matrix to be usable.
BITS_PER_WEIGHT = {
    "F16": 16.0, "BF16": 16.0, "Q8_0": 8.5, "Q6_K": 6.56, "Q5_1": 6.0, "Q5_0": 5.5,
    "Q5_K_M": 5.69, "Q5_K_S": 5.54, "Q4_1": 5.0, "Q4_K_M": 4.89, "Q4_K_S": 4.58, "Q4_0": 4.5,
    "IQ4_NL": 4.5, "IQ4_XS": 4.25, "Q3_K_L": 4.27, "Q3_K_M": 3.91, "Q3_K_S": 3.5, "Q2_K": 2.96,
}
NEEDS_IMATRIX = ("IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS")
# Small tensors (norms) stay F32 and the embedding may stay at 6-8 bits: room for them.
SIZE_MARGIN = 1.25
SPARE_BYTES = 64 << 20
POLL_SECONDS = 0.1
EXIT_SECONDS = 60.0  # how long a quantizer that has reported its outcome gets to exit
CHILD_COMMAND = "_quantize-child"  # hidden `draftlight` command, for the frozen app


class ConversionError(StoreError):
    """A conversion could not be done; the message says why and what to do."""


class ConversionCancelled(ConversionError):
    """The user stopped a conversion; nothing was left behind."""


@dataclass(frozen=True)
class ConvertProgress:
    done: int  # tensors written
    total: int  # tensors in the model (0 until the quantizer says)
    stage: str  # "waiting" (for another Draftlight making it), "quantizing" or "verifying"
    holder: str = ""  # while "waiting": the process that holds the lock, where it can be told


def weight_type(name: str) -> str:
    """`name` as a weight type the converter takes (case-insensitive), e.g. "q4_0" -> "Q4_0".

    Raises:
        ConversionError: not a type, or one that needs an importance matrix.
    """
    upper = name.strip().upper()
    if upper in BITS_PER_WEIGHT:
        return upper
    if upper in NEEDS_IMATRIX:
        raise ConversionError(f"{upper} needs an importance matrix, which Draftlight does not "
                              "make; choose IQ4_XS, Q3_K_M or a larger type")
    raise ConversionError(f"unknown weight type {name!r}; choose one of "
                          + ", ".join(sorted(BITS_PER_WEIGHT)))


def estimated_size(parameter_count: int, type_name: str) -> int:
    """A generous estimate of the converted file's size, bytes."""
    return int(parameter_count * BITS_PER_WEIGHT[type_name] / 8 * SIZE_MARGIN)


def check_space(folder: Path, needed: int) -> None:
    """Raise ConversionError unless `folder`'s disk has `needed` bytes and some to spare."""
    free = shutil.disk_usage(folder).free
    if free < needed + SPARE_BYTES:
        from draftlight.units import format_bytes
        raise ConversionError(f"not enough disk space in {folder}: the conversion needs about "
                              f"{format_bytes(needed)}, {format_bytes(free)} is free")


def conversion_target(source: Path, type_name: str) -> Path:
    """Where `models convert` puts `source` in `type_name`: models/converted/<base>.<TYPE>.gguf,
    <base> being the source's file name without its weight type."""
    from draftlight import paths
    stem = re.sub(r"\.gguf$", "", source.name, flags=re.I)
    known = "|".join(sorted((re.escape(t) for t in (*BITS_PER_WEIGHT, *NEEDS_IMATRIX)),
                            key=len, reverse=True))
    base = re.sub(rf"[._-](?:{known})$", "", stem, flags=re.I) or stem
    return paths.models_dir() / "converted" / f"{base}.{type_name}.gguf"


def converting_path(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.converting")


def convert(source: Path, dest: Path, type_name: str, *,
            on_progress: Callable[[ConvertProgress], None] | None = None,
            should_cancel: Callable[[], bool] | None = None,
            threads: int | None = None) -> Path:
    """Write `source` re-quantised to `type_name` at `dest` (temp file, verified, renamed).

    Blocks until done; `should_cancel` is polled ten times a second. Ctrl-C (KeyboardInterrupt)
    and cancelling stop the child and delete the temp file. One process converts into `dest` at
    a time: another Draftlight converting into it is waited for (`on_progress` hears stage
    "waiting"), and what it made is used.

    Raises:
        ConversionError: unreadable source, no disk space, a folder that cannot be written, or
            the quantizer failed; ConversionCancelled when stopped.
    """
    type_name = weight_type(type_name)
    source, dest = Path(source), Path(dest)
    try:
        info = read_gguf_info(source)
    except (OSError, StoreError) as exc:
        raise ConversionError(f"cannot convert {source}: {exc}") from exc
    if source.resolve() == dest.resolve():
        raise ConversionError(f"{dest.name} would overwrite its own source")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConversionError(f"cannot create {dest.parent}: {exc.strerror or exc}") from exc
    waited = []

    def on_wait() -> None:
        waited.append(True)
        if on_progress is not None:
            on_progress(ConvertProgress(0, 0, "waiting", lock_holder(lock_path(dest))))
    try:
        with once(lock_path(dest), on_wait=on_wait,
                  should_cancel=should_cancel or (lambda: False)):
            if waited and _made(dest):  # by the process it waited for
                return dest
            return _convert_alone(source, dest, type_name, info, on_progress, should_cancel,
                                  threads)
    except WaitCancelled:
        raise ConversionCancelled(f"converting {source.name} was cancelled") from None
    except StoreError:
        raise
    except ForeignFolder as exc:  # the lock folder is another user's: its line says what to do
        raise ConversionError(str(exc)) from None
    except OSError as exc:  # the lock file cannot be made
        raise ConversionError(f"cannot write {dest.parent}: {exc.strerror or exc}") from exc


def _made(dest: Path) -> bool:
    try:
        read_gguf_info(dest)
        return True
    except (OSError, StoreError):
        return False


def _convert_alone(source: Path, dest: Path, type_name: str, info, on_progress, should_cancel,
                   threads: int | None) -> Path:
    """convert(), once this process holds `dest`'s lock."""
    check_space(dest.parent, estimated_size(info.parameter_count, type_name))
    temp = converting_path(dest)
    _remove(temp)  # left by a crash (the lock says nobody is writing it)
    # marked as this process's: if the app is killed, its next start removes the file
    with owned(temp):
        command = child_command(str(source), str(temp), type_name, threads or 0)
        try:  # the quantizer dies with the app, even by SIGKILL (Linux)
            child = popen_tied(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
        except OSError as exc:
            raise ConversionError(f"cannot start the quantizer: {exc}") from exc
        try:
            outcome = _follow(child, on_progress, should_cancel)
        except BaseException:
            _stop(child)
            _remove(temp)
            raise
        if outcome != "done":
            _remove(temp)
            raise ConversionError(f"converting {source.name} to {type_name} failed: {outcome}")
        try:
            os.replace(temp, dest)
        except OSError as exc:
            _remove(temp)
            raise ConversionError(f"cannot write {dest}: {exc.strerror or exc}") from exc
    return dest


def remove_abandoned_conversions() -> list[Path]:
    """The `.converting` files of apps killed while they converted (as large as the model),
    removed from the models folders; another running app's are kept (draftlight.lifetimes)."""
    from draftlight import paths
    models = paths.data_dir() / "models"
    return [path for folder in (models, models / "converted")
            for path in remove_abandoned(folder, ".*.converting")]


def child_command(*args: object) -> list[str]:
    """How to run `quantize_child` in a new process: `python -m draftlight.store.quantize_child`,
    or the frozen app's own executable with its hidden child command."""
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_COMMAND, *map(str, args)]
    return [sys.executable, "-P", "-m", "draftlight.store.quantize_child", *map(str, args)]


def _follow(child: subprocess.Popen, on_progress, should_cancel) -> str:
    """Relay the child's messages (one JSON list per line) until it ends; returns "done" or
    what went wrong."""
    lines: queue.Queue[bytes] = queue.Queue()

    def read() -> None:
        for line in child.stdout:
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=read, name="quantize-output", daemon=True).start()
    while True:
        if should_cancel is not None and should_cancel():
            raise ConversionCancelled("conversion cancelled")
        try:
            line = lines.get(timeout=POLL_SECONDS)
        except queue.Empty:
            continue
        if not line:
            break
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message[0] == "progress" and on_progress is not None:
            on_progress(ConvertProgress(message[1], message[2], message[3]))
        elif message[0] in ("done", "error"):
            # Its last word is said and the file written (or not): a child that then hangs in
            # its exit (native destructors) is stopped rather than waited for without end.
            try:
                child.wait(EXIT_SECONDS)
            except subprocess.TimeoutExpired:
                _stop(child)
            return "done" if message[0] == "done" else message[1]
    code = child.wait()
    return f"the quantizer stopped unexpectedly (exit code {code})"


def _stop(child: subprocess.Popen) -> None:
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        time.sleep(0.2)  # Windows may hold the file a moment after the child ends
        path.unlink(missing_ok=True)
