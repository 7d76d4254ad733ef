"""A cost curve timed on a busy machine is timed again once the machine is quieter (costs.QUIETER):
auto, which drafts nothing under a curve that prices drafts too high, would never run the passes
that correct it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from draftlight.engine.auto import costs
from draftlight.engine.core.load_options import LoadOptions


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


class TimedBackend:
    """What cached_costs needs of a loaded model; a pass of k tokens advances the clock by
    `seconds(k)`."""

    def __init__(self, path: Path, clock: Clock, seconds) -> None:
        self.path, self.clock, self.seconds = path, clock, seconds
        self.options = LoadOptions(n_ctx=1024)
        self.n_ctx = 1024
        self.passes = 0

    def eval(self, tokens, n_logits=1):
        self.passes += 1
        self.clock.now += self.seconds(len(tokens))
        return np.zeros((n_logits, 8), dtype=np.float32)

    def truncate(self, n):
        pass

    def checkpoint(self, span=0):
        pass


def busy(k):  # another program shares the cores: batches cost far more than one token
    return 0.03 * (1 + 1.6 * (k - 1))


def quiet(k):
    return 0.01 * (1 + 0.35 * (k - 1))


@pytest.fixture
def model_file(tmp_path, isolated_home):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    return path


def time_curve(model_file, monkeypatch, seconds, load):
    clock = Clock()
    monkeypatch.setattr(costs.time, "perf_counter", clock)
    monkeypatch.setattr(costs, "machine_load", lambda: load)
    backend = TimedBackend(model_file, clock, seconds)
    curve, _ = costs.cached_costs(backend, list(range(50)), "target")
    return curve, backend.passes


def test_a_curve_timed_busy_is_timed_again_when_the_machine_is_quieter(model_file, monkeypatch):
    busy_curve, passes = time_curve(model_file, monkeypatch, busy, load=1.5)
    assert passes and busy_curve(2) == pytest.approx(2.6, rel=0.01)
    # As busy as then (or busier): the cache answers, nothing is timed.
    again, passes = time_curve(model_file, monkeypatch, quiet, load=1.2)
    assert passes == 0 and again.v == busy_curve.v
    # Quieter: timed again, each k the cheaper figure, and kept with the quieter load.
    better, passes = time_curve(model_file, monkeypatch, quiet, load=0.3)
    assert passes and better(2) == pytest.approx(1.35, rel=0.01)
    assert better(8) == pytest.approx(1 + 0.35 * 7, rel=0.01)
    assert better.token_seconds == pytest.approx(0.01)
    assert costs.measured_verify_cost(model_file) == better(8)
    # Busy again later: the quiet figures stay.
    kept, passes = time_curve(model_file, monkeypatch, busy, load=1.5)
    assert passes == 0 and kept.v == better.v


def test_a_quieter_timing_never_raises_a_figure(model_file, monkeypatch):
    first, _ = time_curve(model_file, monkeypatch, quiet, load=1.0)
    later, passes = time_curve(model_file, monkeypatch, busy, load=0.2)  # a burst mid-timing
    assert passes and later.v == first.v
    assert all(later.v[a] <= later.v[b] for a, b in zip(sorted(later.v), sorted(later.v)[1:]))


def test_where_the_system_gives_no_load_a_curve_is_timed_once(model_file, monkeypatch):
    first, passes = time_curve(model_file, monkeypatch, busy, load=None)
    assert passes
    again, passes = time_curve(model_file, monkeypatch, quiet, load=None)
    assert passes == 0 and again.v == first.v


class Interrupted(Exception):
    pass


def test_a_timing_cut_short_resumes_from_its_finished_rounds(model_file, monkeypatch):
    """Issue 74: a request, a crash or a model change that stops the timing of passes loses at
    most the round under way; the rounds done already price auto's drafts and the timing goes
    on from them instead of starting again."""
    clock = Clock()
    monkeypatch.setattr(costs.time, "perf_counter", clock)
    monkeypatch.setattr(costs, "machine_load", lambda: 0.5)
    whole = TimedBackend(model_file, clock, quiet)
    full, _ = costs.cached_costs(whole, list(range(50)), "target")
    from draftlight.engine.core.disk_cache import store_cached
    store_cached(costs._costs_key(whole, "target"), {})  # forget it: time anew, cut short
    per_round = len(costs.MEASURED_K)

    class CutShort(TimedBackend):
        def eval(self, tokens, n_logits=1):
            if self.passes == 2 + 2 * per_round + 3:  # context, warm-up, 2 rounds, 3 passes
                raise Interrupted
            return super().eval(tokens, n_logits)

    with pytest.raises(Interrupted):
        costs.cached_costs(CutShort(model_file, clock, quiet), list(range(50)), "target")
    partial, retime = costs.known_costs(whole, "target")
    assert retime and partial.v == pytest.approx(full.v)  # two rounds price drafts already
    resumed = TimedBackend(model_file, clock, quiet)
    curve, _ = costs.cached_costs(resumed, list(range(50)), "target")
    assert resumed.passes == 2 + (costs.REPEATS - 2) * per_round  # only the rounds left
    assert curve.v == pytest.approx(full.v)
    # finished: the next timing (a quieter machine's) starts from its first round again
    assert costs._resumed(costs._partial_key(whole))[1] == 0
