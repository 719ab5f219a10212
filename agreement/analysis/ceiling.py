"""The noise ceiling of a rater panel: its split-half reliability (a model's graded
comparison with the raters is :mod:`agreement.humans`).

Reliability from rater counts (split-half): each item's ``n`` raters, ``c`` of whom
chose the correct form, are split at random into halves of ``n // 2`` and
``n - n // 2`` raters; the number of correct votes in the first half is then
hypergeometric (``c`` "good" among ``n``, ``n // 2`` drawn), the second half gets
the rest. The two halves' shares are correlated over items, and the Spearman-Brown
formula ``2r / (1 + r)`` scales that to the whole panel. The point value is the
mean over ``n_splits`` random splits (200 by default); its interval comes from ``n_boot``
replicates that each resample the items with replacement and draw one split, so
it covers both item sampling and the split. The noise ceiling for any model's
correlation with the panel's share is ``sqrt(reliability)`` (the correlation the
panel's share can have with its own noise-free version), its interval the square
root of the reliability's bounds (negative bounds clipped to 0).

Items with fewer than two raters cannot be split and are excluded (counted).
Numpy only (``agree score`` draws it); bootstrap intervals resample items (percentile,
seeded generator passed in).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_SPLITS = 200
N_BOOT = 1000


@dataclass(frozen=True)
class Reliability:
    """Split-half reliability of a rater panel on one condition's items.

    method        ``pearson`` or ``spearman`` (the correlation of the two halves)
    n_items       items with at least two raters (used)
    excluded      items with fewer than two raters (left out)
    split_half    mean correlation of the two halves over the random splits
    reliability   mean Spearman-Brown corrected value over the splits
    reliability_ci  95% interval (item bootstrap x random split)
    ceiling       sqrt(reliability); ceiling_ci its interval
    mean_raters   mean raters per used item
    """
    method: str
    n_items: int
    excluded: int
    split_half: float
    reliability: float
    reliability_ci: tuple[float, float]
    ceiling: float
    ceiling_ci: tuple[float, float]
    mean_raters: float


def rowwise_corr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of ``a`` with the same row of ``b`` (NaN if constant)."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (a * b).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


def _share_ranks(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Average ranks (ties shared, as scipy's rankdata) of ``num / den`` along each row.

    Shares of a half-panel are fractions with small denominators, so each value maps
    to a code in a table of every possible fraction (exact, no float ties lost), and
    a row's ranks come from per-code counts: O(rows x items), with no per-row sort
    (scipy's rankdata on 1,000 x 15,000 shares took most of the analysis time)."""
    top = int(den.max())
    frac = np.array([[a / h if h else 0.0 for a in range(top + 1)] for h in range(top + 1)])
    values, table = np.unique(frac, return_inverse=True)
    codes = table.reshape(frac.shape)[den, num]  # (rows, items)
    k = values.size
    counts = np.zeros((codes.shape[0], k))
    np.add.at(counts, (np.arange(codes.shape[0])[:, None], codes), 1)
    below = np.cumsum(counts, axis=1) - counts  # items with a smaller share
    avg = below + (counts + 1) / 2
    return np.take_along_axis(avg, codes, axis=1)


def _split_corr(c: np.ndarray, w: np.ndarray, rng: np.random.Generator, reps: int,
                method: str) -> np.ndarray:
    """Half-vs-half correlations of ``reps`` random splits; rows of ``c``/``w`` may be resampled."""
    n = c + w
    h = n // 2
    shape = (reps, c.shape[-1])
    c, w, n, h = (np.broadcast_to(x, shape) for x in (c, w, n, h))
    first = rng.hypergeometric(c, w, h)
    if method == "spearman":
        return rowwise_corr(_share_ranks(first, h), _share_ranks(c - first, n - h))
    return rowwise_corr(first / h, (c - first) / (n - h))


def spearman_brown(r: np.ndarray | float) -> np.ndarray | float:
    """Reliability of the whole panel from the correlation of its two halves."""
    return 2 * r / (1 + r)


def split_half_reliability(votes_correct, votes_wrong, rng: np.random.Generator, *,
                           method: str = "spearman", n_splits: int = N_SPLITS,
                           n_boot: int = N_BOOT) -> Reliability:
    """:class:`Reliability` of a panel from per-item vote counts (see the module doc)."""
    c = np.rint(np.asarray(votes_correct, dtype=float)).astype(np.int64)
    w = np.rint(np.asarray(votes_wrong, dtype=float)).astype(np.int64)
    keep = (c + w) >= 2
    c, w = c[keep], w[keep]
    nan2 = (float("nan"), float("nan"))
    if c.size < 3:
        return Reliability(method, int(c.size), int((~keep).sum()), float("nan"), float("nan"), nan2,
                           float("nan"), nan2, float(np.mean(c + w)) if c.size else float("nan"))
    r = _split_corr(c, w, rng, n_splits, method)
    sb = spearman_brown(r)
    idx = rng.integers(0, c.size, size=(n_boot, c.size))
    sb_boot = spearman_brown(_split_corr(c[idx], w[idx], rng, n_boot, method))
    lo, hi = np.nanquantile(sb_boot, [0.025, 0.975])
    rel = float(np.nanmean(sb))
    return Reliability(method, int(c.size), int((~keep).sum()), float(np.nanmean(r)), rel,
                       (float(lo), float(hi)), float(np.sqrt(max(rel, 0.0))),
                       (float(np.sqrt(max(lo, 0.0))), float(np.sqrt(max(hi, 0.0)))),
                       float(np.mean(c + w)))
