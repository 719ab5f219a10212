"""Activation trajectories of chosen units (Lakretz et al. 2019, their Figure 2): the mean
state of a unit word by word, for singular and plural subjects, with and without an
attractor.

The sentences of a test set differ in length and shape, so positions are counted
from two anchors: the cue (words ``cue - 1`` to ``cue + 4``, up to the target) and the
target (``target - 4`` to ``target``). A word's state is the one after its last piece;
``cue - 1`` before the first word is the start symbol. Sums are accumulated batch by
batch (nothing kept).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from agreement.inspection.cases import NUMBERS, Case
from lm.open import ItemInput, OpenModel

#: word offsets shown from each anchor
OFFSETS = {"cue": tuple(range(-1, 5)), "target": tuple(range(-4, 1))}


@dataclass(frozen=True)
class TrajectoryRow:
    """Mean state of one unit at one offset from an anchor, in one group of items."""
    site: str
    layer: int
    unit: int
    number: str
    attractor: str
    anchor: str
    offset: int
    items: int
    mean: float
    sd: float


def _words(case: Case, anchor: str, offset: int) -> int | None:
    """The word index at ``offset`` from ``anchor`` (-1: the start symbol), None outside."""
    base = case.cue if anchor == "cue" else case.item.target_index
    if base is None:
        return None
    w = base + offset
    if w < -1 or w > case.item.target_index:
        return None
    return w


def trajectories(model: OpenModel, cases: Sequence[Case], inputs: Sequence[ItemInput],
                 units: Sequence[tuple[int, int]], sites: Sequence[str]) -> list[TrajectoryRow]:
    """The rows of every (site, layer, unit) of ``units`` (module docstring)."""
    keys = [(s, layer, u) for s in sites for layer, u in units]
    acc: dict[tuple, np.ndarray] = {}   # (site, layer, unit, number, attractor, anchor, offset) -> [n, sum, sumsq]
    for batch, got in model.states(inputs, sites):
        for b, i in enumerate(batch):
            case, inp = cases[i], inputs[i]
            group = (NUMBERS[case.plural], "none" if case.attractors == "0" else "some")
            for anchor, offsets in OFFSETS.items():
                for off in offsets:
                    w = _words(case, anchor, off)
                    if w is None:
                        continue
                    p = 0 if w < 0 else inp.word_last[w]
                    for site, layer, u in keys:
                        v = float(got[(site, layer)][b, p, u])
                        cell = acc.setdefault((site, layer, u, *group, anchor, off), np.zeros(3))
                        cell += (1.0, v, v * v)
    rows = []
    for (site, layer, u, number, attractor, anchor, off), (n, s, ss) in sorted(acc.items()):
        mean = s / n
        sd = float(np.sqrt(max(ss / n - mean * mean, 0.0) * n / (n - 1))) if n > 1 else float("nan")
        rows.append(TrajectoryRow(site, layer, u, number, attractor, anchor, off, int(n), float(mean), sd))
    return rows
