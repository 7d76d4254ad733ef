"""Fast / slow verify: whether a weight type lets this machine check drafted tokens cheaply."""

from __future__ import annotations

from draftlight.engine.auto.costs import cached_costs, measured_verify_cost
from draftlight.engine.reply.generator import PROBE_TEXT
from draftlight.engine.llama.llama_backend import LlamaBackend
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.auto.verify_speed import verify_speed


def test_the_weight_type_decides_until_the_file_is_measured():
    assert verify_speed("Q4_1").label == "slow verify"
    assert verify_speed("Q4_0").label == "fast verify"
    assert verify_speed("q8_0").label == "fast verify"
    assert verify_speed("Q6_K").label == "slow verify"
    assert verify_speed("Q4_1", on_gpu=True).label == "fast verify"
    assert "GPU" in verify_speed("Q4_1", on_gpu=True).describe()
    unknown = verify_speed(None)
    assert unknown.label == "" and unknown.describe() == "weight type unknown"


def test_a_measured_curve_replaces_the_table(bundled_model):
    assert measured_verify_cost(bundled_model) is None  # a fresh cache folder
    with LlamaBackend(bundled_model, LoadOptions(n_ctx=1024)) as model:
        curve, _ = cached_costs(model, model.tokenize(PROBE_TEXT * 8, add_bos=False), "target")
    speed = verify_speed("Q4_1", bundled_model)
    assert speed.v8 == curve(8) and measured_verify_cost(bundled_model) == curve(8)
    assert speed.describe() == (f"{speed.label}: checks 8 tokens for the price of "
                                f"{curve(8):.1f} (measured)")
