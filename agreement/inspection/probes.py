"""Diagnostic probes (Giulianelli et al. 2018): can a linear classifier read the subject's
number from the state at a position class (cue, nearest attractor, the word before the
target, the target), layer by layer?

Per (site, layer, position): L2-regularised logistic regression
(:mod:`agreement.inspection.logistic`), cross-validated over ``folds`` folds that keep
an item's variants together; accuracy over the out-of-fold predictions, beside two controls: the majority class of each training fold, and
the same probe trained on shuffled labels (the items' numbers permuted among the
items, seeded), which bounds what a probe reads from anything. Intervals: cluster
bootstrap over item ids (:func:`agreement.inspection.conditions.cluster_ci`).

Memory: the states of the probed positions only, as float32; the (site, layer) cells
are read in groups whose arrays stay under :data:`BUDGET_BYTES` (one pass over the
items per group), and at most ``max_items`` cases are probed (whole items drawn by
the seed; the manifest says how many).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from agreement.inspection.cases import POSITIONS, Case
from agreement.inspection.conditions import cluster_ci
from agreement.inspection.logistic import cross_validate, folds_of
from lm.open import ItemInput, OpenModel
from treebanks.progress import progress

log = logging.getLogger(__name__)

#: bytes of probed states held at once (cells read in groups below it)
BUDGET_BYTES = 384 * 2 ** 20


@dataclass(frozen=True)
class ProbeRow:
    """One probe: its accuracy and the two controls' (shares; 95% cluster bootstrap)."""
    site: str
    layer: int
    position: str
    items: int
    accuracy: float
    accuracy_lo: float
    accuracy_hi: float
    majority: float
    shuffled: float
    shuffled_lo: float
    shuffled_hi: float


def sample_cases(cases: Sequence[Case], max_items: int, rng: np.random.Generator) -> list[int]:
    """Indices of at most ``max_items`` cases, whole items (variants together) drawn by ``rng``."""
    if len(cases) <= max_items:
        return list(range(len(cases)))
    by_id: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_id.setdefault(c.item.item_id, []).append(i)
    ids = sorted(by_id)
    chosen: list[int] = []
    for j in rng.permutation(len(ids)):
        if len(chosen) + len(by_id[ids[j]]) > max_items:
            continue
        chosen += by_id[ids[j]]
    return sorted(chosen)


def _shuffled(cases: Sequence[Case], labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The labels permuted among the items (an item's variants keep one label)."""
    ids = [c.item.item_id for c in cases]
    names = sorted(set(ids))
    first = {}
    for name, y in zip(ids, labels):
        first.setdefault(name, int(y))
    perm = rng.permutation(len(names))
    moved = {names[j]: first[names[perm[j]]] for j in range(len(names))}
    return np.array([moved[name] for name in ids], dtype=np.int64)


def probe_states(model: OpenModel, cases: Sequence[Case], inputs: Sequence[ItemInput], sites: Sequence[str], *,
                 folds: int, rng: np.random.Generator, l2: float = 1.0) -> list[ProbeRow]:
    """Every (site, layer, position) probe (module docstring)."""
    labels = np.array([c.plural for c in cases], dtype=np.int64)
    groups = np.array([c.item.item_id for c in cases], dtype=object)
    fold = folds_of(groups, folds, rng)
    shuffled = _shuffled(cases, labels, rng)
    where = {pos: [(i, cases[i].word(pos)) for i in range(len(cases)) if cases[i].word(pos) is not None]
             for pos in POSITIONS}
    cells = [(s, layer) for s in sites for layer in range(model.site(s).layers)]
    per_cell = sum(len(v) for v in where.values()) * 4
    rows: list[ProbeRow] = []
    start = 0
    bar = progress(log, total=len(cells), desc="probes", unit="layer")
    while start < len(cells):
        n = start + 1
        while n < len(cells) and (n + 1 - start) * per_cell * _width(model, cells[n]) <= BUDGET_BYTES:
            n += 1
        group = cells[start:n]
        X = _collect(model, inputs, where, group)
        for (site, layer) in group:
            for pos in POSITIONS:
                idx = np.array([i for i, _ in where[pos]], dtype=np.int64)
                if len(idx) < 2 * folds:
                    continue
                rows.append(_row(site, layer, pos, X[(site, layer, pos)], labels[idx], shuffled[idx],
                                 fold[idx], groups[idx], l2, rng))
            bar.update(1)
        start = n
    bar.close()
    return rows


def _width(model: OpenModel, cell) -> int:
    return model.site(cell[0]).width


def _collect(model, inputs, where, group) -> dict[tuple, np.ndarray]:
    """States at the probed positions of every cell of ``group`` (one pass over the items)."""
    names = sorted({s for s, _ in group})
    slot = {pos: {i: k for k, (i, _) in enumerate(v)} for pos, v in where.items()}
    words = {pos: dict(v) for pos, v in where.items()}
    X = {(s, layer, pos): np.zeros((len(where[pos]), _width(model, (s, layer))), dtype=np.float32)
         for s, layer in group for pos in POSITIONS}
    for batch, got in model.states(inputs, names):
        for b, i in enumerate(batch):
            for pos in POSITIONS:
                if i not in slot[pos]:
                    continue
                p = inputs[i].word_last[words[pos][i]]
                for s, layer in group:
                    X[(s, layer, pos)][slot[pos][i]] = got[(s, layer)][b, p]
    return X


def _row(site, layer, pos, X, y, y_shuffled, fold, groups, l2, rng) -> ProbeRow:
    pred = cross_validate(X, y, fold, l2)
    ctrl = cross_validate(X, y_shuffled, fold, l2)
    majority = 0
    for f in np.unique(fold):
        train = fold != f
        guess = int(np.mean(y[train]) > 0.5) if train.any() else 0
        majority += int((y[fold == f] == guess).sum())
    hit, ctrl_hit = (pred == y).astype(float), (ctrl == y_shuffled).astype(float)
    return ProbeRow(site, layer, pos, len(y), float(hit.mean()), *cluster_ci(hit, groups, rng),
                    majority / len(y), float(ctrl_hit.mean()), *cluster_ci(ctrl_hit, groups, rng))
