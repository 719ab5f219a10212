"""Two models compared on the rows both scored: the one module for paired comparisons.

Both reports pair rows the same way (:func:`pair_rows`: test set, item id, variant and
perturbation) and count the discordant rows for the exact McNemar test
(:func:`agreement.reporting.stats.mcnemar_exact`, rows as units):

- ``agree score`` (summary.json's ``paired_tests``): every pair of models in every
  condition, on the decidable rows, McNemar only (:func:`paired_tests`);
- ``agree analyze`` (analysis.json's ``paired``): the accuracy difference A minus B with
  a 95% percentile interval from a bootstrap that resamples *items* (test set and
  item_id: an original and its nonce variants together, since rows of one item are not
  independent); ``p_boot`` is the two-sided share of replicates on the other side of 0
  (doubled, capped at 1) (:func:`paired_comparisons`).

Accuracies are fractions; randomness comes only from the generator passed in.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

import numpy as np

from agreement.reporting.stats import N_BOOT, mcnemar_exact
from formats.scored import ScoredTable


@dataclass(frozen=True)
class PairedComparison:
    """Model A against model B on the rows both scored.

    condition       the rows' condition (``original``, ``nonce``, a perturbation; ``all``)
    rows            rows both models scored
    accuracy_a/_b   their accuracies on those rows (fractions)
    only_a, only_b  rows only A (only B) got right
    mcnemar_p       exact two-sided McNemar p
    items, diff, ci, p_boot  with the item bootstrap only (else None): items resampled,
                    accuracy of A minus B, its 95% interval, the bootstrap p
    """
    model_a: str
    model_b: str
    condition: str
    rows: int
    accuracy_a: float
    accuracy_b: float
    only_a: int
    only_b: int
    mcnemar_p: float
    items: int | None = None
    diff: float | None = None
    ci: tuple[float, float] | None = None
    p_boot: float | None = None


def key_codes(table: ScoredTable) -> np.ndarray:
    """Per row, a number for its (test set, item, variant, perturbation): equal for the
    rows of one item in every model."""
    keys = table.keys()
    index = {k: i for i, k in enumerate(dict.fromkeys(keys))}
    return np.fromiter(map(index.__getitem__, keys), dtype=np.int64, count=len(keys))


def pair_rows(table: ScoredTable, a: str, b: str, codes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row indices into ``table`` of model ``a`` and of model ``b``, aligned: the i-th of
    each is the same (test set, item, variant, perturbation), in the order of ``b``'s rows;
    ``codes``: the table's :func:`key_codes`, when already at hand."""
    codes = key_codes(table) if codes is None else codes
    ra, rb = np.flatnonzero(table.model == a), np.flatnonzero(table.model == b)
    if not len(ra) or not len(rb):
        return np.empty(0, dtype=int), np.empty(0, dtype=int)
    row_of = np.full(int(codes.max()) + 1, -1)
    row_of[codes[ra]] = ra            # a row key twice: the last row, as a dict keeps it
    ia = row_of[codes[rb]]
    return ia[ia >= 0], rb[ia >= 0]


def _mcnemar(a: str, b: str, condition: str, ca: np.ndarray, cb: np.ndarray) -> PairedComparison:
    only_a = int(((ca == 1) & (cb == 0)).sum())
    only_b = int(((ca == 0) & (cb == 1)).sum())
    return PairedComparison(a, b, condition, len(ca), float(ca.mean()), float(cb.mean()), only_a, only_b,
                            mcnemar_exact(only_a, only_b))


def mcnemar_test(table: ScoredTable, a: str, b: str, condition: str = "all",
                 codes: np.ndarray | None = None) -> PairedComparison | None:
    """Models ``a`` and ``b`` on their shared rows of ``table``, McNemar only; None when none."""
    ia, ib = pair_rows(table, a, b, codes)
    if not len(ia):
        return None
    return _mcnemar(a, b, condition, table.correct[ia].astype(float), table.correct[ib].astype(float))


def compare(table: ScoredTable, a: str, b: str, rng: np.random.Generator,
            n_boot: int = N_BOOT, condition: str = "all") -> PairedComparison | None:
    """:func:`mcnemar_test` with the item bootstrap of the difference; None when no shared row."""
    ia, ib = pair_rows(table, a, b)
    if not len(ia):
        return None
    ca, cb = table.correct[ia].astype(float), table.correct[ib].astype(float)
    _, item = np.unique(table.item_keys()[ia].astype(str), return_inverse=True)
    n_items = int(item.max()) + 1
    # per-item sums make each replicate one gather over items, not over rows
    d_sum = np.bincount(item, weights=ca - cb, minlength=n_items)
    n_sum = np.bincount(item, minlength=n_items).astype(float)
    idx = rng.integers(0, n_items, size=(n_boot, n_items))
    boot = d_sum[idx].sum(axis=1) / n_sum[idx].sum(axis=1)
    lo, hi = np.quantile(boot, [0.025, 0.975])
    p = min(1.0, 2 * min(np.mean(boot <= 0), np.mean(boot >= 0)))
    base = _mcnemar(a, b, condition, ca, cb)
    return PairedComparison(**{**base.__dict__, "items": n_items, "diff": float((ca - cb).mean()),
                               "ci": (float(lo), float(hi)), "p_boot": float(p)})


def paired_tests(table: ScoredTable, models: Sequence[str], conditions: Sequence[str]) -> list[PairedComparison]:
    """``agree score``'s tests: per condition, every pair of ``models`` (in order) on their
    shared decidable rows, McNemar only."""
    decidable = table.subset(~table.undecidable)
    out = []
    for cond in conditions:
        rows = decidable.subset(decidable.condition == cond)
        codes = key_codes(rows)
        for a, b in combinations(models, 2):
            t = mcnemar_test(rows, a, b, cond, codes)
            if t is not None:
                out.append(t)
    return out


def paired_comparisons(table: ScoredTable, rng: np.random.Generator) -> list[PairedComparison]:
    """``agree analyze``'s comparisons: every pair of models (in order of appearance) that
    shares rows, with the item bootstrap."""
    out = []
    for a, b in combinations(table.models(), 2):
        c = compare(table, a, b, rng)
        if c is not None:
            out.append(c)
    return out
