"""Build llama.cpp's `llama-server` once from the llama.cpp that llama-cpp-python vendors, against
the libraries pip already compiled (finding one to run is server_binary.py's job, its names
importable from here too).

    path = find_server(setting)              # Settings path, PATH, then a build of ours
    path = build_server(report=print)        # ~5 min on 2 cores; cached per llama-cpp-python version

The build compiles only llama.cpp's common/ and tools/server/ (with their vendored helpers):
llama_server.cmake stands in for llama.cpp's root CMakeLists.txt and imports libggml*, libllama
and libmtmd from the installed llama_cpp package, so ggml and llama are not compiled again (a
standalone build of the whole tree took 12 minutes here). The binary finds those libraries through
its RPATH, set to the installed package; a server built for another installation is rebuilt.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import tarfile
from pathlib import Path
from typing import Callable

from draftlight.engine.core.errors import ServerBuildError
from draftlight.engine.server.build_record import RECORD, write_record
from draftlight.engine.server.sdist import download_sdist
# what finds and checks a server: importable from here too, as before
from draftlight.engine.server.server_binary import (  # noqa: F401
    BINARY, BUILT, RPC_BINARY, RPC_MODULE, SERVER_DIR_VARIABLE, built_server_path, check_build,
    check_rpc_server, check_server_binary, find_rpc_server, find_server, llama_lib_dir,
    llama_version, remove_abandoned_builds, server_for_terminal, servers_dir)
from draftlight.lifetimes import owned, popen_tied
from draftlight.lock_holders import lock_holder
from draftlight.shared_files import WaitCancelled, lock_path, once

Report = Callable[[str, int], None]  # (what is happening, percent or -1)


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

    def waiting() -> None:
        holder = lock_holder(lock_path(target))
        report("waiting for the llama-server build another Draftlight is making"
               + (f" ({holder})" if holder else ""), -1)
    try:  # one build at a time: another Draftlight's is waited for, then used
        with once(lock_path(target), should_cancel=should_cancel, on_wait=waiting):
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

