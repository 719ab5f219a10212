"""Accuracy, bootstrap confidence intervals and paired tests (numpy and math only).

Accuracies are fractions in [0, 1] here; the report multiplies by 100.
Randomness comes only from the ``numpy.random.Generator`` passed in, so a seed
gives the same intervals every run.
"""
from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

#: Bootstrap resamples per interval: 95% percentile bounds move by well under
#: 0.5 points between seeds at this size for the test sets we have (119-1,071 items).
N_BOOT = 2000


def accuracy(values: Sequence[float]) -> float:
    """Mean of per-item scores (1/0 for right/wrong, or a share); NaN when empty."""
    return float(np.mean(np.asarray(values, dtype=float))) if len(values) else float("nan")


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1; 0.0 for a single value)."""
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return float("nan"), float("nan")
    return float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0


#: resamples drawn at once up to this many index cells (8 bytes each: 256 MiB); a larger
#: draw (1,000 resamples of the release's 1.2 million nonce rows: 19 GB) goes in blocks
BOOT_CELLS = 1 << 25


def _resampled_means(a: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    """The mean of each of ``n_boot`` resamples of ``a``. Up to :data:`BOOT_CELLS` index
    cells in one draw, as before (the same numbers for a seed); beyond, in blocks of rows
    (reproducible for a seed too, but not the numbers one draw would give: the generator's
    bounded draws are buffered per call)."""
    if n_boot * a.size <= BOOT_CELLS:
        return a[rng.integers(0, a.size, size=(n_boot, a.size))].mean(axis=1)
    rows = max(1, BOOT_CELLS // a.size)
    return np.concatenate([a[rng.integers(0, a.size, size=(min(rows, n_boot - start), a.size))].mean(axis=1)
                           for start in range(0, n_boot, rows)])


def bootstrap_ci(values: Sequence[float], rng: np.random.Generator, *, n_boot: int = N_BOOT,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean over items.

    ``values`` is one score per item (for a group of models: the item's mean over
    the models, whose mean is the group's mean accuracy). Items are resampled with
    replacement ``n_boot`` times. Returns (NaN, NaN) for no items.
    """
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return float("nan"), float("nan")
    means = _resampled_means(a, rng, n_boot)
    tail = (1.0 - level) / 2
    lo, hi = np.quantile(means, [tail, 1.0 - tail])
    return float(lo), float(hi)


def cluster_bootstrap_ci(values: Sequence[float], cluster: Sequence[int], rng: np.random.Generator, *,
                         n_boot: int = N_BOOT, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` when rows come in clusters
    (``cluster``: each row's cluster number, 0..k-1; nonce variants of one sentence): the
    clusters are resampled with replacement, each with all its rows, ``n_boot`` times.
    Returns (NaN, NaN) for no rows."""
    a = np.asarray(values, dtype=float)
    c = np.asarray(cluster, dtype=np.int64)
    if a.size == 0:
        return float("nan"), float("nan")
    k = int(c.max()) + 1
    sums, sizes = np.bincount(c, weights=a, minlength=k), np.bincount(c, minlength=k).astype(float)
    draws = rng.integers(0, k, size=(n_boot, k))
    means = sums[draws].sum(axis=1) / sizes[draws].sum(axis=1)
    tail = (1.0 - level) / 2
    lo, hi = np.quantile(means, [tail, 1.0 - tail])
    return float(lo), float(hi)


#: two-sided 95% normal quantile
Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval for ``k`` successes in ``n`` trials, as fractions
    (good at small n and near 0 or 1); (0, 0) for no trials."""
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar (sign) test on the discordant pairs.

    ``b``: items only the first model gets right; ``c``: only the second. Under the
    null each discordant item is a fair coin, so p = P(Binomial(b+c, 1/2) at least as
    extreme as min(b, c)), doubled and capped at 1. Exact integer arithmetic
    (binomial coefficients as Python integers) keeps it correct for thousands of items.
    """
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail, term = 0, 1   # term = comb(n, i), each from the last: one product per term, still exact
    for i in range(k + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    return min(1.0, 2 * tail / 2 ** n)


def pearson(x: Iterable[float], y: Iterable[float]) -> float:
    """Pearson correlation; NaN when fewer than 2 points or a constant variable."""
    xa, ya = np.asarray(list(x), dtype=float), np.asarray(list(y), dtype=float)
    if xa.size < 2 or xa.std() == 0 or ya.std() == 0:
        return float("nan")
    return float(np.corrcoef(xa, ya)[0, 1])


def spearman(x: Iterable[float], y: Iterable[float]) -> float:
    """Spearman rank correlation (average ranks for ties)."""
    return pearson(_ranks(list(x)), _ranks(list(y)))


def _ranks(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(a.size)
    i = 0
    while i < a.size:  # average rank over each run of ties
        j = i
        while j + 1 < a.size and a[order[j + 1]] == a[order[i]]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks
