"""A chat template renders in a process of its own, bounded from outside: one call of C code
inside a template (a quadratic `sum`, a gigantic `|string`) is stopped on time and never grows
the app; Ctrl-C stops the app mid-render; a child killed while idle is replaced unseen; the app
itself never imports Jinja."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import textwrap
import time

import pytest

from draftlight.engine.text.chat_template import RENDER_SECONDS, ChatTemplate, renderer
from draftlight.engine.core.errors import UnsafeTemplateError
from tests.support.gguf_rewrite import rewrite_gguf

CHAT = [{"role": "user", "content": "Hello"}]
GOOD = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
# One call each, inside C: no tracer or budget between template lines can see it run.
HANGS_IN_C = "{{ ([['x']] * 3000000)|sum(start=[]) }}"  # list + list, a million times: O(n²)
GROWS_IN_C = "{{ ((['x' * 3000000] * 3000000)|string)|length }}"  # the repr of 9 TB of text


# A test run started in the background of a shell (a CI script's `cmd &`) inherits SIGINT
# ignored, and Python then installs no KeyboardInterrupt: the children that test Ctrl-C ask for it.
WITH_CTRL_C_NOTE = "as a terminal's program has it, even when started from a background job"


def with_ctrl_c(arguments: list[str]) -> list[str]:
    """`python -m draftlight ARGUMENTS`, with Ctrl-C raising KeyboardInterrupt as in a terminal."""
    return [sys.executable, "-P", "-c",
            "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"sys.argv = ['draftlight', *{arguments!r}]; "
            "runpy.run_module('draftlight', run_name='__main__')"]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_template_that_hangs_inside_one_call_is_stopped_by_its_deadline():
    start = time.monotonic()
    with pytest.raises(UnsafeTemplateError, match=r"ran longer than \d+ s"):
        ChatTemplate(HANGS_IN_C)
    assert time.monotonic() - start < RENDER_SECONDS + 5
    assert ChatTemplate(GOOD).render(CHAT) == "[user] Hello\n"  # a new child answers at once


def test_a_template_that_grows_inside_one_call_fails_in_its_process_not_in_the_app():
    before = peak_mb()
    with pytest.raises(UnsafeTemplateError, match="MB|ran longer than") as caught:  # (busy CPU)
        ChatTemplate(GROWS_IN_C)
    assert "\n" not in str(caught.value)
    assert peak_mb() - before < 100, "the app grew: the template ran in it"
    assert ChatTemplate(GOOD).render(CHAT) == "[user] Hello\n"


def test_a_child_killed_while_idle_is_replaced_without_a_word():
    template = ChatTemplate(GOOD)
    renderer().close()  # as if it had been killed from outside
    assert template.render(CHAT) == "[user] Hello\n"
    process = renderer()._process
    process.kill()
    process.wait()
    assert template.render(CHAT) == "[user] Hello\n"


def test_ctrl_c_stops_a_render_at_once_and_its_process_with_it():
    script = textwrap.dedent(f"""
        import os, signal, sys, threading, time
        signal.signal(signal.SIGINT, signal.default_int_handler)  # {WITH_CTRL_C_NOTE}
        from draftlight.engine.text.chat_template import ChatTemplate, renderer
        ChatTemplate("ok")  # the child is up
        child = renderer()._process.pid
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.monotonic()
        try:
            ChatTemplate({HANGS_IN_C!r})
        except KeyboardInterrupt:
            print(f"interrupted after {{time.monotonic() - start:.2f}} s")
        time.sleep(0.2)
        try:
            os.kill(child, 0)
            print("child alive")
        except ProcessLookupError:
            print("child gone")
        print("jinja2 in the app:", "jinja2" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    seconds = float(re.search(r"interrupted after ([\d.]+) s", out.stdout).group(1))
    assert seconds < 2.0, out.stdout
    assert "child gone" in out.stdout
    assert "jinja2 in the app: False" in out.stdout


def test_a_stranded_child_ends_when_the_app_is_gone():
    """The app killed while its child waits: the child's input closes and it ends."""
    script = ("from draftlight.engine.text.chat_template import ChatTemplate, renderer\n"
              "ChatTemplate('ok'); print(renderer()._process.pid, flush=True)\n"
              "import time; time.sleep(60)\n")
    app = subprocess.Popen([sys.executable, "-P", "-c", script], stdout=subprocess.PIPE,
                           text=True)
    child = int(app.stdout.readline())
    app.kill()
    app.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail("the template's process outlived the app")


def test_serve_refuses_a_model_whose_template_hangs_in_one_line(bundled_model, tmp_path):
    path = rewrite_gguf(bundled_model, tmp_path / "hangs.gguf",
                        {"tokenizer.chat_template": HANGS_IN_C})
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-P", "-m", "draftlight", "serve", "--port", "0",
                          "--target", str(path), "--mode", "off"], capture_output=True,
                         text=True, timeout=120,
                         env={**os.environ, "DRAFTLIGHT_HOME": str(tmp_path / "home")})
    assert out.returncode == 2, out.stderr
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("draftlight: error: the model's chat template tried something unsafe")
    assert "ran longer than" in line
    assert time.monotonic() - start < 60


def test_ctrl_c_stops_serve_while_a_template_hangs(bundled_model, tmp_path):
    import signal

    import psutil
    path = rewrite_gguf(bundled_model, tmp_path / "hangs.gguf",
                        {"tokenizer.chat_template": HANGS_IN_C})
    serve = subprocess.Popen(with_ctrl_c(["serve", "--port", "0", "--target", str(path),
                                          "--mode", "off"]), stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "DRAFTLIGHT_HOME": str(tmp_path / "h")})
    deadline = time.monotonic() + 60
    def template_process_started() -> bool:  # below serve's engine host
        try:
            return any("template_child" in " ".join(c.cmdline())
                       for c in psutil.Process(serve.pid).children(recursive=True))
        except psutil.Error:  # one that ended meanwhile
            return False

    while not template_process_started():
        assert time.monotonic() < deadline and serve.poll() is None
        time.sleep(0.05)
    time.sleep(1.5)  # the model loads (under a second), and the template's sample render hangs
    stopped = time.monotonic()
    serve.send_signal(signal.SIGINT)
    serve.communicate(timeout=30)
    assert serve.returncode == 130 and time.monotonic() - stopped < 2.0
