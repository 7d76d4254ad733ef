"""Find llama.cpp's `llama-server`, or build it once from the llama.cpp that llama-cpp-python
vendors, against the libraries pip already compiled.

    path = find_server(setting)              # Settings path, PATH, then a build of ours
    path = build_server(report=print)        # ~5 min on 2 cores; cached per llama-cpp-python version

The build compiles only llama.cpp's common/ and tools/server/ (with their vendored helpers):
llama_server.cmake stands in for llama.cpp's root CMakeLists.txt and imports libggml*, libllama
and libmtmd from the installed llama_cpp package, so ggml and llama are not compiled again (a
standalone build of the whole tree took 12 minutes here). The binary finds those libraries through
its RPATH, set to the installed package; a server built for another installation is rebuilt.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Callable

from draftlight.engine.core.errors import ServerBuildError
from draftlight.engine.server.build_record import RECORD, changed_files, write_record
from draftlight.engine.server.sdist import PACKAGE, download_sdist
from draftlight.lifetimes import owned, popen_tied, remove_abandoned
from draftlight.shared_files import WaitCancelled, lock_path, once

BINARY = "llama-server.exe" if sys.platform == "win32" else "llama-server"
# llama.cpp's RPC helper (runs on each machine a model is split over) and the RPC backend module
# that llama-server and it load from their own folder (llama_server.cmake)
RPC_BINARY = "rpc-server.exe" if sys.platform == "win32" else "rpc-server"
RPC_MODULE = {"win32": "ggml-rpc.dll", "darwin": "libggml-rpc.so"}.get(sys.platform,
                                                                        "libggml-rpc.so")
BUILT = (RPC_MODULE, RPC_BINARY, BINARY)  # llama-server last: its presence says all is there
# what a build holds; a build of an older recipe is made again (2: + RPC; 3: + build.json, the
# record of what was built, checked before each run)
RECIPE = 3
# Where built servers are kept (one folder per llama-cpp-python version and installation); the
# suite points it at a folder that outlives its runs.
SERVER_DIR_VARIABLE = "DRAFTLIGHT_SERVER_DIR"
Report = Callable[[str, int], None]  # (what is happening, percent or -1)


def llama_lib_dir() -> Path:
    """The installed llama_cpp package's native libraries (libllama, libggml*, libmtmd)."""
    import llama_cpp
    return Path(llama_cpp.__file__).resolve().parent / "lib"


def llama_version() -> str:
    """The installed llama-cpp-python's version (its package says it; the frozen app has no
    distribution metadata)."""
    import llama_cpp
    return getattr(llama_cpp, "__version__", None) or importlib.metadata.version(PACKAGE)


def servers_dir() -> Path:
    """Where built servers are kept, one folder per installation."""
    override = os.environ.get(SERVER_DIR_VARIABLE)
    if override:
        return Path(override)
    from draftlight.paths import cache_dir
    return cache_dir() / "llama-server"


def built_server_path() -> Path:
    """Where our build for this installation lives (it may not exist yet)."""
    # The libraries it links against are this installation's: their folder is part of the key.
    where = hashlib.sha256(str(llama_lib_dir()).encode()).hexdigest()[:8]
    return (servers_dir() / f"{llama_version()}-{platform.machine().lower()}-{where}-r{RECIPE}"
            / BINARY)


def remove_abandoned_builds() -> list[Path]:
    """The build folders of apps killed while they built (GBs each), removed; another running
    app's build is kept (draftlight.lifetimes)."""
    try:
        folders = [p for p in servers_dir().iterdir() if p.is_dir()]
    except OSError:
        return []
    return [path for folder in folders for path in remove_abandoned(folder, "build-*")]


def find_rpc_server() -> Path | None:
    """llama.cpp's rpc-server (checked): on PATH, else the one built with our llama-server.

    Raises:
        ServerBuildError: our build changed since it was built (check_build)."""
    on_path = shutil.which("rpc-server")
    if on_path:
        try:
            return check_rpc_server(on_path)
        except ServerBuildError:
            pass  # something else of that name
    server = built_server_path()
    if not server.is_file() or not server.with_name(RPC_BINARY).is_file():
        return None
    try:
        return check_rpc_server(check_build(server).with_name(RPC_BINARY))
    except ServerBuildError as exc:
        if "has changed since" in str(exc):
            raise
        return None


