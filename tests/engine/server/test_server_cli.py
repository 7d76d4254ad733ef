"""The server engines from the command line: `draftlight chat --engine URL`, `--mode llama:…`,
`draftlight bench --modes …,llama:…`, `draftlight engine build-server`."""

from __future__ import annotations

import json

import pytest

from draftlight.cli import main
from draftlight.engine.server.reply_labels import UNKNOWN_NOTE
from draftlight.engine.server.process import free_port
from tests.support.openai_stub import WORDS, StubServer


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_chat_on_a_remote_server_says_it_cannot_see_drafts(capsys):
    server = StubServer("ok")
    try:
        assert main(["chat", "--engine", server.url, "--json", "Hi"]) == 0
    finally:
        server.close()
    lines = json_lines(capsys.readouterr().out)
    assert [line["source"] for line in lines if line["type"] == "token"] == ["unknown"] * 5
    done = lines[-1]
    assert done["text"] == "".join(WORDS) and done["stats"]["engine_note"] == UNKNOWN_NOTE


def test_chat_on_an_unreachable_server_is_one_line(capsys):
    assert main(["chat", "--engine", f"http://127.0.0.1:{free_port()}", "Hi"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("draftlight: error: cannot reach the server at 127.0.0.1:")


def test_an_unknown_llama_mode_is_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit):
        main(["chat", "--mode", "llama:eagle9", "Hi"])
    assert "ngram-mod" in capsys.readouterr().err


@pytest.mark.slow
def test_chat_on_llama_server_shows_its_accepted_drafts(capsys, llama_server_binary,
                                                         bundled_model):
    code = main(["chat", "--mode", "llama:ngram-simple", "--target", str(bundled_model),
                 "--server-binary", str(llama_server_binary), "--json", "--max-tokens", "60",
                 "Repeat this line three times: the cat sat on the mat, the dog sat on the log."])
    assert code == 0
    lines = json_lines(capsys.readouterr().out)
    drafted = [line for line in lines if line["type"] == "token" and line["source"] == "draft"]
    stats = lines[-1]["stats"]
    assert drafted and stats["mode"] == "llama:ngram-simple" and stats["draft_kind"] == "llama-server"
    assert len(drafted) <= stats["accepted"] <= len(drafted) + 1


@pytest.mark.slow
def test_bench_runs_llama_servers_next_to_draftlight(tmp_path, capsys, llama_server_binary):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question_id": 1, "category": "document_qa", "turns": [
        "Quote the first sentence: 'The sky is blue. Grass is green.'", "Again, please."]}) + "\n")
    out = tmp_path / "out"
    code = main(["bench", "--questions", str(questions), "--modes",
                 "plain,ngram,llama:none,llama:ngram-simple", "--max-tokens", "24",
                 "--server-binary", str(llama_server_binary), "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["overall"]) == {"plain", "ngram", "llama:none", "llama:ngram-simple"}
    for mode in ("llama:none", "llama:ngram-simple"):  # the report names rows by their text
        figures = report["overall"][mode]
        assert figures["identical_to_plain"] == 1.0, report["divergences"]
        assert figures["tokens_per_second"] > 0
        assert report["peak_rss_mb"][mode] > 50  # the server process's, not ours
    assert "| llama:ngram-simple |" in (out / "report.md").read_text()


@pytest.mark.slow
def test_bench_times_the_passes_of_a_llama_server_at_engine_url(tmp_path, capsys, monkeypatch,
                                                                llama_server_binary,
                                                                bundled_model):
    from draftlight.engine.server.process import ManagedServer, ServerOptions
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question_id": 1, "category": "document_qa", "turns": [
        "Quote: 'The sky is blue.'"]}) + "\n")
    server = ManagedServer(llama_server_binary, ServerOptions(target=bundled_model, threads=1))
    server.start()
    monkeypatch.setenv("DRAFTLIGHT_API_KEY", server.api_key)  # its key, off the command line
    try:
        assert main(["bench", "--questions", str(questions), "--modes", "plain",
                     "--target", str(bundled_model), "--max-tokens", "16",
                     "--engine", server.url,
                     "--out", str(tmp_path / "out")]) == 0
    finally:
        server.close()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    remote = report["server_passes"]["remote"]
    assert remote["v"]["1"] == 1.0 and remote["v"]["16"] > 1.0
    assert report["overall"]["remote"]["server_share_of_wall"] > 0
    assert f"| v(k), the server at {server.url} |" in (tmp_path / "out" / "report.md").read_text()


