"""Systematicity over target lemmas: EW and MW accuracy (Newman et al. 2021).

Input: rows scored on the items of ``agree swap-targets`` (:mod:`nonce.target_swaps`).
Its id scheme: every original item keeps its ``item_id``; variant 0 is the item as
mined (perturbation ``original``), variants 1..K carry the same sentence with the
target pair replaced by the two forms of K *different* lemmas (perturbation
``swap``). So the rows with perturbation ``swap`` sharing (test set, item_id,
model) are the K lemma variants of one item.

Per item and model, with ``c_k`` = 1 when the model prefers the correct form of
lemma ``k``:

- EW (equally weighted): ``mean_k c_k``;
- MW (model weighted): ``sum_k w_k c_k`` with ``w_k`` proportional to
  ``P(correct_k | prefix) + P(wrong_k | prefix)``, the model's probability of the
  lemma in that context, normalised over the item's K lemmas.

Both are then averaged over items (every item counts once). Beside them:
``accuracy`` on the items' originals (variant 0) and ``swap_accuracy`` over all
swap rows. With K = 1, EW equals ``swap_accuracy`` (one lemma per item).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from formats.scored import ScoredTable

SWAP = "swap"


@dataclass(frozen=True)
class Systematicity:
    """EW/MW of one model over one construction (``all`` for every construction).

    items          items with at least one swap variant
    k_min, k_max   fewest/most lemma variants per item
    accuracy       accuracy on those items' originals (NaN when not scored)
    swap_accuracy  accuracy over all swap rows
    ew, mw         see the module doc
    """
    model: str
    construction: str
    items: int
    k_min: int
    k_max: int
    accuracy: float
    swap_accuracy: float
    ew: float
    mw: float


def _per_item(table: ScoredTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(item codes, EW, MW, K) per item of ``table`` (swap rows of one model)."""
    _, inv = np.unique(table.item_keys().astype(str), return_inverse=True)
    n = int(inv.max()) + 1
    k = np.bincount(inv, minlength=n)
    c = table.correct.astype(float)
    ew = np.bincount(inv, weights=c, minlength=n) / k
    # log P(lemma) = logaddexp of its two forms; softmax within each item, shifted by the item's max
    lp = np.logaddexp(table.logp_correct, table.logp_wrong)
    top = np.full(n, -np.inf)
    np.maximum.at(top, inv, lp)
    w = np.exp(lp - top[inv])
    w = np.where(np.isfinite(w), w, 0.0)
    tot = np.bincount(inv, weights=w, minlength=n)
    mw = np.bincount(inv, weights=w * c, minlength=n) / np.where(tot > 0, tot, 1)
    mw = np.where(tot > 0, mw, ew)  # every lemma impossible: fall back to equal weights
    return inv, ew, mw, k


def systematicity(table: ScoredTable) -> list[Systematicity]:
    """EW/MW per model, overall and per construction; [] when there are no swap rows."""
    out = []
    swap = table.condition == SWAP
    if not swap.any():
        return out
    orig = table.condition == "original"
    for m in table.models():
        rows = table.subset(swap & (table.model == m))
        if not len(rows):
            continue
        inv, ew, mw, k = _per_item(rows)
        first = np.zeros(len(k), dtype=int)
        first[inv[::-1]] = np.arange(len(inv))[::-1]  # a row of each item, for its construction
        cons = rows.construction[first]
        base = table.subset(orig & (table.model == m))
        base_ok = dict(zip(base.item_keys().tolist(), base.correct.tolist()))
        keys = rows.item_keys()[first].tolist()
        for name in ["all"] + sorted(set(cons.tolist())):
            sel = np.ones(len(k), bool) if name == "all" else cons == name
            ok = [base_ok[key] for key, s in zip(keys, sel) if s and key in base_ok]
            row_sel = sel[inv]
            out.append(Systematicity(m, name, int(sel.sum()), int(k[sel].min()), int(k[sel].max()),
                                     float(np.mean(ok)) if ok else float("nan"),
                                     float(rows.correct[row_sel].mean()),
                                     float(ew[sel].mean()), float(mw[sel].mean())))
    return out
