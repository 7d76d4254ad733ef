"""The cross-process locks (draftlight.shared_files) live in a folder of this user's own: one
made first by another user, a symbolic link or a folder open to others is one line saying so,
with nothing written in or through it; a lock another process keeps is waited on for a bounded
time, then named (the holder's pid and command), never waited on for ever. Before, `chat`,
`models add` and `models convert` hung with no output on such a folder or lock."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from draftlight import shared_files
from draftlight.private_folders import ForeignFolder
from draftlight.shared_files import LockBusy, lock_path, once, update_json
from draftlight.store.convert import ConversionCancelled, ConvertProgress, convert
from draftlight.store.progress_bars import ConvertBar
from draftlight.user_messages import visible

SECONDS = 10


@pytest.fixture
def temp_folder(tmp_path, monkeypatch):
    """The system's temp folder, as the lock folder's place, inside this test's folder."""
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    return shared


def lock_folder() -> Path:
    return lock_path(Path("/anything")).parent


def test_the_lock_folder_is_made_0700_and_used(temp_folder, tmp_path):
    update_json(tmp_path / "a.json", lambda known: known.__setitem__("k", 1))
    folder = lock_folder()
    assert folder.parent == temp_folder
    assert folder.stat().st_mode & 0o777 == 0o700 and folder.stat().st_uid == os.getuid()


def test_a_lock_folder_that_is_a_link_is_refused_and_nothing_written_through_it(
        temp_folder, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    lock_folder().symlink_to(elsewhere)
    for use in (lambda: update_json(tmp_path / "a.json", lambda known: None),
                lambda: once(lock_path(tmp_path / "model.gguf")).__enter__()):
        with pytest.raises(ForeignFolder, match="is a symbolic link, so Draftlight does not "
                                                "keep its locks there: remove it, or set TMPDIR"):
            use()
    assert list(elsewhere.iterdir()) == []


def test_a_lock_folder_of_another_user_is_refused_with_its_owner(temp_folder, tmp_path,
                                                                  monkeypatch):
    # Another user made it first: here this user is pretended to be uid 4242 (a test runs as
    # one user), and the folder keeps its real owner.
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: 4242)
    lock_folder().mkdir(mode=0o700)
    with pytest.raises(ForeignFolder, match=rf"belongs to another user \(uid {real}\)"):
        update_json(tmp_path / "a.json", lambda known: None)


def test_a_lock_folder_open_to_others_is_refused(temp_folder, tmp_path):
    lock_folder().mkdir()
    lock_folder().chmod(0o777)
    with pytest.raises(ForeignFolder, match=r"is open to other users \(mode 0777\)"):
        update_json(tmp_path / "a.json", lambda known: None)


def hold(lock: Path) -> subprocess.Popen:
    """A process that holds `lock` (filelock's kind) until killed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom filelock import FileLock\n"
         f"held = FileLock({str(lock)!r})\nheld.acquire()\nprint('held', flush=True)\n"
         "time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_an_update_waits_a_bounded_time_then_names_the_holder(temp_folder, tmp_path,
                                                              monkeypatch):
    monkeypatch.setattr(shared_files, "UPDATE_WAIT_SECONDS", 0.5, raising=False)
    path = tmp_path / "costs.json"
    lock = lock_path(path)
    lock.parent.mkdir(mode=0o700)
    holder = hold(lock)
    outcome: list = []

    def update() -> None:
        try:
            update_json(path, lambda known: None)
            outcome.append("updated")
        except OSError as exc:
            outcome.append(exc)
    try:
        started = time.monotonic()
        worker = threading.Thread(target=update, daemon=True)
        worker.start()
        worker.join(SECONDS)
        waited = time.monotonic() - started
        assert not worker.is_alive(), "update_json waited on the lock for ever"
    finally:
        holder.kill()
        holder.wait()
        worker.join(SECONDS)
    [raised] = outcome
    assert isinstance(raised, LockBusy) and waited < 5, (raised, waited)
    assert str(raised).startswith("costs.json stayed locked by ")
    if sys.platform.startswith("linux"):
        assert f"process {holder.pid} (" in str(raised) and "FileLock" in str(raised)


def test_a_conversion_waiting_on_another_process_says_who(temp_folder, tmp_path,
                                                          bundled_model):
    dest = tmp_path / "out" / "smol.Q8_0.gguf"
    dest.parent.mkdir()
    lock = lock_path(dest)
    lock.parent.mkdir(mode=0o700)
    holder = hold(lock)
    seen: list[ConvertProgress] = []
    try:
        with pytest.raises(ConversionCancelled):
            convert(bundled_model, dest, "Q8_0", on_progress=seen.append,
                    should_cancel=lambda: bool(seen))
    finally:
        holder.kill()
        holder.wait()
    [waiting] = seen
    assert waiting.stage == "waiting"
    if sys.platform.startswith("linux"):
        assert waiting.holder.startswith(f"process {holder.pid} (")
    stream = io.StringIO()
    ConvertBar(stream, "smol.gguf -> Q8_0")(waiting)
    assert stream.getvalue() == (f"smol.gguf -> Q8_0: waiting for another Draftlight making it "
                                 f"({visible(waiting.holder)}); Ctrl-C stops\n")


def test_commands_on_a_linked_lock_folder_say_so_in_one_line_or_go_on(temp_folder, tmp_path,
                                                                      bundled_model, capsys):
    from draftlight.cli import main
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    lock_folder().symlink_to(elsewhere)
    assert main(["models", "convert", str(bundled_model), "--type", "Q8_0"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"draftlight: error: {lock_folder()} is a symbolic link, "), line
    # `models add` only misses remembering the header (read again next time)
    copy = tmp_path / "smol.gguf"
    copy.symlink_to(bundled_model)
    assert main(["models", "add", str(copy)]) == 0
    assert capsys.readouterr().out.startswith("added ")
    assert list(elsewhere.iterdir()) == []
