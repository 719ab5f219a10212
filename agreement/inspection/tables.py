"""The tables ``agree inspect`` writes (their one writer), tab-separated with a header:

``units.tsv``        site, layer, unit, condition, items, accuracy (with the unit ablated),
                     accuracy_lo, accuracy_hi (Wilson 95%), clean_accuracy, effect (mean
                     change of log P(correct) - log P(wrong), natural log), effect_lo,
                     effect_hi (normal 95%)
``topk.tsv``         set (clean, top, random), draw, units (``layer:unit`` ...), condition,
                     items, accuracy, accuracy_lo, accuracy_hi, effect, effect_lo, effect_hi
                     (95% cluster bootstrap over item ids): the evaluation half
``trajectories.tsv`` site, layer, unit, number, attractor (none/some), anchor (cue/target),
                     offset (words from the anchor), items, mean, sd
``probes.tsv``       site, layer, position, items, accuracy, accuracy_lo, accuracy_hi,
                     majority, shuffled, shuffled_lo, shuffled_hi (95% cluster bootstrap)
``patching.tsv``     site, layer (``all``: every layer), head (empty: the whole layer),
                     condition, items, both_right, flipped, share, share_lo, share_hi,
                     effect, effect_lo, effect_hi (95% cluster bootstrap), restored

Shares are fractions in [0, 1]; floats have four decimals, so that the same seed
gives the same bytes.
"""
from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path
from typing import Sequence

from agreement.inspection.conditions import fmt

UNITS_FILE, TOPK_FILE, TRAJECTORIES_FILE = "units.tsv", "topk.tsv", "trajectories.tsv"
PROBES_FILE, PATCHING_FILE = "probes.tsv", "patching.tsv"
#: the column a table's field is written as, where the two differ
RENAMED = {"kind": "set"}


def _cell(name: str, value) -> str:
    if value is None:
        return ""
    if name == "layer" and value == -1:
        return "all"
    if isinstance(value, float):
        return fmt(value)
    return str(value)


def write_rows(path: str | os.PathLike, rows: Sequence, row_type) -> int:
    """Write dataclass ``rows`` of ``row_type`` (its fields are the columns); returns the count."""
    names = [f.name for f in fields(row_type)]
    with open(Path(path), "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(RENAMED.get(n, n) for n in names) + "\n")
        for row in rows:
            fh.write("\t".join(_cell(n, getattr(row, n)) for n in names) + "\n")
    return len(rows)