def check_build(binary: Path) -> Path:
    """`binary`, our build, if it and the files built with it are as its build recorded them.

    Raises:
        ServerBuildError: one of them changed since (or there is no record): it is not run."""
    changed = changed_files(binary.parent, BUILT)
    if changed:
        raise ServerBuildError(f"the llama-server built in {binary.parent} has changed since it "
                               f"was built ({', '.join(changed)} no longer as {RECORD} says): "
                               f"`draftlight engine build-server --rebuild` builds it again")
    return binary


def check_rpc_server(path: str | Path) -> Path:
    """`path` if it runs and its usage is llama.cpp's rpc-server's (it has no --version).

    Raises:
        ServerBuildError: missing, not executable, or not rpc-server."""
    path = Path(path).expanduser()
    try:
        out = subprocess.run([str(path), "--help"], check=False, capture_output=True, text=True,
                             timeout=20, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerBuildError(f"{path} does not run: {exc}") from None
    text = out.stdout + out.stderr
    if "--device <dev1,dev2,...>" not in text or "host to bind to" not in text:
        raise ServerBuildError(f"{path} is not llama.cpp's rpc-server")
    return path


def check_server_binary(path: str | Path) -> Path:
    """`path` if it runs and says it is llama.cpp's server.

    Raises:
        ServerBuildError: missing, not executable, or not llama-server."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ServerBuildError(f"llama-server not found at {path}")
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                             timeout=20, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerBuildError(f"{path} does not run: {exc}") from None
    text = (out.stdout + out.stderr).strip()
    if "version:" not in text or "built with" not in text:
        first = text.splitlines()[0][:80] if text else "nothing"
        raise ServerBuildError(f"{path} is not llama.cpp's llama-server (its --version printed "
                               f"{first!r})")
    return path


def find_server(setting: str | None = None) -> Path | None:
    """The llama-server to run: the one Settings name (checked), else one on PATH, else our
    build for this installation. None if there is none (build_server makes one).

    Raises:
        ServerBuildError: Settings name a file that is not llama-server; our build changed
            since it was built."""
    if setting:
        return check_server_binary(setting)
    on_path = shutil.which("llama-server")
    if on_path:
        try:
            return check_server_binary(on_path)
        except ServerBuildError:
            pass  # something else of that name: fall through to our own build
    built = built_server_path()
    return check_build(built) if built.is_file() else None


def server_for_terminal(setting: str | None = None) -> Path:
    """find_server for the command line, which does not build on its own (minutes): the
    llama-server to run, else ServerBuildError saying how to get one."""
    found = find_server(setting or None)
    if found is None:
        raise ServerBuildError("no llama-server here yet: `draftlight engine build-server` "
                               "builds one (a few minutes, once), or name one with "
                               "--server-binary")
    return found


def build_server(report: Report | None = None, should_cancel: Callable[[], bool] = lambda: False,
                 sources: str | Path | None = None, jobs: int | None = None) -> Path:
    """Build llama-server for this installation (or return the one already built).

    `sources`: a llama-cpp-python sdist (.tar.gz) or a llama.cpp source tree; by default the
    sdist of the installed version is downloaded and checked against the checksum pinned in
    sdist.py (a mismatch stops the build).

    Raises:
        ServerBuildError: no cmake or C++ compiler, no sources (or ones that do not match their
            pinned checksum), the build failed or was cancelled."""
    report = report or (lambda what, percent: None)
    target = built_server_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:  # one build at a time: another Draftlight's is waited for, then used
        with once(lock_path(target), should_cancel=should_cancel, on_wait=lambda: report(
                "waiting for the llama-server build another Draftlight is making", -1)):
            return _build_alone(target, report, should_cancel, sources, jobs)
    except WaitCancelled:
        raise ServerBuildError("the llama-server build was cancelled") from None


def _build_alone(target: Path, report: Report, should_cancel: Callable[[], bool],
                 sources: str | Path | None, jobs: int | None) -> Path:
    """build_server(), once this process holds the build's lock."""
    if target.is_file():
        try:
            return check_build(target)
        except ServerBuildError:
            report("the built llama-server changed since its build: building it again", -1)
            for name in (*BUILT, RECORD):
                target.with_name(name).unlink(missing_ok=True)
    missing = [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]
    if missing:
        raise ServerBuildError(
            f"building llama-server needs {' and '.join(missing)} (on Debian or Ubuntu: "
            f"sudo apt install build-essential cmake; on macOS: xcode-select --install and "
            f"brew install cmake)")
    target.parent.mkdir(parents=True, exist_ok=True)
    # marked as this process's: if the app is killed, its next start removes the folder
    with owned(target.parent / f"build-{os.getpid()}-{secrets.token_hex(3)}") as scratch:
        scratch.mkdir()
        tree = _source_tree(scratch, sources, report)
        shutil.copyfile(Path(__file__).with_name("llama_server.cmake"), tree / "CMakeLists.txt")
        build = scratch / "build"
        report("configuring llama-server", 0)
        _run(["cmake", "-S", str(tree), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
              f"-DLLAMA_LIB_DIR={llama_lib_dir()}"], report, should_cancel)
        _run(["cmake", "--build", str(build), "--target", "llama-server", "ggml-rpc",
              "rpc-server", "-j", str(jobs or os.cpu_count() or 2)], report, should_cancel)
        missing = [name for name in BUILT if not (build / "bin" / name).is_file()]
        if missing:
            raise ServerBuildError(f"the build finished without {missing[0]}")
        write_record(target.parent, BUILT, build / "bin")
        for name in BUILT:
            built = build / "bin" / name
            partial = target.with_name(name + ".part")
            shutil.copy2(built, partial)
            os.replace(partial, target.with_name(name))  # never half-copied under its name
    report("llama-server is ready", 100)
    return check_server_binary(target)


def _source_tree(scratch: Path, sources: str | Path | None, report: Report) -> Path:
    """The llama.cpp tree to build from, extracted under `scratch` when it is an archive."""
    if sources is not None and Path(sources).is_dir():
        tree = Path(sources)
        tree = tree / "vendor" / "llama.cpp" if (tree / "vendor" / "llama.cpp").is_dir() else tree
        if not (tree / "tools" / "server").is_dir():
            raise ServerBuildError(f"{sources} is not a llama.cpp source tree (no tools/server)")
        copy = scratch / "llama.cpp"
        shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git", "build*"))
        return copy
    archive = Path(sources) if sources is not None else download_sdist(scratch, llama_version(),
                                                                        report)
    report(f"unpacking {archive.name}", -1)
    try:
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if "/vendor/llama.cpp/" in m.name + "/"]
            if not members:
                raise ServerBuildError(f"{archive.name} holds no vendor/llama.cpp")
            tar.extractall(scratch, members=members, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise ServerBuildError(f"cannot unpack {archive}: {exc}") from None
    [root] = {m.name.split("/")[0] for m in members}
    return scratch / root / "vendor" / "llama.cpp"


_PERCENT = re.compile(r"^\[\s*(\d+)%\]\s*(.*)")


def _run(command: list[str], report: Report, should_cancel: Callable[[], bool]) -> None:
    """Run a build step, reporting CMake's [ NN%] lines; stop it (and its compilers) on cancel,
    and when the app dies (popen_tied)."""
    process = popen_tied(command, whole_group=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace")
    tail: list[str] = []
    try:
        for line in process.stdout:
            line = line.rstrip()
            tail = (tail + [line])[-40:]
            match = _PERCENT.match(line)
            if match:
                report(match.group(2)[:100], int(match.group(1)))
            if should_cancel():
                raise ServerBuildError("the llama-server build was cancelled")
        if process.wait() != 0:
            raise ServerBuildError(f"building llama-server failed: {_last_error(tail)}")
    finally:
        if process.poll() is None:
            if hasattr(os, "killpg"):
                os.killpg(process.pid, signal.SIGKILL)  # the compilers it started, too
            else:
                process.kill()
            process.wait()


def _last_error(lines: list[str]) -> str:
    errors = [line for line in lines if "error" in line.lower()]
    return (errors[0] if errors else _last_line("\n".join(lines)))[:300]


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"

