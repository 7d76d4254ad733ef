"""On a CPU where llama.cpp's AMX kernels crash (issue 59), every engine runs, and the note that
says so comes once per machine. DRAFTLIGHT_SIMULATE_AMX_CRASH=1 makes the CPU check answer
"crashes with extra buffers" on any CPU; each test checks afresh, in a file of its own."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from draftlight.engine.llama import cpu_check
from draftlight.engine.server.process import ManagedServer, ServerOptions
from draftlight.modes import OFF, Mode


def chat(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", "--no-color",
                           "--max-tokens", "12", "--temp", "0", *args],
                          capture_output=True, text=True, timeout=300)


def test_chat_says_the_note_on_its_first_run_only_and_answers_as_usual(simulated_amx_crash, tmp_path):
    usual = subprocess.run(  # the same question where nothing crashes
        [sys.executable, "-P", "-m", "draftlight", "chat", "--no-color", "--max-tokens", "12",
         "--temp", "0", "--mode", "off", "Name three colours."],
        capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if k != cpu_check.SIMULATE_VARIABLE})
    first = chat("--mode", "off", "Name three colours.")
    assert first.returncode == 0, first.stderr
    assert "AMX kernels crash on this CPU" in first.stderr
    assert first.stdout == usual.stdout
    second = chat("--mode", "off", "Name three colours.")
    assert second.returncode == 0 and second.stderr.strip() == "", second.stderr
    assert second.stdout == usual.stdout


def test_a_bad_input_on_such_a_cpu_is_still_one_line(simulated_amx_crash, tmp_path, bundled_model):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(bundled_model.read_bytes()[:200_000])
    proc = chat("--target", str(cut), "Hi")
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("draftlight: error:"), line


@pytest.mark.slow
def test_our_llama_server_starts_without_repacked_weights_and_answers_as_plain_decoding(
        simulated_amx_crash, llama_server_binary, bundled_model):
    from draftlight.engine.core.sampling import SamplingParams
    from draftlight.engine_spec import EngineSpec
    from draftlight.launch import open_engine
    messages = [{"role": "user", "content": "Repeat: the cat sat on the mat, the cat sat."}]
    params = SamplingParams(temperature=0.0, max_tokens=24)
    spec = EngineSpec(target_path=str(bundled_model), n_ctx=1024, engine="llama-server",
                      mode=Mode.parse("llama:ngram-mod"), llama_server=str(llama_server_binary))
    engine = open_engine(spec)
    try:
        assert engine.options.repack is False and "--no-repack" in engine.log[0]
        assert any("AMX" in line for line in engine.load_notices)
        served = list(engine.generate(messages, params, Mode.parse("llama:ngram-mod")))[-1].text
    finally:
        engine.close()
    local = open_engine(EngineSpec(target_path=str(bundled_model), n_ctx=1024, mode=OFF))
    try:
        assert local.load_notices == ()  # said once on this machine, by the server's start
        plain = list(local.generate(messages, params, OFF))[-1].text
    finally:
        local.close()
    assert served == plain


@pytest.mark.slow
def test_a_llama_server_that_crashes_at_start_is_started_again_without_repacking(
        tmp_path, llama_server_binary, bundled_model):
    """Another build (on PATH, or named in Settings) that dies of SIGILL with repacked weights,
    as AMX builds do on some CPUs: the second start is without them, and says so."""
    crashing = tmp_path / "llama-server"
    crashing.write_text("#!/bin/sh\n"
                        'case " $* " in *" --no-repack "*) exec "$REAL_SERVER" "$@";; esac\n'
                        f"kill -{int(signal.SIGILL)} $$\n")
    crashing.chmod(crashing.stat().st_mode | stat.S_IXUSR)
    os.environ["REAL_SERVER"] = str(llama_server_binary)
    try:
        server = ManagedServer(crashing, ServerOptions(target=Path(bundled_model), n_ctx=512))
        server.start()
    finally:
        del os.environ["REAL_SERVER"]
    try:
        assert server.running and server.options.repack is False
        assert "SIGILL" in server.note and "--no-repack" in server.note
    finally:
        server.close()


def test_a_llama_server_that_fails_otherwise_is_not_started_again(tmp_path, bundled_model):
    failing = tmp_path / "llama-server"
    failing.write_text("#!/bin/sh\necho 'error: something else went wrong'\nexit 1\n")
    failing.chmod(failing.stat().st_mode | stat.S_IXUSR)
    server = ManagedServer(failing, ServerOptions(target=Path(bundled_model)))
    with pytest.raises(Exception, match="something else went wrong"):
        server.start()
    assert server.options.repack and server.note == ""
    assert sum(line.startswith("$ ") for line in server.log) == 1


def test_the_bench_peer_loads_without_extra_buffers_where_they_crash(simulated_amx_crash, bundled_model):
    from draftlight.bench.lcp_pld import PromptLookupPeer
    from draftlight.engine.core.load_options import LoadOptions
    peer = PromptLookupPeer(bundled_model, LoadOptions(n_ctx=512, n_threads=1))
    try:
        assert peer.llama.model_params.use_extra_bufts is False
        result = peer.run([{"role": "user", "content": "Say hi."}], max_tokens=4,
                          temperature=0.0, seed=1)
        assert result.new_tokens > 0
    finally:
        peer.llama.close()
    import llama_cpp
    assert llama_cpp.llama_model_default_params().use_extra_bufts  # put back as it was
