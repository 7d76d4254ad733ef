"""Two Draftlights at once on one home (issue 61): `serve` and `chat` (and two `chat`s) started
together on a fresh home all answer, the bundled model is converted once, and the files they
share are never half-written or lost (draftlight.shared_files)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from draftlight.shared_files import once, read_json_object, update_json
from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401

# DRAFTLIGHT_TEST_ROUNDS=20 for the tries the issue names; the suite runs a few
ROUNDS = int(os.environ.get("DRAFTLIGHT_TEST_ROUNDS", "2"))
KEY = "two-at-once-key"


def in_children(code: str, *args: str, count: int) -> None:
    """Run `code` (argv: *args, then the child's number) in `count` Python processes at once;
    each must exit 0."""
    children = [subprocess.Popen([sys.executable, "-P", "-c", code, *args, str(i)])
                for i in range(count)]
    assert [child.wait(timeout=120) for child in children] == [0] * count


def test_updates_from_many_processes_keep_every_key(tmp_path):
    path = tmp_path / "cache" / "costs.json"
    in_children("import sys\nfrom pathlib import Path\n"
                "from draftlight.shared_files import update_json\n"
                "path, writer = Path(sys.argv[1]), sys.argv[2]\n"
                "for i in range(25):\n"
                "    update_json(path, lambda known: known.__setitem__(f'{writer}-{i}', i))\n",
                str(path), count=4)
    assert len(read_json_object(path)) == 100
    assert [p.name for p in path.parent.iterdir() if p.suffix == ".tmp"] == []


def test_a_half_written_or_foreign_file_reads_as_empty_and_is_rebuilt(tmp_path):
    path = tmp_path / "costs.json"
    for text in ('{"a": 1', "[1, 2]", "\x00\xff"):
        path.write_text(text)
        assert read_json_object(path) == {}
    update_json(path, lambda known: known.__setitem__("b", 2))
    assert json.loads(path.read_text()) == {"b": 2}


def test_a_lock_whose_holder_was_killed_is_taken_over(tmp_path):
    lock = tmp_path / ".thing.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom draftlight.shared_files import once\n"
         f"with once({str(lock)!r}):\n    print('held', flush=True)\n    time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        waited = []
        started = time.monotonic()

        def kill_holder() -> None:
            waited.append(True)
            holder.send_signal(signal.SIGKILL)
        with once(lock, on_wait=kill_holder):
            pass
        assert waited == [True] and time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()


def test_two_conversions_into_one_file_convert_once(tmp_path, bundled_model):
    dest = tmp_path / "models" / "smol.Q8_0.gguf"
    in_children("import json, sys\nfrom pathlib import Path\n"
                "from draftlight.store.convert import convert\n"
                "seen = []\n"
                "convert(Path(sys.argv[1]), Path(sys.argv[2]), 'Q8_0',\n"
                "        on_progress=lambda progress: seen.append(progress.stage))\n"
                "Path(sys.argv[3] + sys.argv[4]).write_text(json.dumps(sorted(set(seen))))\n",
                str(bundled_model), str(dest), str(tmp_path / "stages-"), count=2)
    seen = sorted(json.loads((tmp_path / f"stages-{i}").read_text()) for i in range(2))
    # one converted (it quantized and verified); the other either waited for it and took its
    # file, or came after it and converted again into the same place, never alongside
    assert ["quantizing", "verifying"] in seen, seen
    assert dest.is_file() and sorted(p.name for p in dest.parent.iterdir()) == [dest.name]


def _serve(home: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "DRAFTLIGHT_HOME": str(home), "DRAFTLIGHT_API_KEY": KEY}
    with log.open("w") as stderr:
        return subprocess.Popen([sys.executable, "-P", "-m", "draftlight", "serve", "--port", "0",
                                 "--ctx", "1024"], stdout=subprocess.DEVNULL, stderr=stderr,
                                env=env)


def _chat(home: Path) -> subprocess.Popen:
    env = {**os.environ, "DRAFTLIGHT_HOME": str(home)}
    return subprocess.Popen([sys.executable, "-P", "-m", "draftlight", "chat", "--max-tokens", "8",
                             "--ctx", "1024", "--no-color", "Say hello."],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _ask_served(log: Path, process: subprocess.Popen) -> str:
    deadline = time.monotonic() + 240
    while not (found := re.search(r"serving (\S+) at (http://\S+/v1)", log.read_text())):
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    body = json.dumps({"model": found[1], "max_tokens": 8, "messages": [
        {"role": "user", "content": "Say hello."}]}).encode()
    request = urllib.request.Request(found[2] + "/chat/completions", data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.load(answer)["choices"][0]["message"]["content"]


def _check_home(home: Path) -> None:
    models = home / "data" / "models"
    assert sorted(p.name for p in models.iterdir() if p.is_file()) == [
        "SmolLM2-135M-Instruct.Q8_0.gguf"]
    leftovers = [p for p in home.rglob("*") if p.name.endswith((".tmp", ".converting"))]
    assert leftovers == []


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_serve_and_two_chats_started_together_on_a_fresh_home_all_answer(tmp_path, round_):
    home, log = tmp_path / "home", tmp_path / "serve.log"
    delays = random.Random(round_).choices([0, 0.05, 0.2, 0.5], k=3)
    time.sleep(delays[0])
    server = _serve(home, log)
    try:
        time.sleep(delays[1])
        first = _chat(home)
        time.sleep(delays[2])
        second = _chat(home)
        served = _ask_served(log, server)
        for chat in (first, second):
            out, err = chat.communicate(timeout=240)
            assert chat.returncode == 0, err
            assert out.strip() and "could not" not in err, err
        assert served.strip()
        assert "could not" not in log.read_text()
    finally:
        server.kill()
        server.wait()
    _check_home(home)


@pytest.mark.slow
def test_a_chat_killed_mid_conversion_leaves_the_next_ones_to_convert_and_answer(tmp_path):
    home = tmp_path / "home"
    killed = _chat(home)
    converting = home / "data" / "models" / ".SmolLM2-135M-Instruct.Q8_0.gguf.converting"
    deadline = time.monotonic() + 120
    while not converting.exists() and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    killed.kill()
    killed.communicate()
    again = [_chat(home), _chat(home)]
    for chat in again:
        out, err = chat.communicate(timeout=240)
        assert chat.returncode == 0 and out.strip(), err
    _check_home(home)


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(max(1, ROUNDS // 2)))
def test_the_window_and_a_chat_started_together_on_a_fresh_home_both_answer(
        qtbot, real_window, isolated_home, round_):
    from draftlight.settings import Settings
    from tests.support.real_window import send_and_wait_real
    from tests.support.window import wait_ready
    chat = _chat(isolated_home)  # the same home as the window's (this test's)
    time.sleep(random.Random(round_).choice([0, 0.05, 0.2, 0.5]))
    window = real_window(Settings(n_ctx=1024))
    wait_ready(qtbot, window, 240_000)
    view = send_and_wait_real(qtbot, window, "Say hello.")
    assert view.text.strip()
    out, err = chat.communicate(timeout=240)
    assert chat.returncode == 0 and out.strip() and "could not" not in err, err
    assert "Could not" not in window.banner.label.text()
    _check_home(isolated_home)
