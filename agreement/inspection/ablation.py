"""Unit ablation (Lakretz et al. 2019): every unit of a site fixed to zero (or its mean)
at every position, one at a time, and the items re-scored; then the units that
matter most, ablated together, against random units of the same count.

Per unit and condition: the accuracy with the unit ablated (Wilson interval), the
clean accuracy, and the effect: the mean change of ``log P(correct) - log P(wrong)``
(normal interval; both treat rows as independent, see
:mod:`agreement.inspection.conditions`). All units of a layer are swept in batched passes
(:meth:`lm.open.OpenModel.ablate`); each layer's (units, items) block is summarised
and dropped.

Selection is not evaluation: the items are split in two halves by ``item_id`` (an
item's variants stay together; seeded). Units are ranked on the selection half by
their effect on the items with an attractor (all items when that half has fewer
than :data:`MIN_RANK_ITEMS` of them), and the top ``k`` ablated together are
measured on the evaluation half, beside ``draws`` sets of ``k`` random units with the
same count per layer: their spread (2.5th to 97.5th percentile over the draws) is
the control's interval; the top set's intervals are a cluster bootstrap over items.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from agreement.inspection.cases import Case
from agreement.inspection.conditions import cluster_ci, conditions, mean_interval, share, with_attractors
from lm.open import ItemInput, OpenModel
from treebanks.progress import progress

log = logging.getLogger(__name__)

#: items with an attractor needed in the selection half to rank units on them
MIN_RANK_ITEMS = 20


@dataclass(frozen=True)
class UnitRow:
    """One unit (or the clean model: unit -1) in one condition."""
    site: str
    layer: int
    unit: int
    condition: str
    items: int
    accuracy: float
    accuracy_lo: float
    accuracy_hi: float
    clean_accuracy: float
    effect: float
    effect_lo: float
    effect_hi: float


@dataclass(frozen=True)
class SetRow:
    """A set of units ablated together on the evaluation half (``kind``: clean, top,
    random; ``draw``: the random draw, 0 otherwise)."""
    kind: str
    draw: int
    units: str
    condition: str
    items: int
    accuracy: float
    accuracy_lo: float
    accuracy_hi: float
    effect: float
    effect_lo: float
    effect_hi: float


@dataclass(frozen=True)
class Ablation:
    """What :func:`ablate_units` found. ``ranked``: every swept (layer, unit, effect on
    the ranking items of the selection half), most harmful first; ``top``: the first
    ``k``; ``rank_condition``: which items ranked them; ``halves``: items in the
    selection and evaluation halves."""
    site: str
    fill: str
    rows: tuple[UnitRow, ...]
    ranked: tuple[tuple[int, int, float], ...]
    top: tuple[tuple[int, int], ...]
    sets: tuple[SetRow, ...]
    rank_condition: str
    halves: tuple[int, int]


def split_halves(cases: Sequence[Case], rng: np.random.Generator) -> np.ndarray:
    """True for the selection half: half of the item ids (variants together), drawn by ``rng``."""
    ids = sorted({c.item.item_id for c in cases})
    chosen = set(np.asarray(ids, dtype=object)[rng.permutation(len(ids))[: (len(ids) + 1) // 2]])
    return np.array([c.item.item_id in chosen for c in cases], dtype=bool)


def unit_means(model: OpenModel, inputs: Sequence[ItemInput], site: str) -> dict[int, np.ndarray]:
    """Per layer, each unit's mean state over every position read (for ``fill="mean"``)."""
    total: dict[int, np.ndarray] = {}
    count = 0
    for batch, got in model.states(inputs, (site,)):
        lengths = np.array([len(inputs[i]) for i in batch])
        valid = np.arange(next(iter(got.values())).shape[1])[None, :] < lengths[:, None]
        for (_, layer), x in got.items():
            total[layer] = total.get(layer, 0) + x[valid].sum(0, dtype=np.float64)
        count += int(valid.sum())
    return {layer: (v / max(count, 1)).astype(np.float32) for layer, v in total.items()}


