"""`draftlight bench`: a tiny smoke run on the real model, and exact aggregation."""

from __future__ import annotations

import json

import pytest

from draftlight.bench.report import build_report
from draftlight.bench.runner import RunLog, TurnResult, load_questions
from draftlight.cli import main
from draftlight.engine.auto.invariance import BatchDrift


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


def test_the_report_gives_the_price_of_autos_probes_per_category():
    """Exploring's price (issue 35): the share of auto's decoding time its probes took."""
    from draftlight.bench.report import markdown
    rows = [turn("plain", "creative", 100, 2.0), turn("auto", "creative", 100, 2.0),
            turn("plain", "quotes", 100, 2.0), turn("auto", "quotes", 100, 1.0)]
    rows[1].probe_seconds, rows[3].probe_seconds = 0.01, 0.0
    report = build_report(RunLog(rows, draft_kind="same vocabulary"))
    assert report["categories"]["creative"]["auto"]["probe_share"] == 0.005
    assert report["categories"]["quotes"]["auto"]["probe_share"] == 0.0
    assert report["overall"]["auto"]["probe_share"] == round(0.01 / 3.0, 4)
    assert report["overall"]["plain"]["probe_share"] is None
    text = markdown(report, "draftlight bench")
    assert "auto spent 0.33% of its decoding time probing" in text
    assert "creative 0.50%, quotes 0.00%" in text
    # without auto, no such line; nor without a draft model (n-gram lookup needs no probe)
    assert "Probing" not in markdown(build_report(RunLog(rows[::2] + [
        turn("ngram", "creative", 100, 1.0)], draft_kind="same vocabulary")), "draftlight bench")
    assert "Probing" not in markdown(build_report(RunLog(rows)), "draftlight bench")


