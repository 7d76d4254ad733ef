"""One model split over two machines with llama.cpp's RPC, both played by rpc-server processes
on 127.0.0.1: the same greedy text as the in-process engine computing as the helpers do, where
each part went, and a helper dying mid-reply or missing at start as one clear line."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from draftlight.engine.reply.events import Done
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.server.build import find_rpc_server
from draftlight.engine.server.client import ServerError
from draftlight.engine.server.server_engine import ServerEngine
from draftlight.engine.server.process import ServerOptions, ServerStartError, free_port, popen_tied
from draftlight.engine.server.rpc import placement, unreachable

from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401
from tests.support.waiting import wait_until, waiting_for, window_state
from draftlight.modes import OFF, Mode

pytestmark = pytest.mark.slow
PROMPT = [{"role": "user", "content": "Explain in three sentences why the sky is blue, then "
                                      "repeat the first sentence."}]


def start_helper() -> tuple[subprocess.Popen, str]:
    port = free_port()
    helper = popen_tied([str(find_rpc_server()), "--host", "127.0.0.1", "--port", str(port),
                         "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while unreachable((address,), timeout=0.2) and time.monotonic() < deadline:
        time.sleep(0.1)
    return helper, address


@pytest.fixture
def helpers(llama_server_binary):
    started = [start_helper() for _ in range(2)]
    yield started
    for helper, _ in started:
        helper.kill()
        helper.wait()


def split_engine(llama_server_binary, target, addresses, spec="none"):
    options = ServerOptions(target=Path(target), threads=1, spec_type=spec, rpc=tuple(addresses),
                            n_ctx=1024)
    return ServerEngine.managed(llama_server_binary, options)


def test_a_split_model_answers_as_llama_cpp_computes_without_repacked_weights(
        helpers, llama_server_binary, bundled_model, module_home):
    engine = split_engine(llama_server_binary, bundled_model, [a for _, a in helpers],
                          "ngram-simple")
    try:
        where = [line for line in engine.log if "buffer size" in line]  # each device's
        for _, address in helpers:  # both helpers hold part of the model and its cache
            assert any(f"RPC0[{address}] model buffer size" in line for line in where), where
            assert any(f"[{address}] KV buffer size" in line for line in where), where
        # in words: each helper's layers (of SmolLM2's 30) and memory, then this machine's
        parts = placement(engine.log).split(" · ")
        assert sorted(p.split(": ")[0] for p in parts[:2]) == sorted(a for _, a in helpers)
        assert parts[2].startswith("this machine: ")
        layers = [int(p.split(": ")[1].split(" of 30 layers")[0]) for p in parts[:2]]
        assert sum(layers) == 30 and min(layers) > 0, parts
        done = list(engine.generate(PROMPT, SamplingParams(max_tokens=64),
                                    Mode.parse("llama:ngram-simple")))[-1]
    finally:
        engine.close()
    # The helpers keep weights in plain buffers: llama.cpp's repacked CPU weights (the extra
    # buffer types) are not used over RPC, so the reference is the in-process engine without
    # them. With them, the greedy text differs at a near-tie (docs/engines.md).
    local = Engine.load(bundled_model, options=LoadOptions(n_threads=1, extra_buffers=False,
                                                           n_ctx=1024))
    try:
        reference = list(local.generate(PROMPT, SamplingParams(max_tokens=64), OFF))[-1]
    finally:
        local.close()
    assert isinstance(done, Done) and done.text == reference.text


def test_a_helper_dying_mid_reply_is_one_line_within_seconds(
        helpers, llama_server_binary, bundled_model):
    engine = split_engine(llama_server_binary, bundled_model, [a for _, a in helpers])
    victim, address = helpers[1]
    try:
        events = engine.generate([{"role": "user", "content": "Write a long story."}],
                                 SamplingParams(max_tokens=2000), Mode.parse("llama:none"))
        next(e for e in events if hasattr(e, "text"))  # the reply has started
        killed = time.monotonic()
        victim.kill()
        with pytest.raises(ServerError) as caught:
            for _ in events:
                pass
        seconds = time.monotonic() - killed
    finally:
        engine.close()
    line = str(caught.value)
    assert seconds < 15 and "\n" not in line
    assert line.startswith("llama-server stopped mid-reply:")
    assert f"{address} no longer answers" in line


def test_a_helper_missing_at_start_is_named(llama_server_binary, bundled_model, helpers):
    missing = f"127.0.0.1:{free_port()}"
    with pytest.raises(ServerStartError) as caught:
        split_engine(llama_server_binary, bundled_model, [helpers[0][1], missing])
    assert str(caught.value).startswith(f"{missing} does not answer")


def test_engine_rpc_server_lends_this_machine_on_loopback(llama_server_binary):
    port = free_port()
    app = subprocess.Popen([sys.executable, "-P", "-m", "draftlight", "engine", "rpc-server", "--port",
                            str(port)], stderr=subprocess.PIPE, text=True,
                           cwd=Path(__file__).resolve().parents[3])
    try:
        deadline = time.monotonic() + 30
        while unreachable((f"127.0.0.1:{port}",), timeout=0.2) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not unreachable((f"127.0.0.1:{port}",))
    finally:
        app.terminate()
        _, err = app.communicate(timeout=20)
    assert f"lending this machine at 127.0.0.1:{port}" in err and "warning" not in err
    # what it lends, as rpc-server lists it: a device, what it is, its memory
    assert re.search(rf"lending this machine at 127.0.0.1:{port}: \S+ \(.+, \d+ MiB\)", err), err


def test_the_window_on_a_split_model_keeps_the_conversation_when_a_helper_dies(
        qtbot, real_window, helpers, llama_server_binary, bundled_model):
    from draftlight.settings import Settings
    from PySide6.QtCore import Qt
    from draftlight.store.history import COMPLETE, INTERRUPTED
    from tests.support.window import send_and_wait
    addresses = ", ".join(a for _, a in helpers)
    window = real_window(Settings(engine="llama-server", spec_type="none", n_threads=1,
                                  target_path=str(bundled_model), rpc_servers=addresses,
                                  max_tokens=2000, n_ctx=2048))
    wait_until(qtbot, lambda: window.ready, "the models to load", 120_000,
               lambda: window_state(window))
    victim, address = helpers[1]
    status = window.status_label.text()  # where the model went, in the status bar
    assert ", split: " in status and all(f"{a}: " in status for _, a in helpers), status
    # The helper dies once the reply is streaming: on its first text, not on a timer (on a
    # loaded machine a 3 s timer fired before the reply began, a case of its own: below).
    state = lambda: window_state(window)  # noqa: E731
    with waiting_for(qtbot, window.session.reply_finished, "the reply cut short by the helper's "
                     "death", 60_000, state) as finished:
        window.composer.setPlainText("Write a long story about a dragon.")
        qtbot.keyClick(window.composer, Qt.Key_Return)
        wait_until(qtbot, lambda: window.session.streaming
                   and bool(window.session.stream.builder.text), "the reply's first text",
                   60_000, state)
        victim.kill()
    view = finished.args[0]
    line = window.banner.label.text()
    assert window.banner.isVisible() and "llama-server stopped mid-reply" in line
    assert f"{address} no longer answers" in line and "\n" not in line
    assert view.status == INTERRUPTED and view.text  # what had streamed stays, marked
    saved = window.history.messages(window.session.conversation_id)
    assert [m.role for m in saved] == ["user", "assistant"]
    assert saved[0].text == "Write a long story about a dragon." and saved[1].text == view.text
    assert window.send_button.isEnabled()

    # The banner offers to go on without the machine that died: one click restarts
    # llama-server over the machine still there, and the conversation goes on.
    survivor = helpers[0][1]
    assert window.banner.action_button.text() == f"Restart without {address}"
    qtbot.mouseClick(window.banner.action_button, Qt.LeftButton)
    assert window.settings.rpc_servers == survivor
    wait_until(qtbot, lambda: window.ready, "the models to load", 120_000,
               lambda: window_state(window))
    # the window's max_tokens is 2,000 (for the story above): a reply that runs to it takes
    # 80 s on one machine at 25 tok/s
    view = send_and_wait(qtbot, window, "Say hello.", timeout=150_000)
    assert view.status == COMPLETE and view.text
    assert f"{survivor}: 30 of 30 layers" in window.status_label.text()
    starts = [line for line in window.server_log.lines if line.startswith("$ ")]
    assert f"--rpc {survivor} " in starts[-1] and address not in starts[-1]
    assert [m.role for m in window.history.messages(window.session.conversation_id)] == [
        "user", "assistant", "user", "assistant"]


def test_bench_over_a_split_reports_its_passes_next_to_this_machine_alone(
        tmp_path, helpers, llama_server_binary, bundled_model):
    import json
    from draftlight.cli import main
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question_id": 1, "category": "document_qa", "turns": [
        "Quote the first sentence: 'The sky is blue. Grass is green.'"]}) + "\n")
    out = tmp_path / "out"
    addresses = ",".join(a for _, a in helpers)
    # two llama-server modes: an rpc-server serves one llama-server at a time, so they take turns
    assert main(["bench", "--questions", str(questions), "--modes",
                 "plain,llama:none,llama:ngram-simple",
                 "--max-tokens", "16", "--target", str(bundled_model), "--rpc", addresses,
                 "--server-binary", str(llama_server_binary), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    passes = report["server_passes"]
    assert passes["machines"] == [a for _, a in helpers]
    for side in ("split", "local"):  # timed by the server's clock, for every pass size
        assert set(passes[side]["ms"]) == {"1", "2", "4", "8", "16"}
        assert all(ms > 0 for ms in passes[side]["ms"].values())
        assert passes[side]["v"]["1"] == 1.0 and passes[side]["v"]["16"] > 1.0
    assert set(passes["rpc_share"]) == {"1", "2", "4", "8", "16"}
    assert passes["v_split_over_local"] > 0
    for mode in ("llama:none", "llama:ngram-simple"):  # the report names rows by their text
        share = report["overall"][mode]["server_share_of_wall"]
        assert 0 < share < 1.5  # the server's decoding time, about the time waited here
    text = (out / "report.md").read_text()
    assert "RPC's share of the pass" in text and "Over the split a k-token pass costs" in text
