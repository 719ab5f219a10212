"""The conditions inspection tables break down by, and the small statistics they share.

Conditions (as ``agree score`` reports them): ``all``; ``attractors 0``/``1``/``2+``;
the variant (``original``, ``nonce`` ...); ``construction X``. A condition is listed
when it has at least one item. Intervals: Wilson for shares
(:func:`agreement.reporting.stats.wilson`), the normal approximation for a mean over
items (mean +- 1.96 sd / sqrt(n)) where thousands of cells are summarised, the item
bootstrap (:func:`agreement.reporting.stats.bootstrap_ci`) for the few headline numbers.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from agreement.inspection.cases import Case
from agreement.reporting.stats import Z95, wilson


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


def fmt(x: float, digits: int = 4) -> str:
    """A number for TSV: fixed digits (the same floats give the same bytes), ``nan`` when absent."""
    return "nan" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"
