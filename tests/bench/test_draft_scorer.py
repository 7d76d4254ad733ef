"""A draft model's greedy choice over auto's n-gram guess (app/draftlight/bench/draft_scorer.py),
checked where its answer is known: the bundled model scoring its own greedy answer must find,
at every step, exactly how far that answer follows the guess."""

from __future__ import annotations

import pytest

from draftlight.bench.draft_scorer import GuessScorer, replay_scored
from draftlight.bench.replay import CURVES, curve
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.llama.llama_backend import LlamaBackend

QUOTE = ("Repeat after me, word for word: the United States of America declared independence "
         "on the fourth of July 1776, and the Constitution of the United States was signed in "
         "Philadelphia in September 1787.")


@pytest.fixture(scope="module")
def own_answer(bundled_model):
    """The bundled model's greedy answer to a quote, decoded one token at a time."""
    model = LlamaBackend(bundled_model, LoadOptions(n_ctx=2048))
    try:
        prompt = model.tokenize(f"<|im_start|>user\n{QUOTE}<|im_end|>\n<|im_start|>assistant\n",
                                add_bos=False, special=True)
        logits, answer = model.eval(prompt), []
        for _ in range(64):
            answer.append(int(logits[-1].argmax()))
            logits = model.eval(answer[-1:])
    finally:
        model.close()
    return {"category": "summarization", "question_id": 1, "prompt": prompt, "answer": answer}


@pytest.fixture(scope="module")
def self_scorer(bundled_model):
    scorer = GuessScorer(bundled_model, bundled_model, n_ctx=2048)
    yield scorer
    scorer.close()


def test_a_model_scoring_its_own_answer_finds_how_far_each_guess_holds(own_answer, self_scorer):
    scored = replay_scored([own_answer], curve(CURVES["qwen1.5b-q4km-xeon"]), "end",
                           self_scorer, token_seconds=0.01)
    assert len(scored.pairs) >= 10, scored.pairs  # the answer quotes the message
    assert sum(r >= 1 for _, r in scored.pairs) >= 5
    # The scorer reads the context as text, tokenized again: where that differs from the
    # answer's own tokens it may stop a guess early at a near tie, never carry it past the
    # answer's departure (the answer is its own greedy choice).
    assert all(r_hat <= r for r_hat, r in scored.pairs), scored.pairs
    same = sum(r_hat == r for r_hat, r in scored.pairs)
    assert same >= 0.7 * len(scored.pairs), scored.pairs


def test_the_scorers_passes_are_charged_at_their_time(own_answer, self_scorer):
    costs = curve(CURVES["qwen1.5b-q4km-xeon"])
    cheap_target = replay_scored([own_answer], costs, "start", self_scorer, token_seconds=1e-4)
    dear_target = replay_scored([own_answer], costs, "start", self_scorer, token_seconds=1e4)
    assert cheap_target.free == dear_target.free  # the same decisions, from the same scores
    assert cheap_target.priced < 0.5 * cheap_target.free  # a scorer far dearer than a pass
    assert dear_target.priced == pytest.approx(dear_target.free, rel=1e-3)
    assert self_scorer.steps >= 1 and self_scorer.step_seconds > 0
