"""A short run of the serve load test (app/draftlight/bench/serve_load.py) on the bundled model: 8 clients
for 10 s against a queue of 2, so that some are told "busy". The long run (32 clients, 60 s) is
the documented command in docs/serve.md."""

from __future__ import annotations

import pytest

from draftlight.bench.serve_load import KINDS, measure
from tests.support.waiting import scaled

pytestmark = pytest.mark.slow


def test_under_load_no_reply_is_lost_or_mixed_up_and_busy_means_a_full_queue(bundled_model):
    figures = measure(clients=8, seconds=10, queue_size=2, target=str(bundled_model),
                      mode="ngram")  # no cost timing at start
    assert figures.other_errors == []
    assert all(figures.completed[kind] > 0 for kind in KINDS), figures.completed
    assert figures.mismatched == 0
    assert figures.busy > 0 and figures.busy_within_bound == 0  # 8 clients, room for 3
    # A dropped stream frees its slot within a pass or two: 250 ms on the machines the suite was
    # written on; 304 ms in a run held to one core's worth of CPU (issue 41), so it is scaled
    assert figures.free_after_disconnect_ms < scaled(250)
    assert figures.rss_after_mb < figures.rss_before_mb + 100
