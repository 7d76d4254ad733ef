"""Models other apps keep (issue 38, part 1): each app's real layout built in a temporary HOME,
found where the app puts it, named as the app names it, and never changed."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from draftlight.store import found_models
from draftlight.store.found_models import find_models, forget_found, resolve_reference
from draftlight.store.model_facts import FactsCache
from tests.support.hub_server import synthetic_gguf
from tests.support.other_apps import ollama_pull


@pytest.fixture(autouse=True)
def fresh():
    forget_found()
    yield
    forget_found()


def gguf(path: Path, size: int = 1 << 12) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(synthetic_gguf(size))
    return path


def ollama_model(root: Path, name: str, tag: str, namespace: str = "library",
                 projector: bool = False) -> Path:
    return ollama_pull(root, name, tag, namespace=namespace, projector=projector)


def hf_snapshot(hub: Path, repo: str, revision: str, files: dict[str, bytes]) -> Path:
    base = hub / ("models--" + repo.replace("/", "--"))
    snapshot = base / "snapshots" / revision
    for name, data in files.items():
        blob = base / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))  # as huggingface_hub links them
    return snapshot


def hashes(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


def test_each_apps_models_are_found_named_as_that_app_names_them(tmp_path):
    home = tmp_path / "home"
    ollama = home / ".ollama" / "models"
    qwen7 = ollama_model(ollama, "qwen2.5", "7b")
    ollama_model(ollama, "qwen2.5", "0.5b")
    ollama_model(ollama, "coder", "latest", namespace="someone")
    ollama_model(ollama, "llava", "7b", projector=True)  # no model layer: not a chat model
    studio = home / ".lmstudio" / "models"
    gguf(studio / "lmstudio-community" / "Qwen2.5-7B-GGUF" / "Qwen2.5-7B-Q4_K_M.gguf")
    gguf(studio / "lmstudio-community" / "Qwen2.5-7B-GGUF" / "mmproj-Qwen2.5-7B-f16.gguf")
    gguf(studio / "x" / "Big-GGUF" / "big-00001-of-00002.gguf")
    gguf(studio / "x" / "Big-GGUF" / "big-00002-of-00002.gguf")
    gguf(home / ".cache" / "lm-studio" / "models" / "old" / "Repo" / "old.gguf")
    (studio / "x" / "Big-GGUF" / "next.gguf.partial").write_bytes(b"GGUF")
    hub = home / ".cache" / "huggingface" / "hub"
    hf_snapshot(hub, "bartowski/SmolLM2-GGUF", "abc123",
                {"SmolLM2-Q8_0.gguf": synthetic_gguf(1 << 12), "README.md": b"# card"})
    gguf(home / ".cache" / "llama.cpp" / "org_Repo_model-Q4_0.gguf")
    (home / ".cache" / "llama.cpp" / "org_Repo_other.gguf.downloadInProgress").write_bytes(b"x")
    jan = home / ".config" / "Jan" / "data" / "models"
    gguf(jan / "llamacpp" / "qwen3-4b" / "model.gguf")
    gguf(jan / "llamacpp" / "llava-7b" / "mmproj.gguf")  # its vision projector
    gguf(home / "jan" / "models" / "huggingface.co" / "org" / "Repo" / "old-Q4_0.gguf")
    gguf(home / ".local" / "share" / "nomic.ai" / "GPT4All" / "Llama-3.2-1B-Q4_0.gguf")
    before = hashes(home)

    found = find_models(env={}, home=home)
    names = [(m.app, m.name) for m in found]
    assert names == [
        ("Ollama", "qwen2.5:0.5b"), ("Ollama", "qwen2.5:7b"), ("Ollama", "someone/coder:latest"),
        ("LM Studio", "lmstudio-community/Qwen2.5-7B-GGUF/Qwen2.5-7B-Q4_K_M.gguf"),
        ("LM Studio", "old/Repo/old.gguf"),
        ("LM Studio", "x/Big-GGUF/big-00001-of-00002.gguf"),
        ("Hugging Face cache", "bartowski/SmolLM2-GGUF/SmolLM2-Q8_0.gguf"),
        ("llama.cpp", "org_Repo_model-Q4_0.gguf"),
        ("Jan", "huggingface.co/org/Repo/old-Q4_0.gguf"), ("Jan", "qwen3-4b"),
        ("GPT4All", "Llama-3.2-1B-Q4_0.gguf")]
    by_name = {m.name: m for m in found}
    assert by_name["qwen3-4b"].reference == "jan:qwen3-4b"
    assert by_name["qwen2.5:7b"].path == qwen7 and by_name["qwen2.5:7b"].reference == \
        "ollama:qwen2.5:7b"
    big = by_name["x/Big-GGUF/big-00001-of-00002.gguf"]
    assert big.size == 2 * len(synthetic_gguf(1 << 12))  # both parts
    assert hashes(home) == before  # nothing written, moved or renamed


def test_override_variables_are_honoured_and_missing_folders_are_silent(tmp_path):
    elsewhere = tmp_path / "disk"
    ollama_model(elsewhere / "ollama", "gemma3", "270m")
    hf_snapshot(elsewhere / "hf", "org/Tiny-GGUF", "r1", {"tiny.gguf": synthetic_gguf(1 << 12)})
    gguf(elsewhere / "llama" / "m.gguf")
    env = {"OLLAMA_MODELS": str(elsewhere / "ollama"), "HF_HUB_CACHE": str(elsewhere / "hf"),
           "LLAMA_CACHE": str(elsewhere / "llama")}
    found = find_models(env=env, home=tmp_path / "nobody")
    assert [m.reference for m in found] == ["ollama:gemma3:270m", "hf:org/Tiny-GGUF/tiny.gguf",
                                            "llamacpp:m.gguf"]
    forget_found()
    assert find_models(env={"HF_HOME": str(tmp_path / "none")}, home=tmp_path / "nobody") == []


def test_the_newest_snapshot_wins_and_a_reference_resolves_to_its_file(tmp_path):
    home = tmp_path / "home"
    hub = home / ".cache" / "huggingface" / "hub"
    old = hf_snapshot(hub, "org/M-GGUF", "old", {"m.gguf": synthetic_gguf(1 << 12)})
    new = hf_snapshot(hub, "org/M-GGUF", "new", {"m.gguf": synthetic_gguf(1 << 13)})
    os.utime(old, (1_000_000, 1_000_000))
    ollama_model(home / ".ollama" / "models", "qwen2.5", "latest")
    found = find_models(env={}, home=home)
    assert [m.path for m in found if m.app == "Hugging Face cache"] == [new / "m.gguf"]
    assert resolve_reference("hf:org/M-GGUF/m.gguf", env={}, home=home) == new / "m.gguf"
    assert resolve_reference("ollama:qwen2.5", env={}, home=home) is not None  # :latest
    assert resolve_reference("ollama:nothing:1b", env={}, home=home) is None
    assert resolve_reference("qwen2.5:latest", env={}, home=home) is not None  # a bare name


def test_an_unreadable_manifest_or_folder_never_breaks_the_list(tmp_path):
    home = tmp_path / "home"
    root = home / ".ollama" / "models"
    ollama_model(root, "good", "1b")
    bad = root / "manifests" / "registry.ollama.ai" / "library" / "bad" / "1b"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\xff{not json")
    odd = root / "manifests" / "registry.ollama.ai" / "library" / "odd" / "1b"
    odd.parent.mkdir(parents=True)
    odd.write_text(json.dumps({"layers": [{"mediaType": found_models.OLLAMA_MODEL_LAYER,
                                           "digest": "sha256:../../../etc/passwd"}]}))
    locked = home / ".lmstudio" / "models" / "locked"
    gguf(locked / "r" / "m.gguf")
    locked.chmod(0)
    try:
        names = [m.name for m in find_models(env={}, home=home)]
    finally:
        locked.chmod(0o755)
    assert "good:1b" in names and not any(n.startswith(("bad", "odd")) for n in names)


def test_models_list_and_chat_take_a_found_model_by_its_reference(tmp_path, monkeypatch,
                                                                   bundled_model, capsys):
    # The bundled model as Ollama keeps a pulled model: a manifest and a sha256 blob.
    root = tmp_path / "ollama"
    data = bundled_model.read_bytes()
    blob = ollama_pull(root, "smollm2", "135m", data=data)
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    from draftlight.cli import main
    assert main(["models", "list"]) == 0
    listed = capsys.readouterr().out
    line = next(line for line in listed.splitlines() if line.startswith("ollama:smollm2:135m"))
    assert "Ollama" in line and "Q4_1" in line and str(blob) in line
    assert main(["chat", "--target", "ollama:smollm2:135m", "--max-tokens", "8", "--no-color",
                 "Say hi."]) == 0
    assert capsys.readouterr().out.strip()
    assert blob.read_bytes() == data


def test_a_hostile_header_in_another_apps_folder_is_one_row_with_its_reason(
        tmp_path, monkeypatch, capsys):
    """A file another app keeps can be anything: a header nested thousands deep is listed with
    its one-line reason, the other models still are, and `models list` exits 2."""
    from draftlight.cli import main
    from tests.support.hostile_gguf import hostile_files
    root = tmp_path / "ollama"
    ollama_pull(root, "good", "1b")
    ollama_pull(root, "evil", "1b", data=hostile_files()["nested-arrays"].data)
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    before = hashes(root)
    assert main(["models", "list"]) == 2
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert any(line.startswith("ollama:good:1b") for line in lines)
    [evil] = [line for line in lines if line.startswith("ollama:evil:1b")]
    assert "header unreadable" in evil
    [reason] = err.strip().splitlines()
    assert "nested more than 3 deep" in reason, reason
    assert hashes(root) == before


def test_an_isolated_draftlight_looks_only_where_a_variable_points(tmp_path, monkeypatch):
    home = tmp_path / "home"
    ollama_model(home / ".ollama" / "models", "qwen2.5", "7b")
    monkeypatch.setattr(Path, "home", lambda: home)
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    assert os.environ.get("DRAFTLIGHT_HOME")  # every test runs isolated (conftest)
    assert find_models() == []
    forget_found()
    monkeypatch.setenv("OLLAMA_MODELS", str(home / ".ollama" / "models"))
    assert [m.reference for m in find_models()] == ["ollama:qwen2.5:7b"]
    forget_found()
    monkeypatch.delenv("OLLAMA_MODELS")
    monkeypatch.delenv("DRAFTLIGHT_HOME")
    assert [m.reference for m in find_models(folders=[])] == ["ollama:qwen2.5:7b"]  # the user's



def test_pairs_put_a_small_same_vocabulary_draft_first_and_skip_one_too_big(tmp_path,
                                                                          monkeypatch, capsys):
    root = tmp_path / "ollama"

    def pull(name, tag, size, vocab):
        ollama_pull(root, name, tag, size=size, vocab=vocab)

    pull("qwen2.5", "7b", 400_000, vocab=1000)
    pull("qwen2.5", "0.5b", 60_000, vocab=1000)  # same vocabulary, small: first
    pull("other", "tiny", 80_000, vocab=3000)  # another vocabulary: drafts through text
    pull("qwen2.5", "3b", 200_000, vocab=1000)  # half the target: too big to pay
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    from draftlight.store.found_models import every_model
    from draftlight.store.pairs import drafts_for
    models = {m.name: m for m in every_model()}
    choices = drafts_for(models["ollama:qwen2.5:7b"], list(models.values()), FactsCache())
    assert [(c.draft.name, c.same_vocabulary) for c in choices] == [
        ("ollama:qwen2.5:0.5b", True), ("ollama:other:tiny", False)]
    assert "another vocabulary (3,000 tokens" in choices[1].why
    assert "costs about 15% of a target pass" in choices[0].why  # 60 kB of 400 kB
    # the picker's Drafts list, for a 7B on the hub, offers the one Ollama already has
    from draftlight.store.draft_options import draft_options
    offered = {o.name: o for o in draft_options("Qwen/Qwen2.5-7B-Instruct-GGUF",
                                                 target_size=4_000_000_000, catalog=None,
                                                 installed=list(models.values()))}
    assert offered["ollama:qwen2.5:0.5b"].kind == "same tokenizer"
    assert offered["ollama:qwen2.5:0.5b"].installed
    from draftlight.cli import main
    assert main(["models", "pairs"]) == 0
    printed = capsys.readouterr().out
    assert "ollama:qwen2.5:7b  +  ollama:qwen2.5:0.5b" in printed
    assert "ollama:qwen2.5:7b  +  ollama:qwen2.5:3b" not in printed


def test_a_folder_you_add_is_listed_and_taken_by_reference(tmp_path, capsys):
    from draftlight.cli import main
    shelf = tmp_path / "my models"
    gguf(shelf / "qwen" / "Qwen2.5-0.5B-Q8_0.gguf")
    gguf(shelf / "notes.gguf.partial")
    before = hashes(shelf)
    assert main(["models", "add-folder", str(shelf)]) == 0
    assert "1 GGUF model " in capsys.readouterr().out
    assert main(["models", "add-folder", str(shelf)]) == 0  # twice: listed once
    capsys.readouterr()
    forget_found()
    from draftlight.commands.model_paths import model_argument
    from draftlight.settings import added_model_folders
    found = [m for m in find_models(folders=added_model_folders())
             if m.app == "a folder you added"]
    assert [m.reference for m in found] == ["folder:my models/qwen/Qwen2.5-0.5B-Q8_0.gguf"]
    assert model_argument(found[0].reference) == found[0].path
    assert main(["models", "remove-folder", str(shelf)]) == 0
    forget_found()
    assert not [m for m in find_models(folders=added_model_folders())
                if m.app == "a folder you added"]
    assert main(["models", "remove-folder", str(shelf)]) == 2
    assert "was not added" in capsys.readouterr().err
    assert main(["models", "add-folder", str(tmp_path / "nowhere")]) == 2
    assert hashes(shelf) == before


def test_the_same_file_in_two_apps_is_one_row_that_names_both(tmp_path):
    """Issue 54, item 2: an LM Studio folder that links Ollama's blob shows as one row naming
    both; either reference resolves to the file."""
    home = tmp_path / "home"
    blob = ollama_model(home / ".ollama" / "models", "qwen2.5", "7b")
    linked = home / ".lmstudio" / "models" / "Qwen" / "Qwen2.5-7B-GGUF" / "q.gguf"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(blob)
    own = gguf(home / ".lmstudio" / "models" / "Other" / "O-GGUF" / "o.gguf")
    found = find_models(env={}, home=home)
    rows = [m for m in found if m.path.resolve() == blob.resolve()]
    assert len(rows) == 1
    assert rows[0].reference == "ollama:qwen2.5:7b"
    assert rows[0].also == ("lmstudio:Qwen/Qwen2.5-7B-GGUF/q.gguf",)
    assert [m.path for m in found if m.app == "LM Studio"] == [own]
    for reference in ("ollama:qwen2.5:7b", "lmstudio:Qwen/Qwen2.5-7B-GGUF/q.gguf"):
        assert resolve_reference(reference, env={}, home=home) == rows[0].path