def _unit_rows(site, layer, effects, d0, conds) -> list[UnitRow]:
    """Rows of every unit of ``layer`` (``effects``: (units, n) ablated preferences)."""
    rows = []
    for name, mask in conds.items():
        n = int(mask.sum())
        clean = share(int((d0[mask] > 0).sum()), n)[0]
        right = (effects[:, mask] > 0).sum(1)
        mean, lo, hi = mean_interval(effects[:, mask] - d0[mask], axis=1)
        for u in range(effects.shape[0]):
            acc = share(int(right[u]), n)
            rows.append(UnitRow(site, layer, u, name, n, *acc, clean, float(mean[u]), float(lo[u]),
                                float(hi[u])))
    return rows


def ablate_units(model: OpenModel, cases: Sequence[Case], inputs: Sequence[ItemInput], *, site: str,
                 layers: Sequence[int], fill: str, k: int, draws: int,
                 rng: np.random.Generator) -> Ablation:
    """The sweep, the ranking and the top-``k`` against random sets (module docstring)."""
    width = model.site(site).width
    fills = unit_means(model, inputs, site) if fill == "mean" else None
    d0 = model.preference(inputs)
    conds = conditions(cases)
    selection = split_halves(cases, rng)
    attracted = with_attractors(cases)
    rank_mask = selection & attracted
    rank_condition = "attractors >= 1"
    if rank_mask.sum() < MIN_RANK_ITEMS:
        rank_mask, rank_condition = selection, "all"
    rows: list[UnitRow] = []
    ranked: list[tuple[int, int, float]] = []
    bar = progress(log, total=len(layers) * width, desc=f"ablating {site} units", unit="unit")
    for layer in layers:
        effects = np.empty((width, len(inputs)))
        step = max(1, min(width, 64))
        for s in range(0, width, step):
            units = range(s, min(width, s + step))
            effects[s:s + len(units)] = model.ablate(inputs, site, [[(layer, u)] for u in units], fills)
            bar.update(len(units))
        rows += _unit_rows(site, layer, effects, d0, conds)
        change = (effects[:, rank_mask] - d0[rank_mask]).mean(1) if rank_mask.any() else np.zeros(width)
        ranked += [(layer, u, float(change[u])) for u in range(width)]
    bar.close()
    ranked.sort(key=lambda r: (r[2], r[0], r[1]))
    top = tuple((layer, u) for layer, u, _ in ranked[:k])
    sets = _set_rows(model, cases, inputs, site, top, draws, fills, d0, ~selection, rng, layers, width)
    return Ablation(site, fill, tuple(rows), tuple(ranked), top, tuple(sets), rank_condition,
                    (int(selection.sum()), int((~selection).sum())))


def _set_rows(model, cases, inputs, site, top, draws, fills, d0, evaluation, rng, layers, width) -> list[SetRow]:
    """The clean model, the top set and ``draws`` random sets on the evaluation half."""
    idx = np.flatnonzero(evaluation)
    if not len(idx) or not top:
        return []
    per_layer = {layer: sum(1 for l, _ in top if l == layer) for layer in layers}
    randoms = []
    for _ in range(draws):
        units = []
        for layer in layers:
            units += [(layer, int(u)) for u in sorted(rng.choice(width, per_layer[layer], replace=False))]
        randoms.append(units)
    part = [inputs[i] for i in idx]
    got = model.ablate(part, site, [list(top)] + randoms, fills)
    sub = [cases[i] for i in idx]
    conds = {"all": np.ones(len(idx), dtype=bool), "attractors >= 1": with_attractors(sub)}
    groups = np.array([c.item.item_id for c in sub], dtype=object)
    out = []
    for name, mask in conds.items():
        if not mask.any():
            continue
        base, g = d0[idx][mask], groups[mask]
        out.append(_set_row("clean", 0, "", name, base, base, g, rng))
        out.append(_set_row("top", 0, _units_text(top), name, got[0][mask], base, g, rng))
        for j, units in enumerate(randoms, start=1):
            out.append(_set_row("random", j, _units_text(units), name, got[j][mask], base, g, rng))
    return out


def _set_row(kind, draw, units, condition, d, base, groups, rng) -> SetRow:
    """Accuracy and mean change with 95% cluster-bootstrap intervals (item ids)."""
    right, change = (d > 0).astype(float), d - base
    eff = cluster_ci(change, groups, rng) if kind != "clean" else (0.0, 0.0)
    return SetRow(kind, draw, units, condition, len(d), float(right.mean()), *cluster_ci(right, groups, rng),
                  float(change.mean()), *eff)


def _units_text(units) -> str:
    return " ".join(f"{layer}:{u}" for layer, u in units)
