"""Sampling options and the one transform from logits to probabilities.

The same transform is applied to the target's and the draft's logits: speculative sampling is
lossless with respect to the *transformed* target distribution, whatever the transform is, as
long as both sides use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.0  # 0 = greedy (argmax); speculation is then token-identical to plain
    top_k: int = 0  # keep the k most likely tokens; 0 = off
    top_p: float = 1.0  # keep the smallest set with this much mass; 1 = off
    min_p: float = 0.0  # drop tokens below min_p * max probability; 0 = off
    seed: int | None = None  # makes a sampled run reproducible
    max_tokens: int = 512  # new tokens at most

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0

    def validate(self) -> None:
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if self.top_k < 0:
            raise ValueError("top_k must be >= 0")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError("top_p must be in (0, 1]")
        if not 0.0 <= self.min_p < 1.0:
            raise ValueError("min_p must be in [0, 1)")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits.astype(np.float64, copy=True)
    z -= z.max(axis=-1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


def to_probs(logits: np.ndarray, params: SamplingParams) -> np.ndarray:
    """Row-wise: temperature, then top-k, top-p and min-p on the tempered distribution.

    Greedy params give a one-hot row at the argmax (ties go to the lowest id, like np.argmax).
    """
    logits = np.atleast_2d(logits)
    if params.greedy:
        out = np.zeros(logits.shape, dtype=np.float64)
        out[np.arange(len(logits)), logits.argmax(axis=-1)] = 1.0
        return out
    probs = softmax(logits / params.temperature)
    for row in probs:
        _truncate_row(row, params)
    return probs


def _truncate_row(row: np.ndarray, params: SamplingParams) -> None:
    """Zero the tokens the filters drop, in place, then renormalize."""
    if params.top_k and params.top_k < row.size:
        kth = np.partition(row, -params.top_k)[-params.top_k]
        row[row < kth] = 0.0
    if params.top_p < 1.0:
        order = np.argsort(-row, kind="stable")
        cumulative = np.cumsum(row[order])
        keep = np.searchsorted(cumulative, params.top_p * cumulative[-1] * (1 - 1e-9)) + 1
        row[order[keep:]] = 0.0
    if params.min_p > 0.0:
        row[row < params.min_p * row.max()] = 0.0
    row /= row.sum()


def sample(probs: np.ndarray, rng: np.random.Generator) -> int:
    """One draw from a probability row (inverse CDF, so it is reproducible under a seed)."""
    cumulative = np.cumsum(probs)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, probs.size - 1)
