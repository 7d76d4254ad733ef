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
    top_k: int = 0  # keep the k most likely tokens (exactly k; ties: lowest ids); 0 = off
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
    Vectorised over rows, and quick on 150k-token vocabularies: each row is cut down to the
    few tokens that can survive the filters (a threshold per row, found without sorting the
    vocabulary), and only those are exponentiated, sorted and filtered exactly.
    """
    logits = np.atleast_2d(logits)
    n_rows, n_vocab = logits.shape
    if params.greedy:
        out = np.zeros(logits.shape, dtype=np.float64)
        out[np.arange(n_rows), logits.argmax(axis=-1)] = 1.0
        return out
    z = logits / params.temperature  # in the logits' own precision, as softmax(logits / T) was
    top_k = params.top_k if 0 < params.top_k < n_vocab else 0
    if not top_k and params.top_p >= 1.0 and params.min_p <= 0.0:
        return softmax(z)
    rows, cols, weight = _survivors(z, params, top_k)
    out = np.zeros(logits.shape, dtype=np.float64)
    out[rows, cols] = weight / np.bincount(rows, weights=weight, minlength=n_rows)[rows]
    return out


def _survivors(z: np.ndarray, params: SamplingParams, top_k: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, token, w) of every token the filters keep, w = exp(z − max z) ∝ its probability.

    Candidates first: tokens at or above a per-row floor that no survivor is below, namely the
    k-th largest z (top-k), max z + ln(min_p) (min-p: p ≥ min_p · p_max), or the smallest z of
    a top-m set already holding the top-p mass. Then the filters run exactly on the candidates,
    in order: top-k (exactly k tokens; of tokens tied at the k-th value, the lowest ids),
    top-p (the smallest most-likely-first prefix holding top_p of the top-k mass, ties by
    token id), min-p.
    """
    n_rows, n_vocab = z.shape
    z_max = z.max(axis=1)
    tail = np.zeros(n_rows)  # Σ w of the tokens below the floor that top-p must count
    if top_k:  # top-p then acts on the top-k survivors alone: all of them are candidates
        floor = np.partition(z, n_vocab - top_k, axis=1)[:, n_vocab - top_k]
    else:
        floor = np.full(n_rows, -np.inf, dtype=z.dtype)
        if params.min_p > 0.0:
            floor = z_max + np.log(params.min_p) - MIN_P_MARGIN
        if params.top_p < 1.0:
            w_all = np.exp(z - z_max[:, None])  # in z's precision: only to place the floor
            if params.min_p <= 0.0:
                floor = _nucleus_floor(z, w_all, w_all.sum(axis=1, dtype=np.float64)
                                       * params.top_p)
            tail = np.where(z < floor[:, None], w_all, 0.0).sum(axis=1, dtype=np.float64)
    flat = np.flatnonzero(z >= floor[:, None])
    rows, cols = np.divmod(flat, n_vocab)  # by row, then by token id
    if top_k:
        keep = _exactly_k(z[rows, cols] > floor[rows], rows, n_rows, top_k)
        rows, cols = rows[keep], cols[keep]
    w = np.exp(z[rows, cols].astype(np.float64) - z_max[rows].astype(np.float64))
    if params.top_p < 1.0:
        order = np.lexsort((cols, -w, rows))  # by row, most likely first, ties by token id
        rows, cols, w = rows[order], cols[order], w[order]
        mass = np.bincount(rows, weights=w, minlength=n_rows) + tail
        # Keep a token while the mass before it (within its row) is short of top_p · mass.
        before = np.cumsum(w) - w
        starts = np.searchsorted(rows, np.arange(n_rows))
        before -= before[np.minimum(starts, len(w) - 1)][rows]
        keep = before < params.top_p * mass[rows] * (1 - 1e-9)
        rows, cols, w = rows[keep], cols[keep], w[keep]
    if params.min_p > 0.0:
        keep = w >= params.min_p  # w = p / p_max
        rows, cols, w = rows[keep], cols[keep], w[keep]
    return rows, cols, w


def _exactly_k(above: np.ndarray, rows: np.ndarray, n_rows: int, k: int) -> np.ndarray:
    """Which top-k candidates to keep so that each row keeps exactly k tokens.

    The candidates (sorted by row, then token id) are the tokens at or above the k-th largest
    z; `above` marks those strictly above it. Every token above is kept, and of the tokens
    tied at the k-th value the lowest ids fill the remaining places. llama.cpp also keeps
    exactly k (llama_sampler_top_k_impl: std::partial_sort by logit, descending, then
    size = k), but its partial_sort leaves the order of equal logits unspecified (heap order,
    not stable), so no tie rule can match it everywhere; lowest id first is what a stable
    sort by descending logit gives, and it is the rule top-p uses below.
    """
    tied = ~above
    n_above = np.bincount(rows, weights=above, minlength=n_rows)
    seen = np.cumsum(tied)  # tied candidates up to and including this one, over all rows
    starts = np.searchsorted(rows, np.arange(n_rows))  # every row has at least k candidates
    before_row = (seen - tied)[starts]
    tie_rank = seen - 1 - before_row[rows]  # 0 for a row's first tied candidate
    return above | (tie_rank < (k - n_above)[rows])


MIN_P_MARGIN = 1e-3  # candidates a little below the min-p floor, which is then applied exactly


def _nucleus_floor(z: np.ndarray, w: np.ndarray, needed: np.ndarray) -> np.ndarray:
    """A per-row floor on z whose tokens hold at least `needed` of the mass w: the smallest
    z of the top m tokens, for the first m in 64, 1024, 16384 that holds it in every row
    (else no floor). Flat distributions need a large m; peaked ones, which are usual, few."""
    n_vocab = z.shape[1]
    for m in (64, 1024, 16384):
        if m >= n_vocab:
            break
        floor = np.partition(z, n_vocab - m, axis=1)[:, n_vocab - m]
        held = np.where(z >= floor[:, None], w, 0.0).sum(axis=1, dtype=np.float64)
        if np.all(held >= needed * (1 + 1e-6)):
            return floor
    return np.full(z.shape[0], -np.inf, dtype=z.dtype)


def sample(probs: np.ndarray, rng: np.random.Generator) -> int:
    """One draw from a probability row (inverse CDF, so it is reproducible under a seed)."""
    cumulative = np.cumsum(probs)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, probs.size - 1)
