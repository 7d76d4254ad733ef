"""The window on server engines, for real: llama.cpp's llama-server (built from the installed
llama.cpp by the `llama_server_binary` fixture) on the default model, and remote servers that
cannot answer. Checks that the reply's accepted drafts are highlighted as on the in-process
engine, that greedy text is the same on both engines, that no llama-server outlives its window,
and that each failure is one line in a window that stays usable."""

from __future__ import annotations

import os
import stat

import pytest
from PySide6.QtWidgets import QApplication

from draftlight.engine.server.process import free_port
from draftlight.settings import Settings
from draftlight.store.history import INTERRUPTED
from draftlight.ui.flash.driver import DURATION
from tests.support.pixels import distance, plain_background, run_background
from tests.support.real_window import (cost_cache_file, real_window,  # noqa: F401
                                       send_and_wait_real, shared_cost_cache)
from tests.support.window import assert_spans_are_run_text, highlighted_text
from tests.support.waiting import wait_until, window_state
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF, REMOTE, Mode

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

# Greedy SmolLM2 copies the line from the prompt: llama-server's ngram-simple (a 12-token
# lookup) finds it there and drafts the end of the line.
PROMPT = ("Repeat this line three times: the cat sat on the mat, the dog sat on the log, "
          "the bird sat on the tree.")


@pytest.fixture(scope="module")
def default_target(module_home) -> str:
    """The default target (Q8_0: a batch computes exactly as one token at a time, so greedy
    text is the same on both engines), made once for the module."""
    from draftlight.store.default_model import prepare_default_model
    return str(prepare_default_model().path)


def server_settings(target: str, **changes) -> Settings:
    values = dict(engine="llama-server", spec_type="ngram-simple", target_path=target,
                  n_threads=1, max_tokens=60)
    return Settings(**(values | changes))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def server_pid(window) -> int:
    return window.engine.worker.engine.server.pid


def banner_line(qtbot, window) -> str:
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=60_000)
    return window.banner.label.text()


def test_llama_server_answers_with_highlighted_drafts_and_local_greedy_text_matches(
        qtbot, real_window, llama_server_binary, default_target):
    window = real_window(server_settings(default_target))  # llama-server found, not named
    wait_until(qtbot, lambda: window.ready, "the models to load", 120_000,
               lambda: window_state(window))
    assert window.current_mode() == Mode.parse("llama:ngram-simple")
    assert window.toolbar.mode_box.currentText() == "llama.cpp ngram-simple"
    assert Mode.parse("llama:ngram-mod") in window.models.modes and NGRAM not in window.models.modes
    assert window.model_bar.engine_box.currentData() == "llama-server"
    assert not window.model_bar.draft_box.isEnabled()
    # What only the in-process engine does is off, and says why.
    assert not window.serve_switch.action.isEnabled()
    assert "engine on this computer" in window.serve_switch.action.toolTip()

    view = send_and_wait_real(qtbot, window, PROMPT)
    server = view.text
    assert view.figures.stats.mode == Mode.parse("llama:ngram-simple")
    assert view.figures.stats.draft_kind == "llama-server" and view.figures.stats.accepted > 0
    assert not window.toolbar.compare_action.isEnabled()
    assert "engine on this computer" in window.toolbar.compare_action.toolTip()
    # Accepted drafts are runs, and the highlighted text is theirs, coloured.
    assert view.runs and sum(tokens for _s, _e, tokens in view.runs) == view.figures.stats.accepted
    spans = highlighted_text(view)
    assert spans and all(coloured for _, coloured in spans)
    assert_spans_are_run_text([text for text, _ in spans],
                              [view.text[start:end] for start, end, _ in view.runs])
    # On screen, once the flash has faded: the run rests on its tint, "The" on the page.
    qtbot.wait(int((DURATION + 0.3) * 1000))
    assert distance(run_background(view, len(view.runs) - 1), plain_background(view)) > 20

    # The server's log is in View ▸ Server log, and follows new lines.
    window.server_log_action.trigger()
    log_view = window.server_log_dialog.text
    assert "llama_server: listening on http://127.0.0.1:" in log_view.toPlainText()
    shown = log_view.blockCount()

    # The same prompt on the in-process engine: the same greedy text. Switching engines stops
    # the llama-server.
    pid = server_pid(window)
    window.choose_engine("local")
    wait_until(qtbot, lambda: window.ready and not window.loading, "the models to load", 120_000,
               lambda: window_state(window))
    assert not alive(pid)
    assert window.models.modes == (AUTO, OFF, DRAFT, NGRAM)
    assert window.serve_switch.action.isEnabled() and window.model_bar.draft_box.isEnabled()
    window.set_mode(NGRAM)
    local = send_and_wait_real(qtbot, window, PROMPT)
    assert local.figures.stats.mode == NGRAM and local.runs
    assert local.text == server
    assert window.toolbar.compare_action.isEnabled()
    assert log_view.blockCount() >= shown  # the dialog keeps what it showed


