"""Array steps both arc sources take on a whole treebank
(:class:`treebanks.columns.TreebankColumns`): heads as indices over the whole
treebank, and the cue-target distance filter."""
from __future__ import annotations

import numpy as np


def global_heads(tb) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per word: its sentence's number, the index of its sentence's first word, and
    its head as an index over the whole treebank (-1 for a root)."""
    starts = tb.starts
    sent = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    base = starts[:-1][sent]
    return sent, base, np.where(tb.heads >= 0, base + tb.heads, -1)


def within_distance(dist: np.ndarray, min_distance: int, max_distance: int | None) -> np.ndarray:
    """Which of the index differences ``dist`` lie in ``[min_distance, max_distance]`` (None: no upper bound)."""
    near = dist >= min_distance
    if max_distance is not None:
        near &= dist <= max_distance
    return near
