"""draftlight.engine.llama.cpu_check: where llama.cpp's AMX kernels crash the CPU, models load without
llama.cpp's extra buffer types, found out once in a child process and remembered."""

from __future__ import annotations

import signal
import subprocess
import sys

import numpy as np
import pytest

from draftlight.engine.llama import cpu_check
from draftlight.engine.core.errors import ModelLoadError
from draftlight.engine.llama.llama_backend import LlamaBackend
from draftlight.engine.core.load_options import LoadOptions


@pytest.fixture
def amx_build(monkeypatch):
    monkeypatch.setattr(cpu_check, "has_amx", lambda: True)
    monkeypatch.setattr(cpu_check, "_known", {})  # nothing found out in this process yet


def scripted_children(monkeypatch, crashes: set[bool]) -> list[bool]:
    """Children that crash when asked with extra buffers in `crashes`; returns the asks."""
    asked: list[bool] = []

    def runs(model, extra_buffers):
        asked.append(extra_buffers)
        return extra_buffers not in crashes
    monkeypatch.setattr(cpu_check, "runs", runs)
    return asked


def test_a_build_without_amx_is_never_checked(monkeypatch, tmp_path):
    monkeypatch.setattr(cpu_check, "has_amx", lambda: False)
    asked = scripted_children(monkeypatch, {True, False})
    assert cpu_check.extra_buffers_usable(tmp_path / "m.gguf", tmp_path / "c.json")
    assert asked == []


def test_extra_buffers_that_crash_are_left_out_and_remembered(amx_build, monkeypatch, tmp_path):
    asked = scripted_children(monkeypatch, {True})
    cache = tmp_path / "cache" / "cpu_check.json"
    assert not cpu_check.extra_buffers_usable(tmp_path / "m.gguf", cache)
    assert asked == [True, False]
    assert not cpu_check.extra_buffers_usable(tmp_path / "m.gguf", cache)
    assert asked == [True, False]  # from the cache, no child


def test_extra_buffers_that_run_are_used(amx_build, monkeypatch, tmp_path):
    asked = scripted_children(monkeypatch, set())
    assert cpu_check.extra_buffers_usable(tmp_path / "m.gguf", tmp_path / "c.json")
    assert asked == [True]


def test_a_llama_cpp_that_crashes_either_way_is_one_clear_error(amx_build, monkeypatch,
                                                                  tmp_path):
    scripted_children(monkeypatch, {True, False})
    with pytest.raises(ModelLoadError, match="crashes on this CPU.*-mno-amx-tile"):
        cpu_check.extra_buffers_usable(tmp_path / "m.gguf", tmp_path / "c.json")


def test_a_child_killed_by_a_signal_is_a_crash_and_a_failing_one_is_not(monkeypatch, tmp_path):
    monkeypatch.delenv(cpu_check.SIMULATE_VARIABLE, raising=False)  # real children
    killed = [sys.executable, "-c", f"import os; os.kill(os.getpid(), {int(signal.SIGILL)})"]
    monkeypatch.setattr(cpu_check, "child_command", lambda model, extra: killed)
    assert not cpu_check.runs(tmp_path / "m.gguf", True)
    failing = [sys.executable, "-c", "raise SystemExit(3)"]
    monkeypatch.setattr(cpu_check, "child_command", lambda model, extra: failing)
    assert cpu_check.runs(tmp_path / "m.gguf", True)


def test_the_real_child_evaluates_the_bundled_model(bundled_model):
    def child(extra: bool) -> subprocess.CompletedProcess:
        return subprocess.run(cpu_check.child_command(bundled_model, extra), capture_output=True,
                              text=True, timeout=300)
    plain = child(False)
    assert plain.returncode == 0, plain.stderr[-2000:]
    usual = child(True)  # killed only by an AMX build's kernels (what the check is for)
    assert usual.returncode == 0 or (cpu_check.has_amx() and usual.returncode < 0), usual.stderr


def test_a_model_loaded_without_extra_buffers_says_so_once_and_gives_the_same_logits(
        bundled_model, simulated_amx_crash, monkeypatch):
    options = LoadOptions(n_ctx=256, n_batch=64)
    with LlamaBackend(bundled_model, options) as plain:
        assert not plain.options.extra_buffers and "AMX" in plain.load_note
        tokens = plain.tokenize("The United States of America", add_bos=True)
        without = plain.eval(tokens, n_logits=len(tokens))
    with LlamaBackend(bundled_model, options) as again:  # said once per machine, not per load
        assert not again.options.extra_buffers and again.load_note == ""
    monkeypatch.delenv(cpu_check.SIMULATE_VARIABLE)
    with LlamaBackend(bundled_model, options) as usual:  # with them wherever they run
        assert usual.options.extra_buffers == (usual.load_note == "")
        with_them = usual.eval(tokens, n_logits=len(tokens))
    assert np.argmax(without, axis=-1).tolist() == np.argmax(with_them, axis=-1).tolist()


def test_a_load_that_fails_does_not_use_up_the_note(bundled_model, simulated_amx_crash, tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(bundled_model.read_bytes()[:100_000])
    with pytest.raises(ModelLoadError):
        LlamaBackend(broken, LoadOptions(n_ctx=256))
    with LlamaBackend(bundled_model, LoadOptions(n_ctx=256)) as loaded:
        assert loaded.load_note == cpu_check.NOTE


def test_the_note_is_remembered_by_the_machine_not_the_process(simulated_amx_crash, tmp_path):
    cache = cpu_check.cache_file()
    assert cpu_check.untold_note(cache) == ""  # nothing found out yet: nothing to say
    assert not cpu_check.extra_buffers_usable(tmp_path / "m.gguf", cache)
    assert cpu_check.untold_note(cache) == cpu_check.NOTE
    assert cpu_check.untold_note(cache) == ""
    cpu_check._known.clear()  # another process on this machine
    assert not cpu_check.extra_buffers_usable(tmp_path / "m.gguf", cache)
    assert cpu_check.untold_note(cache) == ""
