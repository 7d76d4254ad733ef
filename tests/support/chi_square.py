"""Pearson's chi-square test without scipy (not a dependency): the statistic over cells and its
exact p-value from the chi-square survival function; and a few critical values, by df."""

from __future__ import annotations

import math

import numpy as np

CHI2_CRITICAL_P001 = {3: 16.266, 4: 18.467, 5: 20.515}  # chi-square 0.1% points, by df


def chi_square_sf(x: float, df: int) -> float:
    """P(X >= x) for X ~ chi-square(df), exactly: Q(df/2, x/2), the regularised upper incomplete
    gamma function, from Q(1/2, y) = erfc(√y) or Q(1, y) = e^-y and the recurrence
    Q(a + 1, y) = Q(a, y) + y^a e^-y / Γ(a + 1)."""
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    y = x / 2.0
    a, q = (0.5, math.erfc(math.sqrt(y))) if df % 2 else (1.0, math.exp(-y))
    while a < df / 2.0:
        q += math.exp(a * math.log(y) - y - math.lgamma(a + 1.0))
        a += 1.0
    return min(q, 1.0)


def pearson(counts: np.ndarray, probs: np.ndarray, min_expected: float = 5.0
            ) -> tuple[float, int]:
    """(statistic, degrees of freedom) of `counts` against `probs`. A count where the
    probability is 0 is an infinite deviation. Categories expected fewer than `min_expected`
    times are pooled into one (and that one into the smallest other if it is still short), the
    usual condition for the statistic to follow the chi-square law."""
    n = int(counts.sum())
    support = probs > 0
    if counts[~support].any():
        return math.inf, max(int(support.sum()) - 1, 1)
    observed, expected = counts[support].astype(float), probs[support] * n
    small = expected < min_expected
    if small.any():
        bins_o, bins_e = list(observed[~small]), list(expected[~small])
        rest_o, rest_e = observed[small].sum(), expected[small].sum()
        if rest_e >= min_expected or not bins_e:
            bins_o.append(rest_o)
            bins_e.append(rest_e)
        else:
            smallest = int(np.argmin(bins_e))
            bins_o[smallest] += rest_o
            bins_e[smallest] += rest_e
        observed, expected = np.array(bins_o), np.array(bins_e)
    if len(expected) < 2 or expected.min() < min_expected:
        return 0.0, 0  # too few draws in this cell to say anything
    return float(((observed - expected) ** 2 / expected).sum()), len(expected) - 1