def test_questions_in_the_wrong_format_are_refused_clearly(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question_id": 1, "turns": []}\n')
    with pytest.raises(ValueError, match="q.jsonl:1"):
        load_questions(bad)


def test_the_project_prompt_set_covers_the_categories():
    from draftlight.bench.runner import DEFAULT_QUESTIONS
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
    # The default target (the bundled model converted on first use) verifies batches
    # bit-identically: the report names its weight type and says so.
    from draftlight.store.default_model import DEFAULT_TYPE
    assert report["greedy_identity"].startswith("greedy identity exact")
    text = (out / "report.md").read_text()
    assert "Target: llama" in text and f"{DEFAULT_TYPE}; greedy identity exact" in text
    assert report["target"].endswith(DEFAULT_TYPE) and report["cost_curve"]["2"] > 1.0
    assert "v(2)=" in text and "projection, flat v(k)" in text
    assert report["overall"]["auto"]["flat_cost_projection"] >= 1.0
    assert set(report["ngram_ceiling"]) == {"document_qa", "casual_chat", "overall"}
    assert all(value >= 1.0 for value in report["ngram_ceiling"].values())
    assert "n-gram ceiling" in (out / "report.md").read_text()
    assert (out / "report.png").stat().st_size > 1000
    # the draft model's accepted tokens are its guesses; a quote's copies come from the prompt
    assert report["overall"]["draft"]["accepted_by_origin"]["model"] == 1.0
    shares = report["categories"]["document_qa"]["ngram"]["accepted_by_origin"]
    assert shares and shares["prompt"] + shares["this reply"] == pytest.approx(1.0, abs=0.002)
    assert report["overall"]["plain"]["accepted_by_origin"] == {}
    assert "Where the accepted drafts came from" in text
    assert 0.0 <= report["overall"]["auto"]["probe_share"] < 0.05
    assert "Probing: auto spent" in text


def test_ngram_oracle_drafts_exactly_the_accepted_runs_and_only_when_they_pay():
    from draftlight.bench.ceiling import ngram_oracle_cost
    from draftlight.engine.auto.costs import BatchCosts
    from draftlight.engine.step.drafters import NgramDrafter

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


class ScriptedTarget:
    """Just enough of a backend for explain_divergence: a token cache, and logits that are 0
    but `gap` for `favoured` after exactly `at_prefix`, and all 0 elsewhere (so a wrong prefix
    shows up as a gap of 0)."""

    n_vocab = 128

    def __init__(self, at_prefix=(), favoured=0, gap=0.0):
        self.tokens: list[int] = []
        self.at_prefix, self.favoured, self.gap = list(at_prefix), favoured, gap

    def eval(self, tokens, n_logits=1):
        import numpy as np
        rows = []
        for i, token in enumerate(tokens):
            self.tokens.append(token)
            if i >= len(tokens) - n_logits:
                row = np.zeros(self.n_vocab, np.float32)
                if self.tokens == self.at_prefix:
                    row[self.favoured] = self.gap
                rows.append(row)
        return np.stack(rows) if rows else np.empty((0, self.n_vocab), np.float32)

    def truncate(self, n):
        del self.tokens[n:]

    def checkpoint(self, span=0):
        pass

    @staticmethod
    def piece(token):
        return f"w{token}".encode()


class ScriptedEngine:
    """Answers every prompt with PLAIN_ANSWER, except where `answers` maps (engine mode, last
    user text) to other tokens; records which mode ran when."""

    costs = None
    drift = BatchDrift(0.0)  # batched and one-token logits agree, as on the bundled model

    def __init__(self, answers=None, target=None):
        self.calls: list[str] = []
        self.answers = answers or {}
        self.target = target or ScriptedTarget()

    @staticmethod
    def tokenize_chat(messages):
        return [ord(c) % 100 for m in messages for c in m["content"]]

    def generate(self, messages, params, mode):
        from draftlight.engine.reply.events import Done, Stats, TextPiece
        self.calls.append(str(mode))  # the modes' text: what the assertions read
        tokens = self.answers.get((str(mode), messages[-1]["content"]), PLAIN_ANSWER)
        for token in tokens:
            yield TextPiece(f"w{token}", "target", 0, token)
        yield Done("".join(f"w{t}" for t in tokens),
                   Stats(mode=mode, new_tokens=len(tokens), seconds=0.3, target_passes=3))


PLAIN_ANSWER = (5, 6, 7, 8)


def test_bench_rotates_the_mode_order_and_still_compares_with_plain():
    from draftlight.bench.runner import run_benchmark
    from draftlight.engine.core.sampling import SamplingParams
    engine = ScriptedEngine()
    questions = [{"question_id": n, "category": "c", "turns": ["Hi", "More"]} for n in range(3)]
    log = run_benchmark(engine, questions, ["plain", "ngram", "auto"], SamplingParams())
    firsts = engine.calls[::3]  # the first mode of each turn
    assert firsts == ["off", "off", "ngram", "ngram", "auto", "auto"]  # plain runs as "off"
    assert [r.mode for r in log.results[:3]] == ["plain", "ngram", "auto"]
    assert all(r.identical_to_plain for r in log.results if r.mode != "plain")


def test_bench_reports_where_a_greedy_run_left_plain_decoding():
    from draftlight.bench.report import build_report, markdown
    from draftlight.bench.runner import run_benchmark
    from draftlight.engine.core.sampling import SamplingParams
    questions = [{"question_id": 0, "category": "c", "turns": ["Hi", "More"]},
                 {"question_id": 1, "category": "c", "turns": ["Hello", "Again"]}]
    # ngram answers "Again" with 9 where plain said 7 (token 2); auto stops early on "Hello".
    answers = {("ngram", "Again"): (5, 6, 9, 8), ("auto", "Hello"): (5, 6)}
    history = "Hello" + "".join(f"w{t}" for t in PLAIN_ANSWER)  # later turns follow plain
    prefix = ScriptedEngine.tokenize_chat([{"content": history + "Again"}]) + [5, 6]
    engine = ScriptedEngine(answers, ScriptedTarget(prefix, favoured=7, gap=1.25))

    log = run_benchmark(engine, questions, ["plain", "ngram", "auto"], SamplingParams())

    same = {(r.question_id, r.turn, r.mode): r.identical_to_plain for r in log.results}
    differing = {key for key, value in same.items() if value is False}
    assert differing == {(1, 1, "ngram"), (1, 0, "auto")}
    assert {key for key, value in same.items() if value is True} == {
        (q, t, m) for q in (0, 1) for t in (0, 1) for m in ("ngram", "auto")} - differing
    why = {(r.question_id, r.turn, r.mode): r.divergence for r in log.results if r.divergence}
    assert why == {(1, 1, "ngram"): "first difference at token 2: 'w7' vs 'w9', "
                                    "target logit gap 1.25",
                   (1, 0, "auto"): "length"}  # a prefix of plain's answer: no token differs

    report = build_report(log)
    assert report["overall"]["ngram"]["identical_to_plain"] == 0.75
    assert report["overall"]["auto"]["identical_to_plain"] == 0.75
    assert [(d["question_id"], d["turn"], d["mode"]) for d in report["divergences"]] == [
        (1, 0, "auto"), (1, 1, "ngram")]
    lines = markdown(report, "bench").splitlines()
    assert "- c #1 turn 1 (ngram): first difference at token 2: 'w7' vs 'w9', " \
           "target logit gap 1.25" in lines
    assert "- c #1 turn 0 (auto): length" in lines
    overall = [line.split(" | ") for line in lines if line.startswith(("| plain |", "| ngram |",
                                                                       "| auto |"))]
    assert [(row[0], row[4]) for row in overall] == [
        ("| plain", "100%"), ("| ngram", "75%"), ("| auto", "75%")]  # "identical to plain"


def test_repeats_run_the_whole_set_again_and_tag_each_row():
    from draftlight.bench.runner import run_benchmark
    from draftlight.engine.core.sampling import SamplingParams
    questions = [{"question_id": i, "category": "c", "turns": ["Hi"]} for i in range(3)]
    engine = ScriptedEngine()
    log = run_benchmark(engine, questions, ["plain", "ngram"], SamplingParams(), repeats=2)
    assert len(log.results) == 3 * 2 * 2
    assert sorted({(r.question_id, r.repeat) for r in log.results}) == [
        (q, rep) for q in range(3) for rep in range(2)]
    assert engine.calls[:2] == ["off", "ngram"] and engine.calls[6:8] == ["ngram", "off"]


def speedup_rows(ratios):
    """One plain and one ngram row per question; ngram is `ratio` times faster."""
    rows = []
    for q, ratio in enumerate(ratios):
        rows.append(TurnResult(q, "c", 0, "plain", "", [], new_tokens=100, decode_seconds=1.0))
        rows.append(TurnResult(q, "c", 0, "ngram", "", [], new_tokens=100,
                               decode_seconds=1.0 / ratio))
    return rows


def test_the_speedup_interval_is_as_wide_as_the_questions_disagree():
    from draftlight.bench.report import speedup_interval
    same = speedup_rows([1.2] * 8)
    low, high = speedup_interval([r for r in same if r.mode == "ngram"],
                                 [r for r in same if r.mode == "plain"])
    assert low == pytest.approx(1.2) and high == pytest.approx(1.2)
    mixed = speedup_rows([0.8, 1.6, 0.9, 1.5, 1.0, 1.4, 0.85, 1.55])
    report = build_report(RunLog(results=mixed))
    figures = report["categories"]["c"]["ngram"]
    low, high = figures["speedup_ci"]
    assert low < figures["speedup_vs_plain"] < high and high - low > 0.2
    assert low > 0.8 and high < 1.6


def test_the_flat_cost_projection_counts_passes_and_draft_model_cost():
    from draftlight.bench.report import flat_cost_projection
    plain = [TurnResult(1, "c", 0, "plain", "", [], new_tokens=100, decode_seconds=1.0,
                        target_passes=100)]
    ngram = [TurnResult(1, "c", 0, "ngram", "", [], new_tokens=100, decode_seconds=1.2,
                        drafted=80, accepted=60, target_passes=40)]
    assert flat_cost_projection(ngram, plain, 0.0) == 2.5  # 100 tokens in 40 passes
    # a draft model at a quarter of the target's cost adds 80 x 0.25 = 20 passes' worth
    assert flat_cost_projection(ngram, plain, 0.25) == pytest.approx(100 / 60, abs=1e-3)
    report = build_report(RunLog(results=plain + ngram, target="llama 135M Q4_0",
                                 cost_curve={2: 1.5, 4: 2.2}))
    assert report["overall"]["ngram"]["flat_cost_projection"] == 2.5
    from draftlight.bench.report import markdown
    text = markdown(report, "draftlight bench")
    assert "v(2)=1.50, v(4)=2.20" in text and "2.50x" in text


def test_limit_keeps_the_first_questions_of_each_category_in_order():
    from draftlight.bench.runner import first_of_each_category
    questions = [{"category": c, "question_id": i} for i, c in enumerate("aabacbb")]
    kept = first_of_each_category(questions, 2)
    assert [q["question_id"] for q in kept] == [0, 1, 2, 4, 5]


def test_documents_questions_attach_their_files_and_a_missing_one_is_named(tmp_path):
    """The documents category (issue 39, part 8): its questions attach files shipped with the
    bench (a path from the questions file's folder, else from the package's), under the header
    the window uses; a file that cannot be attached stops the load with its line number."""
    from draftlight.bench.runner import load_questions
    from draftlight.commands.bench import DEFAULT_QUESTIONS
    documents = [q for q in load_questions(DEFAULT_QUESTIONS) if q["category"] == "documents"]
    assert len(documents) == 7
    first = [q["turns"][0] for q in documents]
    assert all(turn.startswith("Attached file: ") for turn in first)
    assert any(turn.startswith("Attached file: minutes.pdf\n```\n--- page 1 ---")
               for turn in first)
    assert any(turn.startswith("Attached file: units.py\n") for turn in first)
    mine = tmp_path / "q.jsonl"
    (tmp_path / "notes.txt").write_text("Ship on Friday.\n")
    mine.write_text('{"turns": ["When?"], "attach": ["notes.txt"]}\n'
                    '{"turns": ["Hi"], "attach": ["gone.txt"]}\n')
    with pytest.raises(ValueError, match=r"q.jsonl:2: .*gone.txt: the file is no longer there"):
        load_questions(mine)
    mine.write_text('{"turns": ["When?"], "attach": ["notes.txt"]}\n')
    [question] = load_questions(mine)
    assert question["turns"] == ["Attached file: notes.txt\n```\nShip on Friday.\n```\n\nWhen?"]


def test_the_report_gives_autos_speed_over_the_fastest_fixed_mode_per_category():
    """Auto's regret (issue 74): per category, its speed over the best of plain, n-gram and
    draft there, with the interval, so a category where auto trails the best shows it."""
    from draftlight.bench.report import markdown
    rows = []
    for q in range(4):  # copy: n-gram twice plain's speed, auto 1.8x; free writing: plain best
        rows += [TurnResult(q, "copy", 0, "plain", "", [], new_tokens=100, decode_seconds=2.0),
                 TurnResult(q, "copy", 0, "ngram", "", [], new_tokens=100, decode_seconds=1.0),
                 TurnResult(q, "copy", 0, "auto", "", [], new_tokens=90, decode_seconds=1.0),
                 TurnResult(q, "free", 0, "plain", "", [], new_tokens=100, decode_seconds=1.0),
                 TurnResult(q, "free", 0, "ngram", "", [], new_tokens=100, decode_seconds=1.25),
                 TurnResult(q, "free", 0, "auto", "", [], new_tokens=99, decode_seconds=1.0)]
    report = build_report(RunLog(results=rows))
    copy, free = report["categories"]["copy"]["auto"], report["categories"]["free"]["auto"]
    assert (copy["best_fixed"], copy["vs_best_fixed"]) == ("ngram", 0.9)
    assert copy["vs_best_fixed_ci"] == [0.9, 0.9]
    assert (free["best_fixed"], free["vs_best_fixed"]) == ("plain", 0.99)
    assert "vs_best_fixed" not in report["categories"]["copy"]["ngram"]
    text = markdown(report, "draftlight bench")
    assert "| auto / best fixed |" in text
    assert "0.90x of ngram (0.90–0.90)" in text and "0.99x of plain" in text
    # without auto, no such column
    assert "best fixed" not in markdown(
        build_report(RunLog([r for r in rows if r.mode != "auto"])), "draftlight bench")
