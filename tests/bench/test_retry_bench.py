"""The retry bench (issue 40, part 6): a question answered again with its first answer as the
draft. The typo edit is one small change; on the real bundled model a greedy retry, unchanged or
after the edit, is plain decoding's text, and an unchanged one is drafted mostly by the first
answer (the prediction alone; auto takes as much as pays on the machine)."""

from __future__ import annotations

import json
import re

from draftlight.bench.retry import main, with_typo


def test_the_edit_swaps_two_letters_of_the_longest_word_near_the_end():
    assert with_typo("What is the capital of France?") == "What is the cpaital of France?"
    assert with_typo("1" * 1000 + " tell me about penguins") == \
        "1" * 1000 + " tell me about pneguins"
    assert with_typo("Hi! 2+2?") == "Hi! 2+2?"  # nothing to misspell: asked as it is


def test_a_greedy_retry_is_plain_decodings_answer_drafted_by_the_first(bundled_model, tmp_path,
                                                                       capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(q) for q in [
        {"question_id": 1, "category": "factual_qa",
         "turns": ["Name the largest planet of the solar system and say why it is so large."]},
        {"question_id": 2, "category": "summarization",
         "turns": ["Summarise in one sentence: The river flooded the valley every spring, so "
                   "the villagers built their houses on the hills above it."]}]))
    assert main(["--target", str(bundled_model), "--questions", str(questions), "--limit", "2",
                 "--max-tokens", "32", "--temps", "0"]) == 0
    out = capsys.readouterr().out
    assert '{"identical_at_temperature_0": true}' in out
    unchanged = out[out.index("unchanged, temperature 0"):out.index("edited, temperature 0")]
    shares = {name: int(share) for name, share in
              re.findall(r"^  (retry, off|retry|plain) .*? (\d+)% +2/2$", unchanged, re.M)}
    # How much of it is drafted depends on what drafting costs on the machine: auto took none on
    # a slowed one; the prediction alone drafts the length that pays most on this machine's
    # curve (Engine.prediction_tokens), 74% of the answer on a quiet 2-core machine and 51% when
    # held to one core's worth, where one token per pass paid most. One per pass is its floor.
    assert shares["plain"] == 0 and shares["retry, off"] >= 40
