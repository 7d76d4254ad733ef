"""On a fresh home auto drafts a certain copy before this machine's passes are timed (issue 74):
the README's demo flashes in auto, after a first "hi" and as the first message, while the
background timing has not run; and the text is plain decoding's."""

from __future__ import annotations

import pytest

from draftlight.engine.auto.cost_curve import OnlineCosts
from draftlight.engine.auto.measuring import PASS_COSTS
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.reply.generator import Engine
from tests.support.fake_engine import run
from draftlight.modes import AUTO, OFF

DEMO = "Repeat after me: the United States of America declared independence in 1776."
GREEDY = SamplingParams(temperature=0.0, max_tokens=40)


@pytest.fixture
def fresh_engine(bundled_model, tmp_path, monkeypatch):
    """The bundled model, nothing measured on this machine yet (a measurements file of its own).
    Auto's passes do not correct the prior here: what is checked is what the prior decides,
    not how busy the machine running the suite is (on a loaded one its passes rightly price
    drafts out within a reply: OnlineCosts.PRIOR_SEEN)."""
    from draftlight.engine.core.disk_cache import FILE_VARIABLE
    monkeypatch.setenv(FILE_VARIABLE, str(tmp_path / "measurements.json"))
    monkeypatch.setattr(OnlineCosts, "PRIOR_SEEN", 10**9)
    engine = Engine.load(bundled_model, measure_later=True)
    yield engine
    engine.close()


def test_the_readme_demo_flashes_in_auto_before_anything_is_timed(fresh_engine):
    hi = [{"role": "user", "content": "hi"}]
    _, greeting = run(fresh_engine, hi, GREEDY, AUTO)
    after_hi = hi + [{"role": "assistant", "content": greeting.text},
                     {"role": "user", "content": DEMO}]
    for messages in (after_hi, [{"role": "user", "content": DEMO}]):
        _, auto = run(fresh_engine, messages, GREEDY, AUTO)
        assert auto.stats.untimed and PASS_COSTS in fresh_engine.pending_measurements()
        assert auto.stats.accepted >= 4, auto.stats  # a run of the copy flashed in
        _, plain = run(fresh_engine, messages, GREEDY, OFF)
        assert auto.text == plain.text
