"""First-run loading as steps with their times (issue 36, item 7)."""

from __future__ import annotations

from draftlight.ui.engine.load_steps import LoadSteps


class Clock:
    now = 100.0

    def __call__(self):
        return self.now


def test_steps_keep_their_times_and_a_conversions_percent_is_one_step():
    clock = Clock()
    steps = LoadSteps(clock)
    steps.begin("Making the faster Q8_0 copy of the bundled model (once)… 0%")
    clock.now += 6
    steps.begin("Making the faster Q8_0 copy of the bundled model (once)… 55%")
    clock.now += 8
    steps.begin("Loading SmolLM2-135M-Instruct.Q8_0.gguf…")
    clock.now += 2.5
    assert steps.running
    assert steps.lines() == [
        "✓ Making the faster Q8_0 copy of the bundled model (once) · 14 s",
        "Loading SmolLM2-135M-Instruct.Q8_0.gguf · 2.5 s so far"]
    steps.finish()
    clock.now += 30
    assert not steps.running and steps.lines()[-1].startswith("✓ Loading") and \
        steps.lines()[-1].endswith("· 2.5 s")
    assert steps.elapsed() == 46.5
    steps.restart()
    assert steps.lines() == [] and steps.elapsed() == 0.0
