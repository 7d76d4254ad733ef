"""Converting models with llama.cpp's quantizer (draftlight.store.convert), the default model made from
the bundled file on first use (draftlight.store.default_model), and `draftlight models convert`."""

from __future__ import annotations

import shutil
import sys
import time
from collections import namedtuple

import pytest

from draftlight import paths
from draftlight.cli import main
from draftlight.store import convert as convert_module
from draftlight.store.convert import (ConversionCancelled, ConversionError, conversion_target, convert,
                               converting_path, weight_type)
from draftlight.store.default_model import (DEFAULT_NAME, DEFAULT_TYPE, default_model_file,
                                     prepare_default_model)
from draftlight.store.gguf_info import read_gguf_info
from draftlight.store.installed import find_installed, list_installed


def test_a_conversion_is_verified_renamed_into_place_and_reports_each_tensor(
        bundled_model, tmp_path):
    seen = []
    dest = convert(bundled_model, tmp_path / "out" / "model.Q5_0.gguf", "q5_0",
                   on_progress=seen.append)
    assert read_gguf_info(dest).quantisation == "Q5_0"
    assert read_gguf_info(bundled_model).quantisation == "Q4_1"  # the source is untouched
    quantizing = [p for p in seen if p.stage == "quantizing"]
    assert [p.done for p in quantizing] == list(range(1, 273))  # the model's 272 tensors
    assert {p.total for p in quantizing} == {272}
    assert seen[-1].stage == "verifying"
    assert sorted(x.name for x in dest.parent.iterdir()) == ["model.Q5_0.gguf"]


def test_cancelling_stops_the_quantizer_and_leaves_nothing(bundled_model, tmp_path):
    dest = tmp_path / "model.Q4_0.gguf"
    seen = []
    with pytest.raises(ConversionCancelled):
        convert(bundled_model, dest, "Q4_0", on_progress=seen.append,
                should_cancel=lambda: len(seen) >= 3)
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_during_a_conversion_leaves_no_partial_model(bundled_model, tmp_path):
    # KeyboardInterrupt arrives in the parent while the child writes (here from the progress
    # callback, which runs in the parent's main thread, where a real Ctrl-C lands)
    def interrupt(progress):
        if progress.done == 100:
            raise KeyboardInterrupt
    dest = tmp_path / "model.Q4_0.gguf"
    with pytest.raises(KeyboardInterrupt):
        convert(bundled_model, dest, "Q4_0", on_progress=interrupt)
    assert not dest.exists() and not converting_path(dest).exists()
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_is_refused_before_anything_is_written(bundled_model, tmp_path, monkeypatch):
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(convert_module.shutil, "disk_usage",
                        lambda folder: Usage(10**9, 10**9 - 50_000_000, 50_000_000))
    with pytest.raises(ConversionError, match="not enough disk space.*needs about"):
        convert(bundled_model, tmp_path / "m.gguf", "Q8_0")
    assert list(tmp_path.iterdir()) == []


def test_a_file_the_quantizer_cannot_read_is_a_clear_error(bundled_model, tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(bundled_model.read_bytes()[:20_000_000])  # header intact, weights cut
    with pytest.raises(ConversionError, match="converting cut.gguf to Q4_0 failed"):
        convert(cut, tmp_path / "out.gguf", "Q4_0")
    # (the test's DRAFTLIGHT_HOME is in tmp_path too: read headers are remembered there)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "draftlight-home") == [
        "cut.gguf"]
    with pytest.raises(ConversionError, match="not a GGUF"):
        (tmp_path / "text.gguf").write_text("hello")
        convert(tmp_path / "text.gguf", tmp_path / "out.gguf", "Q4_0")


# A quantizer that reports its outcome and then hangs in its exit (native destructors).
DONE_THEN_HANG = """
import sys, time
open(sys.argv[2], "wb").write(b"converted")
print('["done"]', flush=True)
time.sleep(600)
"""


def test_a_quantizer_that_hangs_after_it_is_done_is_stopped_and_its_file_kept(
        bundled_model, tmp_path, monkeypatch):
    started = []

    def hanging_child(source, temp, type_name, threads):
        started.append(temp)
        return [sys.executable, "-c", DONE_THEN_HANG, source, temp]

    monkeypatch.setattr(convert_module, "child_command", hanging_child)
    monkeypatch.setattr(convert_module, "EXIT_SECONDS", 0.5)
    before = time.monotonic()
    dest = convert(bundled_model, tmp_path / "model.Q8_0.gguf", "Q8_0")
    assert time.monotonic() - before < 30
    assert dest.read_bytes() == b"converted" and started


