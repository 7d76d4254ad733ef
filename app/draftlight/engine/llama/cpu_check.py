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

The answer is cached per llama.cpp library and CPU (and within a process), and the note that
says so is given once per machine (`untold_note`), not before every error. The engine's host
(engine/host/hosted.py) needs no child: it loads with them on trust and its own first crash is the
answer (`host_tries_extra`); the child serves the loads made in the app's own process (the
bench, the tests). Builds without AMX
are never checked. DRAFTLIGHT_SIMULATE_AMX_CRASH=1 makes the check answer "runs only without"
without a child, so that the suite can walk that path on any CPU; DRAFTLIGHT_CPU_CHECK_FILE
names the cache file (the suite shares one between its tests).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import llama_cpp

from draftlight.engine.core.errors import ModelLoadError
from draftlight.shared_files import read_json_object, update_json

CHILD_COMMAND = "_cpu-check-child"  # hidden `draftlight` command, for the frozen app
TIMEOUT_SECONDS = 180
REBUILD = ("rebuild llama-cpp-python without AMX: CMAKE_ARGS=\"-DCMAKE_C_FLAGS='-mno-amx-tile "
           "-mno-amx-int8 -mno-amx-bf16' -DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 "
           "-mno-amx-bf16'\" pip install --force-reinstall --no-deps --no-cache-dir "
           f"llama-cpp-python=={llama_cpp.__version__}")
NOTE = ("llama.cpp's AMX kernels crash on this CPU, so models load without llama.cpp's repacked "
        "weights (drafts are checked more slowly); to get them back, " + REBUILD)
SIMULATE_VARIABLE = "DRAFTLIGHT_SIMULATE_AMX_CRASH"  # "1": extra buffers "crash" (no child)
FILE_VARIABLE = "DRAFTLIGHT_CPU_CHECK_FILE"  # the cache file, instead of the cache folder's
TOLD = "told"  # the cache's list of keys whose note was given

_known: dict[str, str] = {}  # this process's answers, by _cache_key()


def _simulated() -> bool:
    return os.environ.get(SIMULATE_VARIABLE) == "1"


def has_amx() -> bool:
    if _simulated():
        return True
    return "AMX_INT8 = 1" in llama_cpp.llama_print_system_info().decode("utf-8", "replace")


def cache_file() -> Path:
    """Where the answers are kept: DRAFTLIGHT_CPU_CHECK_FILE, else the cache folder's."""
    named = os.environ.get(FILE_VARIABLE)
    if named:
        return Path(named)
    from draftlight.paths import cache_dir
    return cache_dir() / "cpu_check.json"


def child_command(model: Path, extra_buffers: bool) -> list[str]:
    """`python -m draftlight.engine.llama.cpu_check_child MODEL 1|0`, or the frozen app's hidden child command."""
    args = [str(model), "1" if extra_buffers else "0"]
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_COMMAND, *args]
    return [sys.executable, "-P", "-m", "draftlight.engine.llama.cpu_check_child", *args]


def runs(model: Path, extra_buffers: bool) -> bool:
    """Whether a child process loads `model` and evaluates a batch without being killed (a
    child that fails otherwise, or takes too long, did not crash: that is for the real load to
    report)."""
    if _simulated():
        return not extra_buffers
    try:
        child = subprocess.run(child_command(model, extra_buffers), capture_output=True,
                               timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return True
    return child.returncode >= 0


@functools.cache  # the libraries do not change while the app runs
def library_build() -> str:
    """Which llama.cpp this is: llama-cpp-python's version and its CPU libraries' sizes and
    times (a rebuild, e.g. without AMX kernels, is another build). Part of every cache key of
    what is measured about a model (disk_cache.py's users), and of this check's."""
    library = Path(llama_cpp.__file__).parent / "lib"
    stamps = sorted((p.name, p.stat().st_size, int(p.stat().st_mtime))
                    for p in library.glob("*ggml-cpu*")) if library.is_dir() else []
    return json.dumps([llama_cpp.__version__, stamps])


def _cache_key() -> str:
    return json.dumps([library_build(), platform.processor() or platform.machine(),
                       _cpu_model()] + (["simulated"] if _simulated() else []))


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def _update(cache: Path, change) -> None:
    try:
        update_json(cache, change)
    except OSError:
        pass  # asked again next time


def answer(model: Path, cache: Path) -> str:
    """"extra", "plain" or "crashes" (the module's docstring): known, else found out now."""
    if not has_amx():
        return "extra"
    key = _cache_key()
    if key not in _known:
        found = read_json_object(cache).get(key)
        if found not in ("extra", "plain", "crashes"):
            found = ("extra" if runs(model, True) else "plain" if runs(model, False)
                     else "crashes")
            _update(cache, lambda known: known.__setitem__(key, found))
        _known[key] = found
    return _known[key]


def host_tries_extra(cache: Path, crashed: bool) -> bool:
    """In the engine's host (hosted.py), where a crash ends that process only, the check is the
    host's own first batched pass rather than a child's: whether this host loads with the extra
    buffers without knowing that they run here (its crash then means they do not: the app
    starts the next host with `crashed`, which is kept as "plain"). The answer already kept is
    used as it is; builds without AMX try nothing."""
    if not has_amx():
        return False
    key = _cache_key()
    if crashed:
        _update(cache, lambda known: known.__setitem__(key, "plain"))
        _known[key] = "plain"
        return False
    found = read_json_object(cache).get(key)
    if found in ("extra", "plain", "crashes"):
        _known[key] = found
        return False
    _known[key] = "extra"  # on trust, until a batched pass has run (confirm_extra)
    return True


def confirm_extra(cache: Path) -> None:
    """A host that tried the extra buffers on trust has run batched passes with them: kept."""
    key = _cache_key()
    _update(cache, lambda known: known.__setitem__(key, "extra"))


def extra_buffers_usable(model: Path, cache: Path) -> bool:
    """Whether models may load with llama.cpp's extra buffer types here (see the module's
    docstring); raises ModelLoadError where llama.cpp cannot run at all."""
    found = answer(model, cache)
    if found == "crashes":
        raise ModelLoadError(f"llama.cpp crashes on this CPU (illegal instruction); {REBUILD}")
    return found == "extra"


def untold_note(cache: Path) -> str:
    """NOTE the first time it is asked for on this machine (this library and CPU) where models
    load without extra buffers, "" after that and everywhere else: a user reads it once, where
    it belongs (the window's banner, `draftlight chat`'s first run), not before every error."""
    key = _cache_key() if has_amx() else ""
    if _known.get(key) != "plain":
        return ""
    told = read_json_object(cache).get(TOLD)
    if isinstance(told, list) and key in told:
        return ""

    def tell(known: dict) -> None:
        earlier = known.get(TOLD) if isinstance(known.get(TOLD), list) else []
        known[TOLD] = [*earlier, key]
    _update(cache, tell)
    return NOTE
