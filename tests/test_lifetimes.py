"""Children and scratch tied to the app's life (draftlight.lifetimes): a whole group's exit
status and output pass through the shell that guards it, and at start only the scratch of an
owner that is gone is removed (tests/test_crash_safety.py kills real runs)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from draftlight.lifetimes import owned, popen_tied, remove_abandoned

KILLED_MID_WAY = """
import os, sys
from pathlib import Path
from draftlight.lifetimes import owned
with owned(Path(sys.argv[1])) as scratch:
    scratch.mkdir()
    (scratch / "half.o").write_text("...")
    os._exit(9)  # as a SIGKILL would: no cleanup runs
"""


def test_a_guarded_group_passes_on_its_commands_output_and_exit_status():
    child = popen_tied(["sh", "-c", "echo made; exit 3"], whole_group=True,
                       stdout=subprocess.PIPE, text=True)
    assert child.communicate(timeout=30) == ("made\n", None)
    assert child.returncode == 3


def test_a_program_that_cannot_run_raises_as_popen_would(tmp_path):
    """Callers tell a missing llama-server from one that failed by the OSError: the program
    between (draftlight/tie.py) must not turn it into an exit status."""
    with pytest.raises(FileNotFoundError):
        popen_tied([str(tmp_path / "no-such-server")])
    with pytest.raises(FileNotFoundError):
        popen_tied(["no-such-program-on-the-path"])
    not_executable = tmp_path / "server"
    not_executable.write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError):
        popen_tied([str(not_executable)])


def test_only_scratch_whose_owner_is_gone_is_removed(tmp_path):
    subprocess.run([sys.executable, "-c", KILLED_MID_WAY, str(tmp_path / "build-dead")],
                   check=False, timeout=60)
    assert sorted(p.name.split(".owner-")[0] for p in tmp_path.iterdir()) == [
        "build-dead", "build-dead"]  # the folder and its mark, left behind
    unmarked = tmp_path / "build-unmarked"  # an older version's, or not ours: kept
    unmarked.mkdir()
    other = tmp_path / "notes.txt"  # a mark-like name outside the pattern: kept
    other.write_text("mine")
    (tmp_path / "notes.txt.owner-1-1").touch()
    with owned(tmp_path / "build-live") as live:  # this process runs: kept
        live.mkdir()
        assert remove_abandoned(tmp_path, "build-*") == [tmp_path / "build-dead"]
        assert live.is_dir() and unmarked.is_dir() and other.read_text() == "mine"
    assert not live.exists()  # removed by its owner when done
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "build-unmarked", "notes.txt", "notes.txt.owner-1-1"]
