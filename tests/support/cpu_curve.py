"""A CPU's cost curve (the Xeon's, SmolLM2 Q8_0), for tests of auto's decisions that must not
depend on how busy this machine is when it times a model: there a wasted draft costs up to
several passes, and on a loaded machine a timed curve can say no draft ever pays."""

from __future__ import annotations

from draftlight.engine.auto.costs import BatchCosts

CURVE = {1: 1.0, 2: 1.48, 4: 1.94, 8: 4.42, 16: 6.98}


def cpu_costs(model, probe, role):
    """An Engine's cost_source: the curve above, whatever the model."""
    return BatchCosts(CURVE, 0.01), 0.01
