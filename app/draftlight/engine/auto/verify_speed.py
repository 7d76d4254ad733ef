"""Whether a model's weight type lets this machine check drafted tokens cheaply.

A target pass over k drafted tokens is a matrix-matrix product. llama.cpp's CPU backend has
kernels that reuse each weight block for all k tokens (repack: Q4_0, IQ4_NL, Q4_K, Q2_K;
llamafile sgemm: F32, F16, BF16, Q8_0, Q4_0, Q5_0, IQ4_NL; K-quant files are mostly Q4_K),
so k tokens cost far less than k passes. Other types (Q4_1, Q5_1, Q5_K, Q6_K, Q3_K, IQ4_XS, the
IQ2/IQ3 types) fall back to one dot product per row and token: checking 8 tokens costs nearly
what 5–8 one-token passes do, and speculation has little to gain. On this project's CPUs,
with the bundled model in each type (docs/weights.md): v(8) 4.5–4.8 for Q4_0, Q5_0, Q8_0,
IQ4_NL and Q4_K_M, 5.4–6.9 for Q4_1; the other types are placed by llama.cpp's kernel list.
On a GPU every type batches well.

Once the engine has timed a model on this machine (costs.cached_costs), the measured v(8)
replaces the table: "checks 8 tokens for the price of 4.0".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from draftlight.engine.auto.costs import measured_verify_cost

FAST_CPU_TYPES = frozenset({
    "F32", "F16", "BF16", "Q8_0", "Q4_0", "Q5_0", "IQ4_NL",
    "Q4_K_S", "Q4_K_M", "Q2_K", "Q2_K_S",
})
# v(8) at or below this is "fast": Q4_0 and Q8_0 measure 4.0–4.6 here, Q4_1 5.4 and more
FAST_V8 = 4.8


@dataclass(frozen=True)
class VerifySpeed:
    fast: bool | None  # None: the weight type is unknown
    v8: float | None = None  # measured cost of checking 8 tokens, in one-token passes
    on_gpu: bool = False

    @property
    def label(self) -> str:
        if self.fast is None:
            return ""
        return "fast verify" if self.fast else "slow verify"

    def describe(self) -> str:
        """One line for a tooltip or a table."""
        if self.fast is None:
            return "weight type unknown"
        if self.v8 is not None:
            return f"{self.label}: checks 8 tokens for the price of {self.v8:.1f} (measured)"
        if self.on_gpu:
            return f"{self.label}: a GPU checks a batch of tokens for about the price of one"
        if self.fast:
            return f"{self.label}: llama.cpp's CPU backend checks a batch of drafted tokens " \
                   "with batched kernels"
        return f"{self.label}: no batched CPU kernel for this weight type; checking k tokens " \
               "costs nearly k passes"


def verify_speed(quant: str | None, path: Path | None = None, *,
                 on_gpu: bool = False) -> VerifySpeed:
    """How cheaply this machine checks drafts with a model of weight type `quant` (as
    gguf_info names it); a measurement of the file at `path`, when there is one, decides."""
    if path is not None:
        v8 = measured_verify_cost(path)
        if v8 is not None:
            return VerifySpeed(v8 <= FAST_V8, v8, on_gpu)
    if quant is None:
        return VerifySpeed(None)
    return VerifySpeed(on_gpu or quant.upper() in FAST_CPU_TYPES, None, on_gpu)
