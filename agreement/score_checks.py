"""What a model's scores must be before they enter a table: finite numbers.

A model with a NaN weight, a float16 overflow or a broken backend gives NaN or
infinite log-probabilities; written out they would become ``nan`` accuracies in
items.tsv, summary.md and manifest.json. :func:`check_finite` stops the run at
the first such score instead, naming the model and the item.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from agreement.errors import AgreeError
from formats.items import Item


def check_finite(model: str, items: Sequence[Item], logp: np.ndarray, testsets: Sequence[str] = ()) -> None:
    """Raise :class:`AgreeError` when a row of ``logp`` (n, k), the scores of ``items``
    by ``model``, holds a NaN or an infinity."""
    values = np.asarray(logp, dtype=np.float64)
    bad = ~np.isfinite(values).reshape(len(items), -1).all(axis=1)
    if not bad.any():
        return
    i = int(np.argmax(bad))
    it = items[i]
    where = f" of {testsets[i]}" if i < len(testsets) and testsets[i] else ""
    shown = ", ".join(f"{v:g}" for v in values.reshape(len(items), -1)[i])
    raise AgreeError(f"model {model}: log-probabilities ({shown}) that are not finite numbers on item "
                     f"{it.item_id} variant {it.variant}{where} ({int(bad.sum())} of {len(items)} items in "
                     "this batch); the model is broken (NaN weights or an overflow), nothing was written")