def test_build_server_prints_the_one_already_built(capsys, llama_server_binary):
    assert main(["engine", "build-server"]) == 0
    assert capsys.readouterr().out.strip() in (str(llama_server_binary),
                                                 __import__("shutil").which("llama-server"))


@pytest.mark.slow
def test_serve_through_llama_server_passes_its_drafts_on(tmp_path, llama_server_binary,
                                                        bundled_model):
    """`draftlight serve --mode llama:ngram-simple`: the real openai client gets the reply, each
    chunk says whether llama-server drafted it, an over-long prompt is refused by its length
    (llama-server's own template and tokenizer count it), and Ctrl-C stops both servers."""
    import os
    import re
    import signal
    import subprocess
    import sys
    import time

    import openai
    import psutil
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        app = subprocess.Popen(
            [sys.executable, "-P", "-m", "draftlight", "serve", "--port", "0", "--target", str(bundled_model),
             "--mode", "llama:ngram-simple", "--server-binary", str(llama_server_binary),
             "--ctx", "1024", "--api-key", "k"],
            stdout=subprocess.DEVNULL, stderr=stderr, env={**os.environ,
                                                          "DRAFTLIGHT_HOME": str(tmp_path)})
    try:
        deadline = time.monotonic() + 120
        while not (found := re.search(r"serving (\S+) at (http://\S+/v1)", log.read_text())):
            assert app.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        [server] = [c for c in psutil.Process(app.pid).children(recursive=True)
                    if "llama-server" in c.name()]
        model, url = found.groups()
        client = openai.OpenAI(base_url=url, api_key="k", max_retries=0, timeout=120)
        chunks = list(client.chat.completions.create(
            model=model, stream=True, max_tokens=60, temperature=0, messages=[{
                "role": "user", "content": "Repeat this line three times: the cat sat on the "
                                           "mat, the dog sat on the log, the bird sat on the tree."}]))
        pieces = [c for c in chunks if c.choices and c.choices[0].delta.content]
        sources = [c.model_extra["draftlight"]["source"] for c in pieces]
        assert "draft" in sources and set(sources) <= {"draft", "target"}
        with pytest.raises(openai.BadRequestError, match="do not fit the 1,024-token context"):
            client.chat.completions.create(model=model, max_tokens=10, messages=[
                {"role": "user", "content": "word " * 1100}])
    finally:
        app.send_signal(signal.SIGINT)
        app.wait(timeout=30)
    gone, alive = psutil.wait_procs([server], timeout=10)
    assert not alive


@pytest.mark.slow
def test_the_bench_command_of_docs_this_machine_runs(tmp_path, llama_server_binary):
    """docs/this-machine.md's bench command, as written, cut to one question a category and a
    few tokens: it runs, and its report has auto's column against the best fixed mode."""
    import shlex
    from pathlib import Path
    doc = Path(__file__).resolve().parents[3] / "docs" / "this-machine.md"
    command = next(line for line in doc.read_text().splitlines()
                   if line.startswith("draftlight bench --questions"))
    args = shlex.split(command)[1:]
    args[args.index("--questions") + 1] = str(Path(__file__).resolve().parents[3] / "app"
                                              / "draftlight" / "bench" / "heldout.jsonl")
    out = tmp_path / "out"
    code = main(args + ["--limit", "1", "--max-tokens", "12", "--server-binary",
                        str(llama_server_binary), "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["overall"]) == {"plain", "ngram", "auto", "llama:none"}
    assert report["overall"]["auto"]["best_fixed"] in ("plain", "ngram")
    assert "| auto / best fixed |" in (out / "report.md").read_text()
