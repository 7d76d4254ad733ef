"""Auto's policy replayed on the bundled model's recorded greedy answers (app/draftlight/bench/replay.py),
under the cost curves measured on this project's machines: the promise "never slower", checked
without a model and without timing noise, and the replay itself checked against the engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftlight.bench.recorded_words import load_words
from draftlight.bench.recorded_answers import load_records
from draftlight.bench.replay import CURVES, curve, replay, summarise
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.modes import OFF

RECORDED = Path(__file__).parents[2] / "app" / "draftlight" / "bench" / "recorded"
BUNDLED = RECORDED / "smollm2-135m-q8_0.jsonl.gz"
CPU_CURVES = [name for name in CURVES if name != "gpu-like"]


@pytest.fixture(scope="module")
def records():
    return load_records(BUNDLED)


@pytest.fixture(scope="module")
def words():
    """The recording's words: the engine measures matches with them (drafters.word_fold)."""
    fold = load_words(BUNDLED)
    assert fold is not None
    return fold


def test_the_recorded_answers_cover_every_category(records):
    categories = {r["category"] for r in records}
    assert len(categories) == 9 and len(records) >= 63
    assert all(r["prompt"] and r["answer"] for r in records)


@pytest.mark.parametrize("name", CPU_CURVES)
def test_auto_is_never_slower_than_plain_in_any_category(records, words, name):
    """≥ 0.98x in every category (the bench's floor) on every machine's curve, with 1% of a
    pass charged for each drafting step's bookkeeping; and a real gain overall."""
    table = summarise(replay(records, curve(CURVES[name]), step_overhead=0.01, fold=words))
    slow = {k: round(v["auto"], 3) for k, v in table.items() if v["auto"] < 0.98}
    assert not slow, f"auto below 0.98x plain on {name}: {slow}"
    assert table["overall"]["auto"] > 1.1


def test_auto_takes_most_of_the_ceiling_where_passes_are_cheap_and_never_beats_it(records,
                                                                                  words):
    flat = summarise(replay(records, curve(CURVES["gpu-like"]), fold=words))
    assert flat["overall"]["share"] > 0.95  # on a GPU the cost of caution is small
    for name in CPU_CURVES:
        for category, row in summarise(replay(records, curve(CURVES[name]),
                                              fold=words)).items():
            assert row["share"] <= 1.0 + 1e-9, (name, category)


def test_the_replay_charges_what_the_engine_would(records):
    """One answer replayed by hand: every step's draft is checked against the answer and paid
    v(k); the tokens come out in order and the passes add up."""
    record = next(r for r in records if r["category"] == "code_editing")
    costs = curve({2: 1.5, 4: 2.0, 8: 3.0, 16: 5.0})
    [row] = replay([record], costs)
    assert row.tokens == len(record["answer"])
    assert len(record["answer"]) / row.passes == pytest.approx(row.speedup)
    # Plain decoding would pay one pass per token; copying code pays less.
    assert row.passes < 0.8 * row.tokens
    # And no better than the oracle that drafts exactly the guesses that will be accepted.
    assert row.passes >= row.oracle - 1e-9


def test_a_drafter_that_never_guesses_right_costs_nothing(records):
    """Answers that share nothing with their prompts: auto never drafts and pays 1 per token."""
    scrambled = [{"category": "noise", "prompt": list(range(1000, 1300)),
                  "answer": [2000 + (i * 7919) % 5000 for i in range(128)]}]
    [row] = replay(scrambled, curve(CURVES["smollm2-q8-epyc"]), step_overhead=0.01)
    assert row.passes == pytest.approx(128.0)
    assert NgramDrafter().propose(scrambled[0]["prompt"], 8).tokens == []


def test_record_writes_what_plain_decoding_says_and_later_turns_follow_it(bundled_model,
                                                                           tmp_path):
    """The recorder on the real bundled model: each turn's prompt is the chat template's tokens
    and its answer plain decoding's, the second turn built on the first turn's answer."""
    import json

    from draftlight.bench.recorded_answers import record
    from draftlight.engine.reply.generator import Engine
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.engine.core.sampling import SamplingParams
    from tests.support.real_engine import run

    question = {"question_id": 1, "category": "code_editing",
                "turns": ["Rename x to count: def f(x): return x + 1", "Now add a docstring."]}
    questions = tmp_path / "one.jsonl"
    questions.write_text(json.dumps(question) + "\n")
    out = tmp_path / "answers.jsonl.gz"
    assert record(bundled_model, questions, out, max_tokens=12, limit=None) == 0
    first, second = load_records(out)
    params = SamplingParams(temperature=0.0, max_tokens=12)
    engine = Engine.load(bundled_model, None, LoadOptions(n_ctx=4096))
    try:
        messages = [{"role": "user", "content": question["turns"][0]}]
        assert first["prompt"] == engine.tokenize_chat(messages)
        tokens, _, done = run(engine, messages, OFF, params)
        assert first["answer"] == tokens
        messages += [{"role": "assistant", "content": done.text},
                     {"role": "user", "content": question["turns"][1]}]
        assert second["prompt"] == engine.tokenize_chat(messages)
        assert second["answer"] == run(engine, messages, OFF, params)[0]
        # Beside the answers, each token's word, as the engine's n-gram lookup folds it
        fold = load_words(out)
        for token in first["prompt"] + first["answer"]:
            text = engine.target.piece(token).decode("utf-8", "replace").strip().lower()
            assert fold(token) == (text or token)
    finally:
        engine.close()
    assert not list(tmp_path.glob("*.partial"))


def test_bad_records_and_curves_are_refused_in_one_line(tmp_path):
    from draftlight.bench.replay import parse_curve
    for text, reason in (("{not json\n", "cannot read"), ('{"a": 1}\n', "not a recorded turn"),
                         ("\n", "no recorded answers")):
        path = tmp_path / "bad.jsonl"
        path.write_text(text)
        with pytest.raises(SystemExit, match=reason):
            load_records(path)
    with pytest.raises(SystemExit, match="cannot read"):
        load_records(tmp_path / "missing.jsonl.gz")
    (tmp_path / "bad.words.json.gz").write_bytes(b"not gzip")
    with pytest.raises(SystemExit, match="cannot read the recording's words"):
        load_words(tmp_path / "bad.jsonl.gz")
    assert load_words(tmp_path / "none.jsonl.gz") is None  # token ids alone
    for text in ("fast", "2=0.5", "1=1.0", "2=x"):
        with pytest.raises(SystemExit, match="--curve"):
            parse_curve(text)
    assert parse_curve("2=1.5,8=4").v[4] == pytest.approx(1.5 + 2 * (4 - 1.5) / 6, abs=1e-4)
