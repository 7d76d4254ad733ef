"""Bad input in the terminal: one line on stderr, exit status 2 (or a one-line note and the
command goes on), never a traceback. The window's side is in tests/ui/chat/test_bad_input_window.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from draftlight.settings import settings_path
from draftlight.store import memory


def chat(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", *args], capture_output=True,
                          text=True, timeout=300, input=stdin)


def assert_one_line_error(proc, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("draftlight: error:"), line
    for fragment in fragments:
        assert fragment in line, line


def test_truncated_gguf(tmp_path, bundled_model):
    cut = tmp_path / "cut.gguf"
    with open(bundled_model, "rb") as stream:
        cut.write_bytes(stream.read(5_000_000))  # the header is whole, the tensors are not
    assert_one_line_error(chat("--target", str(cut), "hi"), "could not load cut.gguf")


@pytest.mark.parametrize("question", ["", "   \n  "])
def test_empty_message(question):
    assert_one_line_error(chat(question), "the message is empty")


def test_a_200000_character_paste_is_refused_with_its_size():
    paste = "All work and no play makes Jack a dull boy. " * 4546  # 200,024 characters
    proc = chat("--max-tokens", "8", "-", stdin=paste)
    # the automatic context: SmolLM2's trained 8,192 tokens, which fit in this machine's memory
    assert_one_line_error(proc, "tokens long", "does not fit the 8,192-token context")


def test_interactive_chat_drops_the_oldest_turns_and_says_so():
    turns = [f"Turn {i}: tell me one short fact about the number {i}, please, in a sentence."
             for i in range(8)]
    # n-gram, not the default auto: the subject is the context (auto at 256: see below)
    proc = chat("--ctx", "256", "--max-tokens", "24", "--no-color", "--mode", "ngram",
                stdin="\n".join(turns))
    assert proc.returncode == 0, proc.stderr
    assert "oldest message(s) were left out so the conversation fits the 256-token context" in (
        proc.stderr)
    assert "Traceback" not in proc.stderr


def test_auto_mode_answers_in_the_smallest_context():
    proc = chat("--ctx", "256", "--max-tokens", "8", "--no-color", "Say hi.")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_interactive_chat_refuses_a_huge_message_and_goes_on():
    stdin = "x " * 100_000 + "\nSay hi.\n"
    proc = chat("--ctx", "512", "--max-tokens", "8", "--no-color", stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    assert "does not fit the 512-token context" in proc.stderr
    assert proc.stdout.strip(), "the next message was answered"


def test_invalid_settings_are_set_aside_and_the_user_is_told():
    settings_path().write_text("n_ctx = 'huge'\n")
    proc = chat("--max-tokens", "4", "--no-color", "hi")
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("draftlight: note: Settings file could not be used")
    assert "renamed to settings.toml.bad-" in line
    assert not settings_path().exists()
    assert list(settings_path().parent.glob("settings.toml.bad-*"))


def test_a_model_that_disappeared_since_the_last_run(tmp_path):
    gone = tmp_path / "moved-away.gguf"
    assert_one_line_error(chat("--target", str(gone), "hi"), f"model file not found: {gone}")


def test_a_pair_that_does_not_fit_in_memory_is_refused_before_loading(
        monkeypatch, capsys, bundled_model):
    from draftlight.cli import main
    monkeypatch.setattr(memory, "system_memory",
                        lambda: memory.MemoryInfo(total=200 << 20, available=100 << 20))
    loads = []
    monkeypatch.setattr("draftlight.engine.reply.generator.Engine.load", lambda *a, **k: loads.append(a))
    code = main(["chat", "--target", str(bundled_model), "--draft", str(bundled_model),
                 "--ctx", "4096", "hi"])
    assert code == 2 and loads == []
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("draftlight: error: not enough memory for "
                           "SmolLM2-135M-Instruct.Q4_1.gguf + SmolLM2-135M-Instruct.Q4_1.gguf")
    # KV cache: 30 layers x 4,096 tokens x 3 heads x 64 x (q8_0 keys 34/32 + f16 values 2) x 2
    assert "it needs about 655.8 MB (weights 196.7 MB, KV cache at 4,096 tokens 144.5 MB" in line
    assert "this machine has 209.7 MB of RAM (104.9 MB available)" in line


def test_unreadable_models_registry_is_set_aside_and_listed_empty():
    from draftlight import paths
    registry = paths.models_dir() / "installed.toml"
    registry.write_text("[[models]]\nname = \n")
    proc = subprocess.run([sys.executable, "-P", "-m", "draftlight", "models", "list"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "smollm2-135m-instruct-q4_1" in proc.stdout  # the bundled model is still there
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("draftlight: note: the list of installed models (installed.toml) "
                           "could not be read") and "renamed to installed.toml.bad-" in line
    assert [p.read_text() for p in registry.parent.glob("installed.toml.bad-*")] == [
        "[[models]]\nname = \n"]
