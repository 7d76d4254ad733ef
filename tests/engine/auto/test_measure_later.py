"""A model is usable before it is measured (issue 54, item 1): Engine(measure_later=True) answers
at once with costs.PRIOR, and measure_next() measures one step at a time, after the
conversation's cached tokens, stoppable by a request that arrives."""

from __future__ import annotations

import pytest

from draftlight.engine.auto.costs import PRIOR, measure, token_seconds
from draftlight.engine.reply.generator import Engine
from draftlight.engine.auto.invariance import measure_drift
from draftlight.engine.auto.measuring import (DRAFT_SPEED, GREEDY_CHECK, PASS_COSTS,
                                         MeasurementInterrupted)
from tests.support.fake_backend import FakeChatModel, scripted_costs
from tests.support.fake_engine import run
from draftlight.modes import AUTO

MOTTO = b"The quick brown fox jumps over the lazy dog, and then it rests."
QUESTION = [{"role": "user", "content": "Say the motto."}]


class Counted:
    """The real measurements, counting how often each ran (and each pass they made)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def costs(self, model, probe, role):
        self.calls.append(role)
        return measure(model, probe), token_seconds(model, probe)

    def drift(self, model, probe):
        self.calls.append("drift")
        return measure_drift(model, probe)


def later_engine(counted: Counted, draft=None) -> Engine:
    return Engine(FakeChatModel(lambda c: MOTTO), draft, cost_source=counted.costs,
                  drift_source=counted.drift, measure_later=True)


def test_a_model_answers_before_anything_is_measured_and_auto_uses_the_prior():
    counted = Counted()
    engine = later_engine(counted)
    _, done = run(engine, QUESTION, mode=AUTO)
    assert done.text == MOTTO.decode()
    assert counted.calls == []  # nothing measured on the way to the reply
    assert engine.pending_measurements() == (GREEDY_CHECK, PASS_COSTS)
    assert engine.prepare_auto().costs.measured is PRIOR
    assert done.stats.batch_drift is None and done.stats.identity_note == ""
    assert done.stats.untimed


def test_measuring_after_a_reply_keeps_the_conversation_cached():
    counted = Counted()
    engine = later_engine(counted)
    run(engine, QUESTION, mode=AUTO)
    cached = engine.target.tokens
    assert engine.measure_next() == GREEDY_CHECK
    assert engine.target.tokens == cached
    assert engine.measure_next() == PASS_COSTS
    assert engine.target.tokens == cached and engine.measure_next() == ""
    assert counted.calls == ["drift", "target"]
    assert engine.drift.exact and engine.prepare_auto().costs.measured is engine.costs
    # the next turn reads only what is new
    again = QUESTION + [{"role": "assistant", "content": MOTTO.decode()},
                        {"role": "user", "content": "Again."}]
    _, done = run(engine, again, mode=AUTO)
    assert done.stats.reused_prompt_tokens >= len(cached) - 1
    assert done.stats.batch_drift == 0.0 and not done.stats.untimed


def test_a_request_that_arrives_stops_a_measurement_which_runs_again_later():
    counted = Counted()
    engine = later_engine(counted)
    run(engine, QUESTION, mode=AUTO)
    cached = engine.target.tokens
    passes = []
    with pytest.raises(MeasurementInterrupted):
        engine.measure_next(should_cancel=lambda: (passes.append(1), len(passes) > 5)[1])
    assert len(passes) == 6 and engine.drift is None  # nothing kept of the stopped step
    assert engine.target.tokens == cached
    assert engine.pending_measurements()[0] == GREEDY_CHECK
    engine.measure()
    assert engine.pending_measurements() == () and engine.target.tokens == cached


def test_a_small_window_is_emptied_for_the_probe_and_answers_again_after():
    counted = Counted()
    engine = Engine(FakeChatModel(lambda c: MOTTO, n_ctx=480), cost_source=counted.costs,
                    drift_source=counted.drift, measure_later=True)
    run(engine, QUESTION, mode=AUTO)
    engine.measure()  # no room after the conversation: measured from an empty cache
    assert engine.target.tokens == [] and engine.pending_measurements() == ()
    _, done = run(engine, QUESTION, mode=AUTO)
    assert done.text == MOTTO.decode()


def test_a_draft_model_joins_auto_only_once_it_is_timed():
    calls = []

    def costs(model, probe, role):  # a GPU-like curve and a draft 5x faster: drafting pays
        calls.append(role)
        return scripted_costs(model, probe, role)

    engine = Engine(FakeChatModel(lambda c: MOTTO), FakeChatModel(lambda c: MOTTO),
                    cost_source=costs, measure_later=True)
    assert len(engine.prepare_auto().candidates) == 1  # n-gram lookup only: the draft's
    assert engine.pending_measurements() == (GREEDY_CHECK, PASS_COSTS, DRAFT_SPEED)  # cost unknown
    engine.measure()
    assert calls == ["target", "draft"]
    assert len(engine.prepare_auto().candidates) == 2 and engine.draft_cost == pytest.approx(0.2)


def test_without_measure_later_everything_is_measured_before_the_first_reply():
    counted = Counted()
    engine = Engine(FakeChatModel(lambda c: MOTTO), cost_source=counted.costs,
                    drift_source=counted.drift)
    assert counted.calls == ["drift"]
    run(engine, QUESTION, mode=AUTO)
    assert counted.calls == ["drift", "target"] and engine.pending_measurements() == ()
