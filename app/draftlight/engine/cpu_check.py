"""Whether llama.cpp's AMX kernels run on this CPU, found out once in a child process.

pip compiles llama.cpp with -march=native. On a Xeon with AMX (Sapphire Rapids and newer) that
compiles in ggml's AMX kernels, and the vendored ggml of llama-cpp-python 0.3.36 can run tile
instructions without a valid tile configuration (upstream PR ggml-org/llama.cpp#26954): the
first batched pass dies with SIGILL on some kernels and virtual machines, and the window would
vanish without a word. So where the build has AMX, the first model load asks a child process to
load a model and evaluate a batch, first with llama.cpp's extra buffer types (where AMX and the
weight repacking live), and if that crashes, without them:

    runs with them     -> load normally
    runs only without  -> load without them: slower batched passes, but it runs (one note)
    crashes both ways  -> ModelLoadError saying how to rebuild llama-cpp-python without AMX

The answer is cached per llama.cpp library and CPU. Builds without AMX are never checked.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import llama_cpp

from draftlight.engine.errors import ModelLoadError

CHILD_COMMAND = "_cpu-check-child"  # hidden `draftlight` command, for the frozen app
TIMEOUT_SECONDS = 180
REBUILD = ("rebuild llama-cpp-python without AMX: CMAKE_ARGS=\"-DCMAKE_C_FLAGS='-mno-amx-tile "
           "-mno-amx-int8 -mno-amx-bf16' -DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 "
           "-mno-amx-bf16'\" pip install --force-reinstall --no-deps --no-cache-dir "
           f"llama-cpp-python=={llama_cpp.__version__}")
NOTE = ("llama.cpp's AMX kernels crash on this CPU, so models load without llama.cpp's repacked "
        "weights (drafts are checked more slowly); to get them back, " + REBUILD)


def has_amx() -> bool:
    return "AMX_INT8 = 1" in llama_cpp.llama_print_system_info().decode("utf-8", "replace")


def child_command(model: Path, extra_buffers: bool) -> list[str]:
    """`python -m draftlight.engine.cpu_check_child MODEL 1|0`, or the frozen app's hidden child command."""
    args = [str(model), "1" if extra_buffers else "0"]
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_COMMAND, *args]
    return [sys.executable, "-P", "-m", "draftlight.engine.cpu_check_child", *args]


def runs(model: Path, extra_buffers: bool) -> bool:
    """Whether a child process loads `model` and evaluates a batch without being killed (a
    child that fails otherwise, or takes too long, did not crash: that is for the real load to
    report)."""
    try:
        child = subprocess.run(child_command(model, extra_buffers), capture_output=True,
                               timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return True
    return child.returncode >= 0


def _cache_key() -> str:
    library = Path(llama_cpp.__file__).parent / "lib"
    stamps = sorted((p.name, p.stat().st_size, int(p.stat().st_mtime))
                    for p in library.glob("*ggml-cpu*")) if library.is_dir() else []
    return json.dumps([llama_cpp.__version__, stamps, platform.processor() or platform.machine(),
                       _cpu_model()])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def extra_buffers_usable(model: Path, cache_file: Path) -> bool:
    """Whether models may load with llama.cpp's extra buffer types here (see the module's
    docstring); raises ModelLoadError where llama.cpp cannot run at all."""
    if not has_amx():
        return True
    key = _cache_key()
    try:
        known = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    if key not in known:
        if runs(model, True):
            known[key] = "extra"
        elif runs(model, False):
            known[key] = "plain"
        else:
            known[key] = "crashes"
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            cache_file.write_text(json.dumps(known))
        except OSError:
            pass  # asked again next time
    if known[key] == "crashes":
        raise ModelLoadError(f"llama.cpp crashes on this CPU (illegal instruction); {REBUILD}")
    return known[key] == "extra"
