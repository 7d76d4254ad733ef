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
