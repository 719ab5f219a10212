"""Activation patching (causal mediation, Finlayson et al. 2021): each item is run with the
state at its cue replaced by the state of its twin (the cue in the other number,
:func:`agreement.inspection.cases.twin_queries`), one layer (or one attention head) at a
time, and the preference for the correct form re-measured.

Per patched place and condition:

* ``flipped``: among the items whose clean run and twin run each prefer their own
  correct form (the twin's is the original's wrong form), the share whose patched
  run prefers the wrong form: the choice followed the patched state;
* ``effect``: the mean change of ``log P(correct) - log P(wrong)`` over all patched
  items;
* ``restored``: that change over the twin's: mean(clean - patched) / mean(clean - twin),
  1 when the patch carries the whole difference the cue's number makes.

The whole state at the cue (LSTM: every layer's h and c, layer ``all``) makes the
patched run the twin's from there on, so it flips every such choice
(tests/test_inspect_lstm.py). Intervals: cluster bootstrap over item ids
(:func:`agreement.inspection.conditions.cluster_ci`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from agreement.inspection.cases import Case
from agreement.inspection.conditions import cluster_ci, conditions
from lm.open import ItemInput, OpenModel


@dataclass(frozen=True)
class PatchRow:
    """One patched place (``layer`` -1: every layer; ``head`` None: the whole layer) in one condition."""
    site: str
    layer: int
    head: int | None
    condition: str
    items: int
    both_right: int
    flipped: int
    share: float
    share_lo: float
    share_hi: float
    effect: float
    effect_lo: float
    effect_hi: float
    restored: float


@dataclass(frozen=True)
class Patching:
    rows: tuple[PatchRow, ...]
    clean: np.ndarray      # per item, the clean preference (original forms)
    twin: np.ndarray       # per item, the twin's preference in the original's orientation


def patch_cases(model: OpenModel, cases: Sequence[Case], inputs: Sequence[ItemInput],
                twins: Sequence[ItemInput], sites: Sequence[str], rng: np.random.Generator) -> Patching:
    """Every patched place of every site in ``sites`` (module docstring)."""
    d0 = model.preference(inputs)
    d_twin = -model.preference(twins)
    pos = [inp.word_last[c.cue] for c, inp in zip(cases, inputs)]
    donor_pos = [tw.word_last[c.cue] for c, tw in zip(cases, twins)]
    conds = conditions(cases)
    groups = np.array([c.item.item_id for c in cases], dtype=object)
    rows: list[PatchRow] = []
    for site in sites:
        targets = model.patch_targets(site)
        patched = model.patch(inputs, twins, site, pos, donor_pos)
        for name, mask in conds.items():
            both = mask & (d0 > 0) & (d_twin < 0)
            gap = float(np.mean(d0[mask] - d_twin[mask]))
            for k, (layer, head) in enumerate(targets):
                flips = patched[k, both] < 0
                change = patched[k, mask] - d0[mask]
                restored = float(-change.mean() / gap) if gap else float("nan")
                rows.append(PatchRow(site, layer, head, name, int(mask.sum()), int(both.sum()), int(flips.sum()),
                                     float(flips.mean()) if flips.size else float("nan"),
                                     *cluster_ci(flips, groups[both], rng), float(change.mean()),
                                     *cluster_ci(change, groups[mask], rng), restored))
    return Patching(tuple(rows), d0, d_twin)
