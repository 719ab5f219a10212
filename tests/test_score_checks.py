"""Scores entering a table are finite, except NaNs the scorer counted as skips."""
from __future__ import annotations

import numpy as np
import pytest

from agreement.errors import AgreeError
from agreement.scoring.score_checks import check_finite, counted_skips
from formats.items import Item


def _item(i: int) -> Item:
    return Item(item_id=str(i), variant=0, construction="c", direction="L", tokens=("a", "b"),
                pos=("_", "_"), feats=("_", "_"), correct="b", wrong="c", lemma="_", number="_",
                cue_index=0, target_index=1, attractors=0, punct=False)


class _Scorer:
    def __init__(self, **counts):
        self.counts = counts

    def conventions(self):
        return {"engine": "x", "skipped_over_context": 0, "flag": True, **self.counts}


def test_counted_skips_sums_the_skipped_counts_only():
    assert counted_skips(_Scorer(skipped_over_context=2, skipped_unencodable=1, batch=7)) == 3


def test_nan_rows_within_the_counted_skips_pass_and_beyond_them_fail():
    items = [_item(0), _item(1)]
    logp = np.array([[np.nan, -1.0], [-2.0, -3.0]])
    check_finite("m", items, logp, skipped=1)
    with pytest.raises(AgreeError, match="item 0 variant 0"):
        check_finite("m", items, logp, skipped=0)


def test_infinity_is_never_a_skip():
    items = [_item(0), _item(1)]
    with pytest.raises(AgreeError, match="item 1 variant 0.*-inf|-inf.*item 1"):
        check_finite("m", items, np.array([[-1.0, -2.0], [-np.inf, -3.0]]), skipped=5)