def test_weight_type_names():
    assert weight_type(" q4_k_m ") == "Q4_K_M"
    with pytest.raises(ConversionError, match="importance matrix"):
        weight_type("IQ2_XS")
    with pytest.raises(ConversionError, match="unknown weight type 'Q9'; choose one of"):
        weight_type("Q9")


def test_a_conversion_is_named_after_its_source_without_the_old_type(tmp_path):
    target = conversion_target(tmp_path / "Qwen2.5-7B-Instruct-Q4_K_M.gguf", "Q4_0")
    assert target == paths.models_dir() / "converted" / "Qwen2.5-7B-Instruct.Q4_0.gguf"
    assert conversion_target(tmp_path / "tiny.gguf", "Q8_0").name == "tiny.Q8_0.gguf"


def test_the_default_model_is_made_once_and_listed_next_to_the_bundled_file(bundled_model):
    first = prepare_default_model()
    assert first.note is None and first.path == default_model_file()
    assert read_gguf_info(first.path).quantisation == DEFAULT_TYPE
    made = first.path.stat().st_mtime_ns
    assert prepare_default_model().path.stat().st_mtime_ns == made  # not made again
    listed = {m.name: m for m in list_installed()}
    assert listed[DEFAULT_NAME].source == "converted"
    assert listed[DEFAULT_NAME].converted_from == listed["smollm2-135m-instruct-q4_1"].name


def test_a_damaged_default_copy_is_set_aside_and_made_again(bundled_model):
    path = default_model_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GGUF broken")
    assert prepare_default_model().path == path
    assert read_gguf_info(path).quantisation == DEFAULT_TYPE
    assert [p.name for p in path.parent.glob("*.bad-*")]


def test_without_a_writable_models_folder_the_bundled_file_is_used_with_a_note(bundled_model):
    (paths.data_dir() / "models").write_text("a file where the folder should be")
    model = prepare_default_model()
    assert model.path == bundled_model
    assert model.note.startswith(f"using the bundled {bundled_model.name}: could not make the "
                                 f"faster {DEFAULT_TYPE} copy")


def test_models_convert_registers_the_copy_and_rm_deletes_it(bundled_model, capsys):
    assert main(["models", "convert", "smollm2-135m-instruct-q4_1", "--type", "q4_0"]) == 0
    out = capsys.readouterr().out
    model = find_installed("smollm2-135m-instruct-q4_0")
    assert f"at {model.path}" in out and model.source == "converted"
    assert read_gguf_info(model.path).quantisation == "Q4_0"
    assert main(["models", "convert", "smollm2-135m-instruct-q4_1", "--type", "q4_0"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    assert "Q4_1  slow verify" in listing and "Q4_0  fast verify" in listing
    assert main(["models", "rm", "smollm2-135m-instruct-q4_0"]) == 0
    assert not model.path.exists()


def test_converting_the_bundled_model_to_the_default_type_makes_the_default(bundled_model,
                                                                           capsys):
    assert main(["models", "convert", "smollm2-135m-instruct-q4_1", "--type",
                 DEFAULT_TYPE]) == 0
    assert f"made the default model {DEFAULT_NAME} at {default_model_file()}" in \
        capsys.readouterr().out
    assert [m.name for m in list_installed()].count(DEFAULT_NAME) == 1
    assert main(["models", "convert", "smollm2-135m-instruct-q4_1", "--type",
                 DEFAULT_TYPE]) == 2
    assert "that is the default model, already made" in capsys.readouterr().err


def test_models_convert_takes_a_path_and_explains_bad_input(bundled_model, tmp_path, capsys):
    local = tmp_path / "mine.Q4_1.gguf"
    shutil.copy(bundled_model, local)
    assert main(["models", "convert", str(local), "--type", "Q4_0"]) == 0
    assert (paths.models_dir() / "converted" / "mine.Q4_0.gguf").is_file()
    capsys.readouterr()
    assert main(["models", "convert", str(tmp_path / "gone.gguf"), "--type", "Q4_0"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["models", "convert", "nosuch", "--type", "Q4_0"]) == 2
    assert "no installed model named 'nosuch'" in capsys.readouterr().err
    assert main(["models", "convert", str(local), "--type", "IQ1_S"]) == 2
    assert "importance matrix" in capsys.readouterr().err
