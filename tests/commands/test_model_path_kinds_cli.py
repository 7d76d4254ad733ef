"""A FIFO (or a folder) given as a model on the command line: `models add`, `models convert`,
`chat --target` and `chat --draft` say what it is in one line and exit with status 2, at once;
they hung for ever before (tests/store/test_model_file_kinds.py: each reader)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def draftlight(*args: str) -> subprocess.CompletedProcess:
    # a hang is a TimeoutExpired, which fails the test (and kills the process)
    return subprocess.run([sys.executable, "-P", "-m", "draftlight", *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def assert_one_line(proc, *fragments: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("draftlight: error: "), line
    for fragment in fragments:
        assert fragment in line, line


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "x.gguf"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", [["models", "add"], ["models", "convert", "--type", "Q8_0"],
                                     ["chat", "--max-tokens", "1", "hi", "--target"]])
def test_a_fifo_as_a_model_is_refused_in_one_line(fifo, command):
    assert_one_line(draftlight(*command, str(fifo)), "x.gguf", "named pipe (FIFO)")


def test_a_fifo_as_a_draft_is_refused_before_the_target_loads(fifo, bundled_model):
    proc = draftlight("chat", "--target", str(bundled_model), "--draft", str(fifo),
                      "--max-tokens", "1", "hi")
    assert_one_line(proc, "x.gguf", "named pipe (FIFO)")


def test_a_folder_named_like_a_model_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "folder.gguf"
    folder.mkdir()
    for command in (["models", "add"], ["models", "convert", "--type", "Q8_0"]):
        assert_one_line(draftlight(*command, str(folder)), "folder.gguf", "is a folder")
