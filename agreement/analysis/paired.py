"""Two models compared on the same items, with items as the resampling unit.

The accuracy difference of model A minus model B on the rows both scored, with a
95% percentile interval from a bootstrap that resamples *items* (test set and
item_id: an original and its nonce variants together), since rows of one item
are not independent; ``p_boot`` is the two-sided share of replicates on the
other side of 0 (doubled, capped at 1). The exact McNemar p (agreement.stats,
rows as units) is given beside it for comparison with ``agree score``.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from formats.scored import ScoredTable
from agreement.stats import mcnemar_exact

N_BOOT = 2000


@dataclass(frozen=True)
class PairedComparison:
    """A minus B on shared rows: ``diff`` (accuracy points as a fraction) and its interval."""
    model_a: str
    model_b: str
    rows: int
    items: int
    accuracy_a: float
    accuracy_b: float
    diff: float
    ci: tuple[float, float]
    p_boot: float
    mcnemar_p: float


def compare(table: ScoredTable, a: str, b: str, rng: np.random.Generator,
            n_boot: int = N_BOOT) -> PairedComparison | None:
    """The comparison of models ``a`` and ``b``; None when they share no row."""
    ra, rb = table.subset(table.model == a), table.subset(table.model == b)
    ka = dict(zip(ra.row_keys().tolist(), range(len(ra))))
    pairs = [(ka[k], j) for j, k in enumerate(rb.row_keys().tolist()) if k in ka]
    if not pairs:
        return None
    ia, ib = np.array(pairs).T
    ca, cb = ra.correct[ia].astype(float), rb.correct[ib].astype(float)
    _, item = np.unique(ra.item_keys()[ia].astype(str), return_inverse=True)
    n_items = int(item.max()) + 1
    # per-item sums make each replicate one gather over items, not over rows
    d_sum = np.bincount(item, weights=ca - cb, minlength=n_items)
    n_sum = np.bincount(item, minlength=n_items).astype(float)
    idx = rng.integers(0, n_items, size=(n_boot, n_items))
    boot = d_sum[idx].sum(axis=1) / n_sum[idx].sum(axis=1)
    lo, hi = np.quantile(boot, [0.025, 0.975])
    p = min(1.0, 2 * min(np.mean(boot <= 0), np.mean(boot >= 0)))
    only_a = int(((ca == 1) & (cb == 0)).sum())
    only_b = int(((ca == 0) & (cb == 1)).sum())
    return PairedComparison(a, b, len(ia), n_items, float(ca.mean()), float(cb.mean()),
                            float((ca - cb).mean()), (float(lo), float(hi)), float(p),
                            mcnemar_exact(only_a, only_b))


def paired_comparisons(table: ScoredTable, rng: np.random.Generator) -> list[PairedComparison]:
    """Every pair of models (in order of appearance) that shares rows."""
    out = []
    for a, b in combinations(table.models(), 2):
        c = compare(table, a, b, rng)
        if c is not None:
            out.append(c)
    return out
