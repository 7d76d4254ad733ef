"""Auto told a copy's start or its end (app/draftlight/bench/foreknowledge.py): what such
evidence could at best buy, on the bundled model's recorded answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftlight.bench.foreknowledge import Foreknowing, copy_share, main, replay_told, shares
from draftlight.bench.recorded_answers import load_records
from draftlight.bench.recorded_words import load_words
from draftlight.bench.replay import CURVES, curve, replay
from draftlight.engine.auto.costs import MEASURED_K

BUNDLED = Path(__file__).parents[2] / "app/draftlight/bench/recorded/smollm2-135m-q8_0.jsonl.gz"


@pytest.fixture(scope="module")
def recording():
    return load_records(BUNDLED), load_words(BUNDLED)


def steps(records, fold, told: str) -> list[tuple[int, int]]:
    """(drafted, accepted) of every step a Foreknowing auto takes on the Xeon Qwen curve."""
    seen = []
    replay_told(records, curve(CURVES["qwen1.5b-q4km-xeon"]), told, fold,
                watch=lambda record, context, drafted, accepted: seen.append((drafted, accepted)))
    return seen


def test_told_the_start_it_never_drafts_a_wrong_first_token(recording):
    taken = steps(*recording, "start")
    drafted = [(d, a) for d, a in taken if d]
    assert len(drafted) > 100
    assert all(a >= 1 for d, a in drafted)


def test_told_the_end_it_never_drafts_past_a_copy_it_knows(recording):
    """Where the copy started (a first token accepted), the draft stopped at or before its end,
    every drafted token accepted, unless a draft as long as the copy is not one auto may draft
    (it times passes of 1-6, 8, 10, 12 and 16 tokens: a 6-token copy on this curve is drafted
    as 7, the 8-token pass being cheap). Where it did not start, it drafted as auto does, and
    some of those drafts fail."""
    taken = steps(*recording, "end")
    lengths = {k - 1 for k in MEASURED_K if k >= 2}
    started = [(d, a) for d, a in taken if d and a]
    assert len(started) > 100
    assert all(a == d or (a not in lengths and d > a) for d, a in started)
    assert any(a == d and a >= 7 for d, a in started)
    assert any(d and not a for d, a in taken)


def test_told_nothing_it_is_auto(recording):
    records, fold = recording
    costs = curve(CURVES["smollm2-q8-epyc"])
    plain = replay(records, costs, fold=fold)

    def nothing(auto, context, ahead):
        auto.run = None

    told_nothing = replay(records, costs, fold=fold, foresee=nothing,
                          policy=lambda c, candidates: Foreknowing(c, candidates, "start"))
    assert [r.passes for r in told_nothing] == [r.passes for r in plain]


def test_either_knowledge_buys_a_share_of_the_ceiling_and_neither_passes_it(recording):
    records, fold = recording
    for name in ("qwen1.5b-q4km-xeon", "gpu-like"):
        row = shares(records, curve(CURVES[name]), fold)
        assert row["auto"] < row["start"] <= 1.0 + 1e-9, (name, row)
        assert row["auto"] < row["end"] <= 1.0 + 1e-9, (name, row)


def test_it_is_told_one_of_two_things():
    with pytest.raises(ValueError, match="start, end"):
        Foreknowing(curve(CURVES["gpu-like"]), [], "everything")


def test_copy_share_pools_the_copy_categories(recording):
    records, fold = recording
    rows = replay(records, curve(CURVES["gpu-like"]), fold=fold)
    copies = [r for r in rows if r.category in ("code_editing", "summarization", "document_qa")]
    assert copy_share(rows) == pytest.approx(sum(r.oracle for r in copies)
                                             / sum(r.passes for r in copies))


def test_the_command_prints_one_row_per_recording_and_curve(capsys):
    assert main([str(BUNDLED), "--curve", "gpu-like", "--curve", "smollm2-q8-epyc"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 4 and "told the start" in lines[0]
    assert lines[2].startswith("| recorded/smollm2-135m-q8_0 | gpu-like |")
