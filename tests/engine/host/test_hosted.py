"""llama.cpp in a process of its own (engine/host/hosted.py, engine/host/host_child.py): the same replies
as the in-process engine; a segfault or a hang mid-reply is one line (EngineCrashed) after the
text so far, and the next request starts the host again; in `draftlight chat` one line and exit
2, in `draftlight serve` a 500 with a JSON error and the next request answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from draftlight.engine.core.errors import EngineCrashed, ModelLoadError
from draftlight.engine.reply.events import Done, TextPiece
from draftlight.engine.reply.generator import Engine
from draftlight.engine.host.hosted import HostedEngine, HostSpec
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.auto.measuring import MeasurementInterrupted
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import DRAFT, NGRAM, OFF
from tests.support.replies import reply as run_reply

QUESTION = [{"role": "user", "content": "Name three colours and say why the sky is blue."}]
OPTIONS = LoadOptions(n_ctx=1024)


def hosted(model, monkeypatch=None, debug: str = "", **kwargs) -> HostedEngine:
    if monkeypatch is not None:
        monkeypatch.setenv("DRAFTLIGHT_HOST_DEBUG", debug)
    return HostedEngine(HostSpec(str(model), options=OPTIONS, measure_later=True), **kwargs)


def reply(engine, mode=NGRAM, max_tokens=40) -> tuple[list, Done]:
    answer = run_reply(engine, QUESTION, SamplingParams(max_tokens=max_tokens), mode)
    return list(answer.events), answer.done


def test_the_host_replies_exactly_as_the_engine_in_this_process(bundled_model):
    local = Engine.load(bundled_model, None, OPTIONS, measure_later=True)
    try:
        expected_events, expected = reply(local)
    finally:
        local.close()
    engine = hosted(bundled_model)
    try:
        assert NGRAM in engine.modes and engine.n_ctx == 1024
        assert len(engine.tokenize_chat(QUESTION)) == expected.stats.prompt_tokens
        events, done = reply(engine)
    finally:
        engine.close()
    assert done.text == expected.text
    assert [type(e) for e in events] == [type(e) for e in expected_events]
    pieces = [(e.text, e.source, e.step, e.origin) for e in events if isinstance(e, TextPiece)]
    assert pieces == [(e.text, e.source, e.step, e.origin) for e in expected_events
                      if isinstance(e, TextPiece)]
    assert (done.stats.new_tokens, done.stats.drafted, done.stats.accepted) == (
        expected.stats.new_tokens, expected.stats.drafted, expected.stats.accepted)


@pytest.mark.parametrize("debug, says", [("segfault@5", "SIGSEGV: a crash in llama.cpp"),
                                         ("hang@5", "stopped answering for 2 s")])
def test_a_crash_or_hang_mid_reply_is_one_line_and_the_next_request_restarts(
        bundled_model, monkeypatch, debug, says):
    engine = hosted(bundled_model, monkeypatch, debug, silence_seconds=2)
    try:
        seen = []
        with pytest.raises(EngineCrashed) as caught:
            for event in engine.generate(QUESTION, SamplingParams(max_tokens=40), OFF):
                seen.append(event)
        assert says in str(caught.value) and "\n" not in str(caught.value)
        assert sum(isinstance(e, TextPiece) for e in seen) >= 2  # the text so far was given
        _, done = reply(engine, OFF, 8)  # started again, without the failure
        assert engine.restarts == 1 and done.text and done.stats.stop_reason in ("eos", "max_tokens")
    finally:
        engine.close()


def test_closing_a_reply_early_stops_it_in_the_host(bundled_model):
    engine = hosted(bundled_model)
    try:
        events = engine.generate(QUESTION, SamplingParams(max_tokens=200), OFF)
        for count, event in enumerate(events):
            if count == 4:
                break
        events.close()
        _, done = reply(engine, OFF, 6)
        assert done.text and engine.restarts == 0
        assert engine.pending_measurements()  # measured later: nothing yet
        with pytest.raises(MeasurementInterrupted):
            engine.measure_next(should_cancel=lambda: True)
    finally:
        engine.close()


def test_a_file_that_is_not_a_model_is_one_load_error(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + os.urandom(4096))
    with pytest.raises(ModelLoadError) as caught:
        HostedEngine(HostSpec(str(bad), options=OPTIONS))
    assert "\n" not in str(caught.value)


def test_chat_says_a_crash_in_one_line_and_exits_2(bundled_model, tmp_path):
    env = {**os.environ, "DRAFTLIGHT_HOST_DEBUG": "segfault@6",
           "DRAFTLIGHT_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", "--target",
                          str(bundled_model), "--mode", "off", "--max-tokens", "30", "--no-color",
                          "Name three colours."], capture_output=True, text=True, timeout=120,
                         env=env)
    assert out.returncode == 2, out.stderr
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("draftlight: error: the engine stopped (SIGSEGV")
    assert out.stdout.strip()  # the text so far
    assert "Fatal Python error" not in out.stderr


def test_serve_answers_a_crash_with_a_500_and_the_next_request(bundled_model, tmp_path):
    import re
    import time
    env = {**os.environ, "DRAFTLIGHT_HOST_DEBUG": "segfault@6",
           "DRAFTLIGHT_HOME": str(tmp_path / "home")}
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        serve = subprocess.Popen([sys.executable, "-P", "-m", "draftlight", "serve", "--port", "0",
                                  "--target", str(bundled_model), "--mode", "off", "--ctx", "1024"],
                                 stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    try:
        deadline = time.monotonic() + 120
        while not (found := re.search(r"serving (\S+) at (http://\S+/v1)", log.read_text())):
            assert serve.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        url = found.group(2) + "/chat/completions"
        body = json.dumps({"model": found.group(1), "messages": QUESTION, "max_tokens": 20,
                           "temperature": 0}).encode()

        def post() -> tuple[int, dict]:
            request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=120) as answer:
                    return answer.status, json.load(answer)
            except urllib.error.HTTPError as error:
                return error.code, json.load(error)

        status, crashed = post()
        assert status == 500 and crashed["error"]["code"] == "engine_crashed"
        assert "SIGSEGV" in crashed["error"]["message"]
        status, answered = post()
        assert status == 200 and answered["choices"][0]["message"]["content"]
        assert serve.poll() is None
    finally:
        serve.kill()
        serve.wait()


def test_an_engine_error_in_a_reply_crosses_as_itself_and_the_next_reply_is_answered(
        bundled_model):
    from draftlight.engine.core.errors import ContextOverflowError
    engine = HostedEngine(HostSpec(str(bundled_model), options=LoadOptions(n_ctx=256)))
    try:
        with pytest.raises(ContextOverflowError, match="does not fit the 256-token context"):
            list(engine.generate([{"role": "user", "content": "word " * 2000}],
                                 SamplingParams(max_tokens=8), OFF))
        _, done = reply(engine, OFF, 4)
        assert done.text and engine.restarts == 0
    finally:
        engine.close()


def test_a_host_silent_but_working_is_not_taken_for_hung(bundled_model, monkeypatch):
    """Silent for 3 s against a 1 s limit, but busy (as a long prompt's batches are)."""
    engine = hosted(bundled_model, monkeypatch, "busy@3", silence_seconds=1)
    try:
        _, done = reply(engine, OFF, 12)
        assert done.text and engine.restarts == 0
    finally:
        engine.close()


def test_an_interactive_chat_goes_on_after_a_crash(bundled_model, tmp_path):
    env = {**os.environ, "DRAFTLIGHT_HOST_DEBUG": "segfault@4",
           "DRAFTLIGHT_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", "--target",
                          str(bundled_model), "--mode", "off", "--max-tokens", "12", "--no-color"],
                         input="Name three colours.\nName three animals.\n", capture_output=True,
                         text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    assert "draftlight: the engine stopped (SIGSEGV: a crash in llama.cpp)" in out.stderr
    assert "Fatal Python error" not in out.stderr and "Traceback" not in out.stderr
    assert out.stdout.count("\n") >= 1 and out.stdout.strip()  # the second answer came


def test_a_draft_attached_in_the_host_drafts_and_divergence_is_read_there(bundled_model,
                                                                          tmp_path):
    """What the window asks of the host beyond replies: a draft model opened there (kept when
    the host starts again), detached, and Compare's explanation of two differing answers."""
    from draftlight.engine.reply.compare import explain_divergence
    draft = tmp_path / "draft.gguf"
    draft.write_bytes(bundled_model.read_bytes())
    engine = hosted(bundled_model)
    local = Engine.load(bundled_model, None, OPTIONS, measure_later=True)
    try:
        assert DRAFT not in engine.modes
        engine.attach_draft_file(str(draft), OPTIONS)
        assert DRAFT in engine.modes
        _, done = reply(engine, DRAFT)
        assert done.stats.drafted > 0 and done.stats.accepted == done.stats.drafted  # itself
        a = reply(local, OFF)[1]
        tokens = local.tokenize_chat(QUESTION)
        plain = [t for t in local.target.tokenize(a.text, add_bos=False)][:6]
        other = plain[:3] + [plain[3] + 1] + plain[4:]
        assert engine.explain_divergence(QUESTION, plain, other) == explain_divergence(
            local, QUESTION, plain, other)
        assert engine.explain_divergence(QUESTION, plain, plain[:4]) is None
        engine.kill()  # started again at the next request, with its draft
        assert reply(engine, DRAFT)[1].stats.drafted > 0 and engine.restarts == 1
        engine.detach_draft()
        assert engine.spec.draft is None and DRAFT not in engine.modes
    finally:
        engine.close()
        local.close()
    assert tokens


def test_the_hosted_bench_times_both_engines_and_says_the_ratio(bundled_model, capsys):
    from draftlight.cli import main
    assert main(["bench", "hosted", "--target", str(bundled_model), "--modes", "off,ngram",
                 "--rounds", "2", "--limit", "1", "--max-tokens", "16"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("hosted: ") and lines[-1].endswith(
        "x in-process tokens/s (median of every mode's rounds)")
    assert 0.3 < float(lines[-1].split()[1].rstrip("x")) < 3  # both timed, the same replies
    assert lines[-3].strip().startswith("off: hosted") and lines[-2].strip().startswith("ngram: ")
    assert main(["bench", "hosted", "--modes", "draft"]) != 0  # one line, not a traceback


def test_a_cpu_whose_extra_buffers_crash_is_found_by_the_hosts_first_crash(
        simulated_amx_crash, bundled_model):
    """Where llama.cpp's AMX kernels crash (simulated: the host's first batched request dies of
    SIGILL), the host is started again without the extra buffers, the request is made again,
    and the note says so once; the next host knows, and neither crashes nor says it again."""
    import json
    from pathlib import Path

    from draftlight.engine.llama import cpu_check
    from draftlight.engine.reply.events import Notice
    engine = hosted(bundled_model)
    try:
        assert engine.pending_measurements()
        assert engine.measure_next() and engine.restarts == 1  # asked again, answered
        events, done = reply(engine, OFF, 8)  # the next reply says why, first
        assert done.text and engine.restarts == 1 and isinstance(events[0], Notice)
        assert "AMX kernels crash on this CPU" in events[0].message
        assert engine.load_notices == (events[0].message,)
        assert not any(isinstance(e, Notice) for e in reply(engine, OFF, 8)[0])  # once
    finally:
        engine.close()
    kept = json.loads(Path(os.environ[cpu_check.FILE_VARIABLE]).read_text())
    assert "plain" in kept.values()
    again = hosted(bundled_model)
    try:
        events, done = reply(again, OFF, 8)
        assert done.text and again.restarts == 0 and again.load_notices == ()
    finally:
        again.close()


def test_a_reply_that_finds_the_crash_is_answered_with_the_note_first(simulated_amx_crash,
                                                                      bundled_model):
    from draftlight.engine.reply.events import Notice
    engine = hosted(bundled_model)
    try:
        events, done = reply(engine, OFF, 8)
        notes = [e.message for e in events if isinstance(e, Notice)]
        assert len(notes) == 1 and "AMX kernels crash on this CPU" in notes[0]
        assert isinstance(events[0], Notice) and done.text and engine.restarts == 1
    finally:
        engine.close()
