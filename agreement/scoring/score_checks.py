"""What a model's scores must be before they enter a table: finite numbers.

A model with a NaN weight, a float16 overflow or a broken backend gives NaN or
infinite log-probabilities; written out they would become ``nan`` accuracies in
items.tsv, summary.md and manifest.json. :func:`check_finite` stops the run at
the first such score instead, naming the model and the item. A NaN the scorer
accounts for (a sentence longer than its context, or one its tokenizer cannot
encode: its ``skipped_*`` conventions, :func:`counted_skips`) is a counted skip,
undecidable in the tables, not an error.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from agreement.errors import AgreeError
from formats.items import Item


def counted_skips(scorer) -> int:
    """How many sequences the scorer has skipped and counted so far (its ``skipped_*``
    conventions)."""
    return sum(v for k, v in scorer.conventions().items()
               if k.startswith("skipped") and isinstance(v, int) and not isinstance(v, bool))


def check_finite(model: str, items: Sequence[Item], logp: np.ndarray, testsets: Sequence[str] = (),
                 skipped: int = 0) -> None:
    """Raise :class:`AgreeError` when a row of ``logp`` (n, k), the scores of ``items``
    by ``model``, holds an infinity, or more rows hold a NaN than the ``skipped``
    sequences the scorer counted while scoring them."""
    values = np.asarray(logp, dtype=np.float64).reshape(len(items), -1)
    bad = np.isinf(values).any(axis=1)
    nan = np.isnan(values).any(axis=1)
    if int(nan.sum()) > skipped:
        bad |= nan
    if not bad.any():
        return
    i = int(np.argmax(bad))
    it = items[i]
    where = f" of {testsets[i]}" if i < len(testsets) and testsets[i] else ""
    shown = ", ".join(f"{v:g}" for v in values[i])
    raise AgreeError(f"model {model}: log-probabilities ({shown}) that are not finite numbers on item "
                     f"{it.item_id} variant {it.variant}{where} ({int(bad.sum())} of {len(items)} items in "
                     "this batch); the model is broken (NaN weights or an overflow), nothing was written")
