"""A corpus of hostile entries in other apps' model folders, beside one real model in each: the
scan lists exactly the real ones, within a time and memory bound, whatever else the folders hold
(FIFOs and devices where files should be, loops of links, manifests deep, huge, binary or
pointing outside, thousands of folders)."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

from draftlight.store.found_models import find_models, forget_found, skipped_entries
from tests.support.hub_server import synthetic_gguf
from tests.support.other_apps import ollama_pull

SECONDS = 10
APP_GROWTH_MB = 100


def hostile_ollama(root: Path) -> Path:
    good = ollama_pull(root, "good", "1b")
    manifests = root / "manifests" / "registry.ollama.ai" / "library"

    def manifest(name: str, text: str | bytes) -> Path:
        path = manifests / name / "latest"
        path.parent.mkdir(parents=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return path

    manifest("deep", "[" * 200_000 + "]" * 200_000)
    manifest("huge", '{"layers": [' + ",".join(['{"a": 1}'] * 400_000) + "]}")
    manifest("binary", os.urandom(2048))
    manifest("list", "[1, 2, 3]")
    manifest("nan", '{"layers": NaN}')
    manifest("traversal", json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image."
                                                  "model", "digest": "sha256:../../../etc/passwd"}]}))
    manifest("missing-blob", json.dumps({"layers": [{"mediaType": "application/vnd.ollama."
                                                     "image.model", "digest": "sha256:" + "f" * 64}]}))
    fifo = manifests / "fifo" / "latest"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    zero = manifests / "zero" / "latest"
    zero.parent.mkdir()
    zero.symlink_to("/dev/zero")
    loop = manifests / "loop" / "latest"
    loop.parent.mkdir()
    loop.symlink_to(loop)
    (manifests / "folder" / "latest").mkdir(parents=True)
    for name, make in (("piped", os.mkfifo), ("zeroes", lambda p: p.symlink_to("/dev/zero")),
                       ("looped", lambda p: p.symlink_to(p))):
        blob = ollama_pull(root, name, "1b")
        blob.unlink()
        make(blob)
    for n in range(2000):  # many folders, none a model
        (manifests / "crowd" / f"tag{n}").mkdir(parents=True)
    return good


def hostile_gguf_folder(root: Path, inner: tuple[str, ...] = ("org", "Repo-GGUF")) -> Path:
    """`root` holding one real model in `inner` (LM Studio's publisher/repo, or none), beside
    FIFOs, devices, loops and broken files named like models."""
    folder = root.joinpath(*inner)
    good = folder / "good-Q4_K_M.gguf"
    good.parent.mkdir(parents=True)
    good.write_bytes(synthetic_gguf(1 << 12))
    os.mkfifo(folder / "fifo-Q4_K_M.gguf")
    (folder / "zero-Q4_K_M.gguf").symlink_to("/dev/zero")
    (folder / "loop-Q4_K_M.gguf").symlink_to(folder / "loop-Q4_K_M.gguf")
    (folder / "text-Q4_K_M.gguf").write_text("not a model")
    (folder / "cut-Q4_K_M.gguf").write_bytes(synthetic_gguf(1 << 12)[:40])
    (folder / "folder.gguf").mkdir()
    (folder / "up").symlink_to(root)  # a loop of folders
    deep = root / "deep"
    for n in range(100):
        deep = deep / f"d{n}"
    deep.mkdir(parents=True)
    (deep / "far-Q4_K_M.gguf").write_bytes(synthetic_gguf(1 << 12))  # past any scan's depth
    return good


def test_each_app_lists_its_real_model_and_skips_every_hostile_entry(tmp_path):
    home = tmp_path / "home"
    ollama = tmp_path / "ollama"
    good_ollama = hostile_ollama(ollama)
    good_lm = hostile_gguf_folder(home / ".lmstudio" / "models")
    good_llama = hostile_gguf_folder(tmp_path / "llama-cache", inner=())
    forget_found()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.monotonic()
    found = find_models(env={"OLLAMA_MODELS": str(ollama), "LLAMA_CACHE": str(tmp_path / "llama-cache"),
                             "HF_HUB_CACHE": str(tmp_path / "no-hf")}, home=home)
    seconds = time.monotonic() - started
    skipped = skipped_entries()
    forget_found()
    paths = {Path(m.path).resolve() for m in found}
    assert {good_ollama.resolve(), good_lm.resolve(), good_llama.resolve()} <= paths
    # A GGUF cut short is one by its first bytes: listed, and refused in one line when used.
    assert all(p.name.startswith(("sha256-", "good", "cut")) for p in paths), paths
    assert [p for p in paths if p.name.startswith("sha256-")] == [good_ollama.resolve()]
    assert seconds < SECONDS
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before < APP_GROWTH_MB
    # Each entry that only looks like a model is said in one line; nothing else is.
    assert all("\n" not in line for line in skipped)
    said = "\n".join(skipped)
    for manifest, why in (("deep", "nested more than 64 levels"), ("huge", "over 1,048,576 bytes"),
                          ("binary", "not text"), ("nan", "not an Ollama manifest"),
                          ("traversal", "not a sha256"), ("loop", "symbolic links"),
                          ("list", "not an Ollama manifest"), ("fifo", "not a regular file"),
                          ("zero", "not a regular file")):
        assert f"library/{manifest}/latest (" in said and why in said, (manifest, said)
    for model in ("piped", "zeroes", "looped", "missing-blob"):
        assert f"the model blob of {model}:" in said, (model, said)
    for app in ("LM Studio", "llama.cpp"):
        for name, why in (("fifo-Q4_K_M.gguf", "missing, or not a regular file"),
                          ("zero-Q4_K_M.gguf", "missing, or not a regular file"),
                          ("loop-Q4_K_M.gguf", "missing, or not a regular file"),
                          ("text-Q4_K_M.gguf", "not a GGUF file")):
            assert any(line.startswith(f"{app}: skipped ") and f"{name} ({why})" in line
                       for line in skipped), (app, name, said)
    assert "crowd" not in said and "good" not in said


def test_models_list_shows_the_rest_and_says_what_it_skipped(tmp_path, monkeypatch, capsys):
    from draftlight.cli import main
    root = tmp_path / "ollama"
    good = ollama_pull(root, "good", "1b")
    for n in range(7):
        (root / "manifests/registry.ollama.ai/library" / f"deep{n}").mkdir(parents=True)
        (root / "manifests/registry.ollama.ai/library" / f"deep{n}" / "latest").write_text(
            "[" * 100 + "]" * 100)
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    forget_found()
    assert main(["models", "list"]) == 0
    out, err = capsys.readouterr()
    assert "ollama:good:1b" in out and str(good) in out
    lines = err.strip().splitlines()
    assert len(lines) == 6 and all(line.startswith("draftlight: note: Ollama: skipped ")
                                   for line in lines[:5])
    assert "(nested more than 64 levels deep)" in lines[0]
    assert lines[5] == "draftlight: note: … and 2 more entries skipped"
    forget_found()


def bad_field_manifests(root: Path) -> dict[str, str]:
    """Manifests beside a real model, each with one field of the wrong type or out of range:
    name -> what its skipped line must say."""
    good_digest = "sha256:" + "a" * 64
    manifests = root / "manifests" / "registry.ollama.ai" / "library"

    def layer(**fields) -> dict:
        return {"mediaType": "application/vnd.ollama.image.model", "digest": good_digest,
                "size": 4096, **fields}

    cases = {
        "nul-digest": ([layer(digest="sha256:" + "a" * 63 + "\x00")], "digest is not a sha256"),
        "upper-digest": ([layer(digest="sha256:" + "A" * 64)], "digest is not a sha256"),
        "short-digest": ([layer(digest="sha256:abc")], "digest is not a sha256"),
        "long-digest": ([layer(digest=good_digest + "0")], "digest is not a sha256"),
        "newline-digest": ([layer(digest=good_digest + "\n")], "digest is not a sha256"),
        "number-digest": ([layer(digest=5)], "digest is not a sha256"),
        "list-media-type": ([{"mediaType": ["x"], "digest": good_digest}, layer()],
                            "mediaType of layer 1 is not text"),
        "number-layer": ([7, layer()], "layer 1 is not an object"),
        "negative-size": ([layer(size=-1)], "size is not a byte count"),
        "text-size": ([layer(size="4096")], "size is not a byte count"),
        "bool-size": ([layer(size=True)], "size is not a byte count"),
        "float-size": ([layer(size=4096.5)], "size is not a byte count"),
        "huge-size": ([layer(size=1 << 80)], "size is not a byte count"),
    }
    for name, (layers, _why) in cases.items():
        path = manifests / name / "latest"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"schemaVersion": 2, "layers": layers}))
    return {name: why for name, (_layers, why) in cases.items()}


def test_every_field_of_a_manifest_is_checked_and_a_bad_one_skipped_with_why(tmp_path):
    root = tmp_path / "ollama"
    good = ollama_pull(root, "good", "1b")
    expected = bad_field_manifests(root)
    forget_found()
    found = find_models(env={"OLLAMA_MODELS": str(root)}, home=tmp_path / "home")
    skipped = skipped_entries()
    forget_found()
    assert [(m.name, m.path) for m in found] == [("good:1b", good)]
    assert len(skipped) == len(expected), skipped
    for name, why in expected.items():
        [line] = [line for line in skipped if f"library/{name}/latest (" in line]
        assert why in line and "\n" not in line and "\x00" not in line, (name, line)


def test_a_blob_whose_size_is_not_the_manifests_is_skipped(tmp_path):
    root = tmp_path / "ollama"
    good = ollama_pull(root, "good", "1b")
    other = ollama_pull(root, "grown", "1b")
    with open(other, "ab") as stream:
        stream.write(b"\0" * 10)
    forget_found()
    found = find_models(env={"OLLAMA_MODELS": str(root)}, home=tmp_path / "home")
    skipped = skipped_entries()
    forget_found()
    assert [m.path for m in found] == [good]
    [line] = skipped
    assert "the model blob of grown:1b has" in line and "its manifest says" in line, line


def test_models_list_lists_the_rest_past_a_manifest_whose_digest_holds_a_nul(
        tmp_path, monkeypatch, capsys):
    from draftlight.cli import main
    root = tmp_path / "ollama"
    good = ollama_pull(root, "good", "1b")
    manifest = root / "manifests/registry.ollama.ai/library/nul/latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model",
                                                "digest": "sha256:" + "0" * 63 + "\x00"}]}))
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    forget_found()
    assert main(["models", "list"]) == 0
    out, err = capsys.readouterr()
    forget_found()
    assert "ollama:good:1b" in out and str(good) in out
    [line] = err.strip().splitlines()
    assert line.startswith("draftlight: note: Ollama: skipped ") and "nul/latest" in line, line
    assert "digest is not a sha256" in line, line
