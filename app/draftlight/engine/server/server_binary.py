"""Which llama-server (and rpc-server) to run, and where ours is kept: the one Settings name, else
one on PATH, else our build for this installation (one folder per llama-cpp-python version,
machine and library folder); each is checked to run and to be llama.cpp's own, and our build to
be as its record says (build_record.py). Building one is build.py's job.

    path = find_server(setting)              # Settings path, PATH, then a build of ours
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from draftlight.engine.core.errors import ServerBuildError
from draftlight.engine.server.build_record import RECORD, changed_files
from draftlight.engine.server.sdist import PACKAGE
from draftlight.lifetimes import remove_abandoned

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
