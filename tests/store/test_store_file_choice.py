"""The picker's choices without Qt: recommended file, quant groups, draft options with why, a
pair's combined progress."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftlight.store.downloads import DownloadProgress, JobState
from draftlight.store.draft_options import CROSS_VOCABULARY, CURATED, SAME_TOKENIZER, draft_options
from draftlight.store.file_choice import file_options, pick_draft_file, quant_group, recommend
from draftlight.store.hub import HubFile, HubRepo
from draftlight.store.installed import InstalledModel
from draftlight.store.memory import MemoryInfo
from draftlight.store.model_names import format_parameters, quant_bits
from draftlight.store.pair_download import PairDownload

GB, GiB = 1_000_000_000, 1 << 30


def hub_file(quant: str, gb: float, name: str = "m") -> HubFile:
    return HubFile("org/M-GGUF", f"{name}-{quant}.gguf", int(gb * GB), None, quant)


@pytest.mark.parametrize("quant, bits, group", [
    ("Q4_K_M", 4, "4-bit"), ("IQ3_XS", 3, "3-bit"), ("F16", 16, "16-bit"), ("BF16", 16, "16-bit"),
    ("Q8_0", 8, "8-bit"), ("MXFP4", None, "Other"), (None, None, "Other")])
def test_quant_groups(quant, bits, group):
    assert quant_bits(quant) == bits and quant_group(quant) == group


def test_parameter_counts_read_as_the_hub_writes_them():
    assert [format_parameters(n) for n in (7_615_616_512, 494_032_768, 14_000_000_000)] == [
        "7.6B", "494M", "14B"]
    assert HubRepo("a/Qwen2.5-0.5B-GGUF").parameter_label == "0.5B"
    assert HubRepo("a/gemma-3-270m-it-GGUF").parameter_label == "270M"
    assert HubRepo("a/Mystery-GGUF").parameter_label is None


def test_the_recommendation_leaves_headroom_and_counts_the_draft():
    files = [hub_file(q, gb) for q, gb in (("Q4_0", 4.0), ("Q8_0", 7.0), ("F16", 14.0))]
    memory = MemoryInfo(32 * GiB, 10 * GiB)  # 75% of free: 8.05 GB
    alone = file_options(files, n_ctx=4096, memory=memory)
    assert [o.file.quant for o in alone] == ["F16", "Q8_0", "Q4_0"]  # most bits first
    assert recommend(alone, n_ctx=4096, memory=memory).file.quant == "Q8_0"  # needs 7.9 GB
    with_draft = file_options(files, n_ctx=4096, draft_bytes=GB, memory=memory)
    best = recommend(with_draft, n_ctx=4096, with_draft=True, memory=memory)
    assert best.file.quant == "Q4_0"  # 7 GB + 1 GB of draft no longer leaves the headroom
    assert "with the draft and a 4,096-token context" in best.reason


def test_a_fast_verifying_file_is_preferred_where_one_leaves_headroom():
    files = [hub_file("Q4_0", 4.0), hub_file("Q6_K", 5.5)]
    memory = MemoryInfo(32 * GiB, 16 * GiB)
    options = file_options(files, n_ctx=4096, memory=memory)
    assert recommend(options, n_ctx=4096, memory=memory).file.quant == "Q6_K"
    fast = recommend(options, n_ctx=4096, memory=memory, fast=lambda f: f.quant == "Q4_0")
    assert fast.file.quant == "Q4_0" and "verifies drafts fast" in fast.reason
    low = file_options([hub_file("Q2_K", 3.0), hub_file("Q6_K", 5.5)], n_ctx=4096, memory=memory)
    # A fast 2-bit file loses more quality than fast drafting wins back
    assert recommend(low, n_ctx=4096, memory=memory, fast=lambda f: f.quant == "Q2_K"
                     ).file.quant == "Q6_K"


def test_unknown_memory_gives_no_recommendation_and_no_badge(monkeypatch):
    from draftlight.store import memory
    monkeypatch.setattr(memory, "system_memory", lambda: None)  # a sandbox without /proc
    options = file_options([hub_file("Q4_0", 1.0)], n_ctx=4096)
    assert options[0].fit is None
    best = recommend(options, n_ctx=4096)
    assert best.file is None and "memory or the file sizes are unknown" in best.reason


def test_a_draft_repository_gives_its_q8_0_file():
    files = [hub_file("Q4_K_M", 0.4), hub_file("Q8_0", 0.5), hub_file("F16", 1.0),
             HubFile("r", "x-Q8_0-00001-of-00002.gguf", 1, None, "Q8_0", (1, 2))]
    assert pick_draft_file(files).path == "m-Q8_0.gguf"
    assert pick_draft_file([hub_file("Q6_K", 0.6), hub_file("Q5_K_M", 0.5)]).quant == "Q5_K_M"
    assert pick_draft_file([]) is None


def installed(name: str, size: int, repo: str | None, tmp: Path) -> InstalledModel:
    return InstalledModel(name, tmp / f"{name}.gguf", "hub", repo, f"{name}.gguf", size=size)


def test_draft_options_say_why_each_qualifies(tmp_path):
    from draftlight.store.catalog import load_catalog
    catalog = load_catalog()
    models = [installed("smollm2-135m", 98_000_000, "x/SmolLM2-135M-GGUF", tmp_path),
              installed("qwen2.5-0.5b-local", 500_000_000, "y/Qwen2.5-0.5B-GGUF", tmp_path),
              installed("llama-8b", 4_900_000_000, "z/Llama-3.1-8B-GGUF", tmp_path)]
    for model in models:
        model.path.write_bytes(b"x")
    options = draft_options("bartowski/Qwen2.5-7B-Instruct-GGUF", target_size=4_700_000_000,
                            catalog=catalog, installed=models,
                            hub_repos=[HubRepo("h/Qwen2.5-1.5B-Instruct-GGUF"),
                                       HubRepo("h/Qwen2.5-14B-Instruct-GGUF"),
                                       HubRepo("h/gemma-3-1b-it-GGUF")])
    kinds = {o.name: o.kind for o in options}
    assert kinds["qwen2.5-0.5b-instruct-q8_0"] == CURATED  # the curated pair, first
    assert options[0].why == "curated pair: known to work with this target"
    assert kinds["h/Qwen2.5-1.5B-Instruct-GGUF"] == SAME_TOKENIZER
    assert "h/Qwen2.5-14B-Instruct-GGUF" not in kinds  # larger than the target
    assert "h/gemma-3-1b-it-GGUF" not in kinds  # the hub's other families are not listed
    assert kinds["qwen2.5-0.5b-local"] == SAME_TOKENIZER
    assert kinds["smollm2-135m"] == CROSS_VOCABULARY
    assert "llama-8b" not in kinds  # too big to pay as a draft


class FakeJob:
    def __init__(self, state, downloaded=0, total=None, speed=0.0):
        self.progress = DownloadProgress(state, downloaded, total, speed)
        self.cancelled = False

    @property
    def state(self):
        return self.progress.state

    def cancel(self):
        self.cancelled = True


@pytest.mark.parametrize("states, combined", [
    ((JobState.DONE, JobState.DOWNLOADING), JobState.DOWNLOADING),
    ((JobState.DONE, JobState.DONE), JobState.DONE),
    ((JobState.CANCELLED, JobState.CANCELLED), JobState.CANCELLED),
    ((JobState.FAILED, JobState.CANCELLED), JobState.FAILED),
    ((JobState.CANCELLED, JobState.DOWNLOADING), JobState.DOWNLOADING),  # still stopping
    ((JobState.QUEUED, JobState.QUEUED), JobState.QUEUED),
])
def test_a_pair_has_one_state(states, combined):
    assert PairDownload([FakeJob(s) for s in states]).state == combined


def test_a_pair_adds_up_bytes_with_hints_until_sizes_are_known():
    first = FakeJob(JobState.DOWNLOADING, 300, 1000, speed=100.0)
    second = FakeJob(JobState.QUEUED)
    pair = PairDownload([first, second], [1000, 500])
    progress = pair.progress
    assert (progress.downloaded, progress.total, progress.fraction) == (300, 1500, 0.2)
    assert progress.eta == 12.0
    assert PairDownload([second], [None]).progress.total is None
    pair.cancel()
    assert first.cancelled and second.cancelled


def test_a_target_is_never_offered_as_its_own_draft_nor_a_draft_over_a_third_of_it(tmp_path):
    """The picker offered the 1.1 GB Qwen2.5-Coder-1.5B an Ollama store held as a "same
    tokenizer" draft for the same model on the hub (issue 54)."""
    models = [installed("ollama:qwen2.5-coder:1.5b", 1_117_320_768, None, tmp_path),
              installed("ollama:qwen2.5-coder:0.5b", 400_000_000, None, tmp_path),
              installed("ollama:qwen2.5-coder:3b", 1_900_000_000, None, tmp_path)]
    for model in models:
        model.path.write_bytes(b"x")
    for size in (None, 1_117_320_768):  # before and after a file of the repo is chosen
        options = draft_options("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", target_size=size,
                                catalog=None, installed=models,
                                hub_repos=[HubRepo("h/Qwen2.5-Coder-1.5B-Instruct-GGUF"),
                                           HubRepo("h/Qwen2.5-Coder-0.5B-Instruct-GGUF")])
        offered = [o.name for o in options]
        assert "ollama:qwen2.5-coder:1.5b" not in offered and "ollama:qwen2.5-coder:3b" not in offered
        assert "h/Qwen2.5-Coder-1.5B-Instruct-GGUF" not in offered
        assert "h/Qwen2.5-Coder-0.5B-Instruct-GGUF" in offered
    big = draft_options("bartowski/Qwen2.5-Coder-7B-Instruct-GGUF", target_size=4_700_000_000,
                        catalog=None, installed=models,
                        hub_repos=[HubRepo("h/Qwen2.5-Coder-3B-Instruct-GGUF"),
                                   HubRepo("h/Qwen2.5-Coder-1.5B-Instruct-GGUF")])
    assert [o.name for o in big if o.name.startswith("h/")] == [
        "h/Qwen2.5-Coder-1.5B-Instruct-GGUF"]  # 3B is over a third of 7B