def test_closing_the_window_stops_llama_server(qtbot, real_window, llama_server_binary,
                                               default_target):
    window = real_window(server_settings(default_target, llama_server=str(llama_server_binary),
                                         spec_type="ngram-mod", max_tokens=8))
    wait_until(qtbot, lambda: window.ready, "the models to load", 120_000,
               lambda: window_state(window))
    view = send_and_wait_real(qtbot, window, "Say hello.")
    assert view.text.strip() and view.figures.stats.mode == Mode.parse("llama:ngram-mod")
    # Another speculation type restarts the server with it (a new process).
    first = server_pid(window)
    window.set_mode(Mode.parse("llama:ngram-simple"))
    assert window.settings.spec_type == "ngram-simple"  # the next start uses it too
    view = send_and_wait_real(qtbot, window, "Say hello.")
    assert view.figures.stats.mode == Mode.parse("llama:ngram-simple")
    second = server_pid(window)
    assert second != first and not alive(first) and alive(second)
    window.close()
    assert not alive(second)


def not_a_server(tmp_path, name: str, script: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


@pytest.mark.parametrize("binary, words", [
    ("/bin/true", "is not llama.cpp's llama-server"),
    # says it is llama-server, then exits instead of serving
    ("fake", "llama-server stopped (exit status 3)"),
])
def test_a_binary_that_is_not_llama_server_is_one_line_and_the_window_stays_usable(
        qtbot, real_window, bundled_model, tmp_path, binary, words):
    if binary == "fake":
        binary = not_a_server(tmp_path, "llama-server", 'echo "version: 1 (abc)"\n'
                              'echo "built with cc"\n[ "$1" = "--version" ] && exit 0\n'
                              'echo "error: cannot load the model"\nexit 3\n')
    window = real_window(server_settings(str(bundled_model), llama_server=binary))
    line = banner_line(qtbot, window)
    assert line.startswith("Could not start llama-server: ") and words in line
    assert "\n" not in line and "Traceback" not in line
    assert not window.ready and not window.send_button.isEnabled()
    assert window.status_label.text() == "No model loaded"
    assert window.toolbar.settings_action.isEnabled()
    assert window.model_bar.engine_box.isEnabled()
    QApplication.processEvents()


def test_an_unreachable_remote_server_is_one_line_on_sending_and_the_message_is_kept(
        qtbot, real_window):
    url = f"http://127.0.0.1:{free_port()}"
    window = real_window(Settings(engine="remote", server_url=url, max_tokens=8))
    wait_until(qtbot, lambda: window.ready, "the models to load", 30_000,
               lambda: window_state(window))
    assert window.models.modes == (REMOTE,)
    assert not window.model_bar.target_box.isEnabled()
    view = send_and_wait_real(qtbot, window, "Hello there")
    line = window.banner.label.text()
    assert window.banner.isVisible() and "cannot reach the server at 127.0.0.1:" in line
    assert "\n" not in line
    assert view.status == INTERRUPTED
    saved = window.history.messages(window.session.conversation_id)
    assert [m.role for m in saved][:1] == ["user"] and saved[0].text == "Hello there"
    # The window stays usable: the reply can be asked for again.
    assert window.regenerate_button.isEnabled() and window.send_button.isEnabled()


def test_a_remote_server_refusing_the_key_is_one_line(qtbot, real_window, llama_server_binary,
                                                       bundled_model):
    from draftlight.engine.server.process import ManagedServer, ServerOptions
    server = ManagedServer(llama_server_binary, ServerOptions(target=bundled_model, threads=1))
    server.start()
    try:
        window = real_window(Settings(engine="remote", server_url=server.url,
                                      server_api_key="not-the-key", max_tokens=4))
        wait_until(qtbot, lambda: window.ready, "the models to load", 30_000,
                   lambda: window_state(window))
        send_and_wait_real(qtbot, window, "Hello")
        line = window.banner.label.text()
        assert window.banner.isVisible() and "401" in line and "\n" not in line
    finally:
        server.close()


def test_a_target_with_mtp_layers_offers_mtp_which_runs_on_llama_server_and_flashes(
        qtbot, real_window, llama_server_binary, tmp_path_factory):
    from tests.support.synthetic_models import cached_model
    from draftlight.ui.engine.model_bar import MTP
    target = cached_model("glm4moe-mtp-agreeing", "small", tmp_path_factory.mktemp("mtp"))
    window = real_window(Settings(target_path=str(target), n_threads=1, max_tokens=24,
                                  mode=OFF))
    wait_until(qtbot, lambda: window.ready, "the models to load", 120_000,
               lambda: window_state(window))
    box = window.model_bar.draft_box
    index = box.findData(MTP)
    assert index >= 0 and box.itemText(index) == "MTP (built into the model)"

    window.choose_draft(MTP)  # as picking it in the Draft drop-down does
    qtbot.waitUntil(lambda: window.ready and window.models.engine_kind == "llama-server",
                    timeout=120_000)
    assert window.settings.engine == "llama-server" and window.settings.spec_type == "draft-mtp"
    assert window.current_mode() == Mode.parse("llama:draft-mtp")
    assert window.toolbar.mode_box.currentText() == "MTP (built into the model)"
    view = send_and_wait_real(qtbot, window, "Tell me about the sea.")
    assert view.figures.stats.mode == Mode.parse("llama:draft-mtp") and view.figures.stats.accepted > 10
    # the accepted MTP drafts are runs, highlighted in colour (an accepted EOS is not shown)
    assert view.runs and sum(t for _s, _e, t in view.runs) >= view.figures.stats.accepted - 1
    spans = highlighted_text(view)
    assert spans and all(coloured for _, coloured in spans)
    assert_spans_are_run_text([text for text, _ in spans],
                              [view.text[start:end] for start, end, _ in view.runs])
