"""Hostile GGUF headers (tests/support/hostile_gguf.py) on the command line: `chat --target`
says what is wrong with the file in one line and exits with status 2; `models list` still lists
every model and gives one line for each file it cannot read."""

from __future__ import annotations

import subprocess
import sys

import pytest

from draftlight import paths
from draftlight.cli import main
from draftlight.store.installed import register_download
from tests.support.hostile_gguf import (PAST_THE_KEYS, assert_names_an_offset_in, good_kvs,
                                        gguf_bytes, hostile_files, write_hostile)

# A header cut short in general.file_type's key: the truncated file, which even a reader that
# stops at general.file_type meets.
CUT = "cut-in-a-key"


def write(folder, name):
    if name == CUT:
        path = folder / f"{CUT}.gguf"
        path.write_bytes(gguf_bytes(good_kvs())[:80])
        return path
    return write_hostile(folder, name)


@pytest.mark.parametrize("name", sorted(hostile_files()) + [CUT])
def test_chat_with_a_hostile_target_says_so_in_one_line(tmp_path, name):
    path = write(tmp_path, name)
    proc = subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", "--target", str(path),
                           "--max-tokens", "4", "hi"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"draftlight: error: {name}.gguf: "), line
    if name == CUT:
        assert "truncated or corrupt at byte" in line, line
    else:
        assert_names_an_offset_in(line, hostile_files()[name])


def test_models_list_shows_every_model_and_one_line_per_unreadable_file(tmp_path, capsys):
    bad = sorted((set(hostile_files()) - PAST_THE_KEYS) | {CUT})
    folder = paths.models_dir() / "org" / "Evil-GGUF"
    good = folder / "good.gguf"
    folder.mkdir(parents=True)
    good.write_bytes(gguf_bytes(good_kvs()))
    for path in [good] + [write(folder, name) for name in bad]:
        register_download(repo="org/Evil-GGUF", file=path.name, path=path, sha256=None, commit=None)

    assert main(["models", "list"]) == 2
    out, err = capsys.readouterr()
    assert "good  " in out and "Q4_K_M" in out
    for name in bad:
        [row] = [line for line in out.splitlines() if line.startswith(f"{name}  ")]
        assert "(header unreadable)" in row, row
    lines = err.strip().splitlines()
    assert len(lines) == len(bad), err
    for name, line in zip(bad, lines):
        assert line.startswith(f"draftlight: error: {name}.gguf: "), line
        if name == CUT:
            assert "truncated or corrupt at byte" in line, line
        else:
            assert_names_an_offset_in(line, hostile_files()[name])
