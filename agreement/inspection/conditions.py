"""The conditions inspection tables break down by, and the small statistics they share.

Conditions (as ``agree score`` reports them): ``all``; ``attractors 0``/``1``/``2+``;
the variant (``original``, ``nonce`` ...); ``construction X``. A condition is listed
when it has at least one item.

Intervals (95%). The variants of one item (an original and its nonce sentences)
are not independent draws, so the headline numbers (probes, patching, the top units
against random ones) take a cluster bootstrap over item ids (:func:`cluster_ci`:
whole items resampled, :data:`agreement.reporting.stats.N_BOOT` times). The
per-unit table (thousands of cells) takes Wilson intervals for shares
(:func:`agreement.reporting.stats.wilson`) and the normal approximation for means
(mean +- 1.96 sd / sqrt(n)); both treat the rows as independent, so they are
narrower than a cluster bootstrap's where items have variants.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from agreement.inspection.cases import Case
from agreement.reporting.stats import N_BOOT, Z95, wilson


def conditions(cases: Sequence[Case]) -> dict[str, np.ndarray]:
    """Condition name -> boolean mask over ``cases`` (only conditions with items)."""
    n = len(cases)
    out = {"all": np.ones(n, dtype=bool)}
    for label in ("0", "1", "2+"):
        out[f"attractors {label}"] = np.array([c.attractors == label for c in cases], dtype=bool)
    for v in sorted({c.variant for c in cases}):
        out[v] = np.array([c.variant == v for c in cases], dtype=bool)
    for k in sorted({c.construction for c in cases}):
        out[f"construction {k}"] = np.array([c.construction == k for c in cases], dtype=bool)
    return {k: m for k, m in out.items() if m.any()}


def with_attractors(cases: Sequence[Case]) -> np.ndarray:
    """Mask of the items with at least one attractor."""
    return np.array([c.attractors != "0" for c in cases], dtype=bool)


def share(k: int, n: int) -> tuple[float, float, float]:
    """(share, Wilson low, high); NaNs for no items."""
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    lo, hi = wilson(int(k), int(n))
    return k / n, lo, hi


def mean_interval(values: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) along ``axis``: the normal approximation (NaN for fewer than 2)."""
    n = values.shape[axis]
    mean = values.mean(axis=axis)
    if n < 2:
        nan = np.full_like(mean, np.nan)
        return mean, nan, nan
    half = Z95 * values.std(axis=axis, ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


def cluster_ci(values: np.ndarray, groups: np.ndarray, rng: np.random.Generator,
               n_boot: int = N_BOOT) -> tuple[float, float]:
    """95% percentile interval of the mean of ``values`` (one per row; 0/1 for a share)
    when whole groups (item ids) are resampled; NaNs for no rows."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return float("nan"), float("nan")
    _, inverse = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    sizes = np.bincount(inverse).astype(float)
    draw = rng.integers(0, sums.size, size=(n_boot, sums.size))
    means = sums[draw].sum(1) / sizes[draw].sum(1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def fmt(x: float, digits: int = 4) -> str:
    """A number for TSV: fixed digits (the same floats give the same bytes), ``nan`` when absent."""
    return "nan" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"
