"""`draftlight bench`: a tiny smoke run on the real model, and exact aggregation."""

from __future__ import annotations

import json

import pytest

from app.bench.report import build_report
from app.bench.runner import RunLog, TurnResult, load_questions
from app.cli import main


def turn(mode, category, tokens, seconds, same=None, drafted=0, accepted=0, passes=0):
    return TurnResult(1, category, 0, mode, "x", [], tokens, seconds, drafted, accepted,
                      passes or tokens, same)


def test_report_aggregates_ratios_per_category_and_overall():
    log = RunLog([turn("plain", "a", 100, 2.0), turn("ngram", "a", 100, 1.0, True, 50, 40, 40),
                  turn("plain", "b", 100, 1.0), turn("ngram", "b", 100, 2.0, False, 10, 0, 100)],
                 {"plain": 500.0, "ngram": 510.0})
    report = build_report(log)
    a = report["categories"]["a"]["ngram"]
    assert a["speedup_vs_plain"] == 2.0 and a["acceptance_rate"] == 0.8
    assert a["mean_accepted_length"] == 2.5 and a["identical_to_plain"] == 1.0
    assert report["categories"]["b"]["ngram"]["speedup_vs_plain"] == 0.5
    overall = report["overall"]["ngram"]
    assert overall["speedup_vs_plain"] == 1.0 and overall["identical_to_plain"] == 0.5
    assert report["peak_rss_mb"] == {"plain": 500.0, "ngram": 510.0}


def test_questions_in_the_wrong_format_are_refused_clearly(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question_id": 1, "turns": []}\n')
    with pytest.raises(ValueError, match="q.jsonl:1"):
        load_questions(bad)


def test_the_project_prompt_set_covers_the_categories():
    from app.bench.runner import DEFAULT_QUESTIONS
    questions = load_questions(DEFAULT_QUESTIONS)
    categories = {}
    for q in questions:
        categories[q["category"]] = categories.get(q["category"], 0) + 1
    assert len(categories) >= 8 and min(categories.values()) >= 6


@pytest.mark.slow
def test_bench_smoke_run_writes_the_reports(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"question_id": 1, "category": "document_qa", "turns": [
            "Quote the first sentence: 'The sky is blue. Grass is green.'"]}) + "\n" +
        json.dumps({"question_id": 2, "category": "casual_chat",
                    "turns": ["Hi!", "How are you?"]}) + "\n")
    out = tmp_path / "out"
    code = main(["bench", "--questions", str(questions), "--modes",
                 "plain,ngram,draft,auto,lcp-pld", "--max-tokens", "12", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["overall"]) == {"plain", "ngram", "draft", "auto", "lcp-pld"}
    for mode in ("ngram", "draft", "auto"):
        figures = report["overall"][mode]
        assert figures["identical_to_plain"] == 1.0, report["divergences"]
        assert figures["tokens_per_second"] > 0
    assert set(report["categories"]) == {"document_qa", "casual_chat"}
    assert set(report["peak_rss_mb"]) == set(report["overall"])
    assert "| document_qa |" in (out / "report.md").read_text()
    assert set(report["ngram_ceiling"]) == {"document_qa", "casual_chat", "overall"}
    assert all(value >= 1.0 for value in report["ngram_ceiling"].values())
    assert "n-gram ceiling" in (out / "report.md").read_text()
    assert (out / "report.png").stat().st_size > 1000


def test_ngram_oracle_drafts_exactly_the_accepted_runs_and_only_when_they_pay():
    from app.bench.ceiling import ngram_oracle_cost
    from app.engine.costs import BatchCosts
    from app.engine.drafters import NgramDrafter

    passage = [10, 11, 12, 13, 14, 15, 16, 17]
    prompt = [1, 2] + passage + [3, 4]
    answer = [10, 11, 12, 13, 14, 15, 16, 17, 5]  # copies the passage, then leaves it
    # Free verification (a GPU-like curve): the first token from the target alone (no match
    # yet), then "11 .. 17" drafted and accepted after "10", bonus 5: 2 passes.
    flat = BatchCosts({1: 1.0, 16: 1.0}, 0.01)
    assert ngram_oracle_cost(prompt, answer, flat, 16, NgramDrafter(2, 1)) == 2.0
    # When a pass over k tokens costs k, drafting never pays: one pass per token.
    linear = BatchCosts({1: 1.0, 2: 2.0, 16: 16.0}, 0.01)
    assert ngram_oracle_cost(prompt, answer, linear, 16, NgramDrafter(2, 1)) == len(answer)


class ScriptedEngine:
    """Answers every prompt with the same tokens and records which mode ran when."""

    costs = None

    def __init__(self):
        self.calls: list[str] = []

    def generate(self, messages, params, mode):
        from app.engine.events import Done, Stats, TextPiece
        self.calls.append(mode)
        for token in (5, 6, 7):
            yield TextPiece("t", "target", 0, token)
        yield Done("ttt", Stats(mode=mode, new_tokens=3, seconds=0.3, target_passes=3))


def test_bench_rotates_the_mode_order_and_still_compares_with_plain():
    from app.bench.runner import run_benchmark
    from app.engine.sampling import SamplingParams
    engine = ScriptedEngine()
    questions = [{"question_id": n, "category": "c", "turns": ["Hi", "More"]} for n in range(3)]
    log = run_benchmark(engine, questions, ["plain", "ngram", "auto"], SamplingParams())
    firsts = engine.calls[::3]  # the first mode of each turn
    assert firsts == ["off", "off", "ngram", "ngram", "auto", "auto"]  # plain runs as "off"
    assert [r.mode for r in log.results[:3]] == ["plain", "ngram", "auto"]
    assert all(r.identical_to_plain for r in log.results if r.mode != "plain")
