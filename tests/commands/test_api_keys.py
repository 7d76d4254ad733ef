"""serve, chat and bench take an API key from --api-key-file or $DRAFTLIGHT_API_KEY besides
--api-key: a key on a command line can be read by every user of the machine (ps,
/proc/PID/cmdline). A loopback stub that wants the key "right" checks which key was sent."""

from __future__ import annotations

import pytest

from draftlight.cli import main
from tests.support.openai_stub import WORDS, StubServer

VARIABLE = "DRAFTLIGHT_API_KEY"


@pytest.fixture
def wants_right():
    server = StubServer("401")  # refuses any key but "right"
    yield server
    server.close()


def chat(url: str, *options: str) -> list[str]:
    return ["chat", "--engine", url, "--no-color", *options, "Hi"]


@pytest.mark.parametrize("command", ["serve", "chat", "bench"])
def test_help_names_the_key_file_and_the_variable(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--api-key-file PATH" in text and VARIABLE in text


def test_chat_reads_the_key_from_a_file(tmp_path, capsys, wants_right):
    key = tmp_path / "key"
    key.write_text("right\n")
    assert main(chat(wants_right.url, "--api-key-file", str(key))) == 0
    assert capsys.readouterr().out.strip() == "".join(WORDS)


def test_chat_reads_the_key_from_the_environment(monkeypatch, capsys, wants_right):
    monkeypatch.setenv(VARIABLE, "right")
    assert main(chat(wants_right.url)) == 0
    assert capsys.readouterr().out.strip() == "".join(WORDS)


def test_a_key_given_on_the_command_comes_before_the_variable(tmp_path, monkeypatch, capsys,
                                                               wants_right):
    monkeypatch.setenv(VARIABLE, "wrong")
    key = tmp_path / "key"
    key.write_text("right")
    assert main(chat(wants_right.url, "--api-key-file", str(key))) == 0
    assert main(chat(wants_right.url, "--api-key", "right")) == 0
    assert main(chat(wants_right.url)) == 2
    assert "refused the API key" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["chat", "--engine",
                                                                 "http://127.0.0.1:9", "Hi"]])
def test_a_missing_empty_or_doubled_key_is_one_line(command, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    cases = [(["--api-key-file", str(tmp_path / "none")], f"{tmp_path / 'none'}"),
             (["--api-key-file", str(empty)], "is empty"),
             (["--api-key", "k", "--api-key-file", str(empty)], "not both")]
    for options, words in cases:
        assert main([*command, *options]) == 2
        [line] = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("draftlight: error: --api-key") and words in line, line

