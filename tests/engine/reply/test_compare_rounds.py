"""Compare times each side over several rounds in alternating order and says when the rounds
cannot be trusted (issue 36, item 3). A scripted engine whose replies take the times a test
injects: a quiet machine, a busy one, and a speedup that is not there."""

from __future__ import annotations

from draftlight.engine.reply.compare import Comparison, compare
from draftlight.engine.reply.events import Done, Stats, TextPiece
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import NGRAM, OFF, Mode


class TimedEngine:
    """Answers "a b c" in every mode; each call's decode time is the next of `times[mode]`."""

    def __init__(self, times: dict[Mode, list[float]]) -> None:
        self.times = {mode: list(t) for mode, t in times.items()}
        self.order: list[Mode] = []

    def generate(self, messages, params, mode):
        self.order.append(mode)
        for i, word in enumerate(("a", " b", " c")):
            yield TextPiece(word, "target", i, i + 10)
        seconds = self.times[mode].pop(0)
        yield Done("a b c", Stats(mode=mode, new_tokens=3, prefill_seconds=0.5,
                                  seconds=0.5 + seconds))


def result(times, rounds=3) -> tuple[Comparison, list[Mode]]:
    engine = TimedEngine(times)
    events = list(compare(engine, [{"role": "user", "content": "x"}], SamplingParams(), NGRAM,
                          rounds))
    return events[-1], engine.order


def test_rounds_alternate_and_the_speedup_is_their_median_in_decoding_time():
    comparison, order = result({OFF: [2.0, 2.1, 2.0], NGRAM: [1.0, 1.05, 0.98]})
    assert order == [OFF, NGRAM, NGRAM, OFF, OFF, NGRAM]
    assert comparison.plain_runs == (2.0, 2.1, 2.0) and comparison.identical
    assert abs(comparison.speedup - 2.0) < 1e-9  # median of 2.0, 2.0, 2.04; prompt time apart
    assert comparison.interval[0] <= 2.0 <= comparison.interval[1]
    assert comparison.inconclusive == ""
    assert "2.00x (rounds 2.00-2.04x)" in comparison.summary()


def test_a_busy_machine_makes_it_inconclusive():
    comparison, _ = result({OFF: [2.0, 5.0, 2.1], NGRAM: [0.4, 1.0, 1.1]})
    assert "differ by 175%" in comparison.inconclusive  # speculation: 0.4 to 1.1 s
    assert "inconclusive" in comparison.summary()


def test_rounds_that_disagree_on_the_winner_are_inconclusive():
    comparison, _ = result({OFF: [1.0, 1.0, 1.0], NGRAM: [0.95, 1.05, 1.0]})
    assert comparison.inconclusive == "the rounds disagree on which side is faster"


def test_one_round_is_said_to_be_one():
    comparison, order = result({OFF: [2.0], NGRAM: [1.0]}, rounds=1)
    assert order == [OFF, NGRAM] and comparison.inconclusive == "timed once"
