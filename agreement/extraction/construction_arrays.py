"""The construction miner's whole-treebank steps, on NumPy arrays
(:meth:`agreement.extraction.construction_miner.ConstructionMiner.add_columns`): the candidate filters,
projectivity, construction keys and agreement values for every arc at once,
instead of a Python loop over words. Each function states the rule of
:mod:`agreement.extraction.construction_miner` it applies; the tests check that both ways give the same
counts and arcs."""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from agreement.extraction.tree_arrays import within_distance
from treebanks.features import feature_values


class ArcLists(dict):
    """construction -> agreeing arcs: a ``defaultdict(list)`` whose lists from
    :meth:`ConstructionMiner.add_columns` are built on first read."""

    def __init__(self):
        super().__init__()
        self._later: dict[tuple, list] = defaultdict(list)

    def later(self, key: tuple, make) -> None:
        if key in self:  # already read (or filled by add_sentence): these come after
            self[key].extend(make())
        else:
            self._later[key].append(make)

    def __missing__(self, key: tuple) -> list:
        arcs = self[key] = [arc for make in self._later.pop(key, ()) for arc in make()]
        return arcs


def candidates(tb, gh, base, cfg, drops: Counter):
    """The candidate arcs (head, lo, hi indices over the treebank; cue and target
    value ids into ``vals``) after the filters of the module docstring, counted."""
    heads, upos = tb.heads, tb.upos
    is_arc = heads >= 0
    dist = np.abs(np.arange(len(heads)) - base - heads)
    dep = np.flatnonzero(is_arc & within_distance(dist, cfg.min_distance, cfg.max_distance))
    drops["arcs"] += int(is_arc.sum())
    drops["distance"] += int(is_arc.sum()) - len(dep)
    punct = tb.upos_names.index("PUNCT") if "PUNCT" in tb.upos_names else -1
    keep = (upos[dep] != punct) & (upos[gh[dep]] != punct)
    drops["punct"] += int((~keep).sum())
    head = gh[dep[keep]]
    lo, hi = np.minimum(dep[keep], head), np.maximum(dep[keep], head)
    proj = np.concatenate([_projective(lo[a:a + 4096], hi[a:a + 4096], head[a:a + 4096], gh, tb.depths)
                           for a in range(0, len(lo), 4096)] or [np.zeros(0, dtype=bool)])
    drops["non_projective"] += int((~proj).sum())
    head, lo, hi = head[proj], lo[proj], hi[proj]
    vals, vid, excluded = _value_ids(tb.feats_names, cfg)
    cv, tv = vid[tb.feats[lo]], vid[tb.feats[hi]]
    keep = (cv >= 0) & (tv >= 0)
    drops["missing_feature"] += int((~keep).sum())
    kept = keep & ~(excluded[cv] | excluded[tv])
    drops["excluded_value"] += int((keep & ~kept).sum())
    drops["candidates"] += int(kept.sum())
    return head[kept], lo[kept], hi[kept], cv[kept], tv[kept], vals


def _projective(lo, hi, head, gh, depths) -> np.ndarray:
    """Which candidate arcs lo..hi (head ``head``; indices over the treebank) are
    projective: every word between has its head inside [lo, hi] (then ``head``
    dominates them all), or else climbing from each reaches ``head`` (rare)."""
    between, inside, bh = _between(lo, hi, gh)
    proj = (~inside | ((bh >= lo[:, None]) & (bh <= hi[:, None]))).all(axis=1)
    for j in np.flatnonzero(~proj).tolist():
        proj[j] = dominates(int(head[j]), range(int(lo[j]) + 1, int(hi[j])), gh, depths)
    return proj


def _between(lo, hi, gh):
    """Row per arc: the indices of the words between its ends (padded with ``lo``),
    which are real, and their heads."""
    between = lo[:, None] + 1 + np.arange(int((hi - lo).max(initial=1)) - 1)
    inside = between < hi[:, None]
    between = np.where(inside, between, lo[:, None])
    return between, inside, gh[between]


def patterns(lo, hi, head, gh, upos, upos_names, keys: dict) -> np.ndarray:
    """Each candidate arc's construction id in ``keys`` (new ones added as met):
    direction, cue POS, the POS of the words between headed by cue or target, target POS."""
    between, inside, bh = _between(lo, hi, gh)
    width = between.shape[1]
    sel = inside & ((bh == lo[:, None]) | (bh == hi[:, None]))
    mid = np.full((len(lo), width + 3), -1, dtype=np.int32)  # direction, cue, target, chosen in order
    mid[:, 0], mid[:, 1], mid[:, 2] = head == hi, upos[lo], upos[hi]
    r, c = np.nonzero(sel)
    mid[r, 3 + np.cumsum(sel, axis=1)[r, c] - 1] = upos[between[r, c]]
    raw = mid.tobytes()
    w = mid.shape[1] * 4
    seen: dict[bytes, int] = {}
    inverse = [seen.setdefault(raw[k:k + w], len(seen)) for k in range(0, len(raw), w)]
    ids = [keys.setdefault(("L" if x[0] else "R", (upos_names[x[1]],) + tuple(upos_names[u] for u in x[3:] if u >= 0)
                            + (upos_names[x[2]],)), len(keys)) for x in np.frombuffer(b"".join(seen), dtype=np.int32)
           .reshape(-1, width + 3).tolist()]
    return np.array(ids, dtype=np.int64)[np.array(inverse, dtype=np.int64)] if ids else np.zeros(0, dtype=np.int64)


def _value_ids(feats_names: list[str], cfg):
    """Distinct agreement values, each FEATS id's value id (-1: a feature missing),
    and whether a value id is outside ``cfg.values`` (one more False for -1)."""
    index: dict[tuple, int] = {}
    vid = [-1 if (v := feature_values(f, cfg.features)) is None else index.setdefault(v, len(index))
           for f in feats_names]
    vals = list(index)
    excluded = [bool(cfg.values) and v[cfg.pivot] not in cfg.values for v in vals] + [False]
    return vals, np.array(vid, dtype=np.int64), np.array(excluded, dtype=bool)


def dominates(h: int, words: range, heads, depth) -> bool:
    """Whether ``h`` dominates every word of ``words`` (climbing each to h's depth)."""
    dh = depth[h]
    for k in words:
        j = k
        while depth[j] > dh:
            j = heads[j]
        if j != h:
            return False
    return True
