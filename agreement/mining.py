"""Construction mining (method.md section 2, steps 2-4), in one linear pass.

For every sentence, each non-root arc is a *candidate* when (checked in this
order; a dropped arc is counted under the first filter that drops it):

1. ``distance``: the index difference of its two ends is within
   ``[min_distance, max_distance]`` (paper: 4..14, i.e. at least 3 words between);
2. ``punct``: neither end is PUNCT;
3. ``non_projective``: it is projective (the head dominates every word between);
4. ``missing_feature``: both ends carry every agreement feature;
5. ``excluded_value``: with ``values`` (``--values Sing,Plur``, the default), both
   ends' Number (or, without Number, the first agreement feature) is one of them:
   a ``Number=Dual`` cue or target (Arabic, Hebrew, Slovenian) is excluded here,
   so the entropy filter and the items see the two named values only.

Its construction is the direction (``L``: the head is the target, i.e. the later
word; ``R``: the head is the cue) plus the POS of the cue, of the in-between
words whose head is the cue or the target, and of the target. The miner counts,
per construction, the joint distribution of (cue value, target value) and keeps
the agreeing arcs for item extraction; :func:`judge` then decides:

* (cue value, target value) pairs seen only once are dropped as noise;
* H(cue value | target value) must be below ``max_entropy`` (0.001 nats): the
  target's value determines the cue's. Not H(target | cue): that would keep
  verb-object arcs whose object happens to be always singular;
* for each agreement feature, at least two values occur on at least
  ``min_count`` cues each (for Number: both singular and plural cues).

Cost: one pass over the tokens per sentence (heads, depths) and, per candidate,
a look at the words between its ends (at most ``max_distance``): linear in the
treebank's size. :meth:`ConstructionMiner.add_columns` does the same for a whole
treebank at once on arrays (:class:`treebanks.cache.TreebankColumns`), several
times faster than a Python loop over words; the tests check that both give the
same counts and arcs.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agreement.errors import AgreeError
from treebanks.errors import TreebankError
from treebanks.features import feature_values
from treebanks.reader import Sentence

#: a construction: (direction, POS sequence cue first)
Key = tuple[str, tuple[str, ...]]

ARC_FILTERS = ("distance", "punct", "non_projective", "missing_feature", "excluded_value")


@dataclass(frozen=True)
class MiningConfig:
    """What counts as a candidate arc and as a kept construction."""
    features: tuple[str, ...] = ("Number",)  #: agreement features, canonical order
    min_distance: int = 4       #: smallest index difference between cue and target
    max_distance: int = 14      #: largest index difference
    min_count: int = 10         #: cues needed per value of each feature (two values at least)
    max_entropy: float = 0.001  #: H(cue value | target value) must be below this (nats)
    values: tuple[str, ...] = ()  #: the pivot feature's values kept (empty: all)

    @property
    def pivot(self) -> int:
        """Index in ``features`` of the feature ``values`` restricts (Number, else the first)."""
        return self.features.index("Number") if "Number" in self.features else 0


@dataclass(frozen=True)
class Arc:
    """One candidate arc whose cue and target values agree."""
    order: int            #: position of its sentence in the input (0-based), for sorting
    sentence: Sentence
    cue: int              #: 0-based index of the cue (the earlier end)
    target: int           #: 0-based index of the target (the later end)
    value: tuple[str, ...]  #: the shared agreement value(s)


@dataclass(frozen=True)
class Construction:
    """A construction's counts and the verdict of the filters."""
    direction: str                          #: ``L`` (head = target) or ``R`` (head = cue)
    pos: tuple[str, ...]                    #: POS sequence, cue first
    pairs: tuple[tuple[str, str, int], ...]  #: (cue value, target value, arcs), most frequent first
    entropy: float                          #: H(cue | target) in nats, pairs seen once excluded
    cue_counts: tuple[tuple[str, int], ...]  #: per value of each feature: cues (pairs seen once excluded)
    kept: bool
    reason: str                             #: why it was rejected ("" when kept)
    arcs: int                               #: candidate arcs (all pairs)

    @property
    def name(self) -> str:
        """``L NOUN VERB VERB``"""
        return f"{self.direction} {' '.join(self.pos)}"

    @property
    def key(self) -> Key:
        return (self.direction, self.pos)


def parse_construction(spec: str) -> Key:
    """``"R VERB NOUN CCONJ VERB"`` (also the paper's ``R__VERB_NOUN_CCONJ_VERB`` and
    ``R!VERB_NOUN_CCONJ_VERB!...``) -> ``("R", ("VERB", "NOUN", "CCONJ", "VERB"))``."""
    s = spec.strip()
    if "!" in s:
        s = " ".join(s.split("!")[:2])
    parts = s.replace("__", " ").replace("_", " ").split()
    if len(parts) < 3 or parts[0] not in ("L", "R"):
        raise AgreeError(f"construction {spec!r}: expected a direction (L or R) and at least "
                         f"two POS tags, e.g. \"L NOUN VERB VERB\"")
    return (parts[0], tuple(parts[1:]))


def value_str(value: tuple[str, ...]) -> str:
    return ",".join(value)


class ConstructionMiner:
    """Accumulates joint counts and agreeing arcs, one sentence at a time."""

    def __init__(self, config: MiningConfig = MiningConfig()):
        self.config = config
        self.joint: dict[Key, Counter] = defaultdict(Counter)
        self.agreeing: dict[Key, list[Arc]] = _ArcLists()
        self.drops: Counter = Counter({f: 0 for f in ("arcs",) + ARC_FILTERS + ("candidates",)})
        self.sentences = 0
        self.tokens = 0

    def add_sentence(self, sentence: Sentence) -> None:
        cfg = self.config
        lo_d, hi_d, features = cfg.min_distance, cfg.max_distance, cfg.features
        cols = getattr(sentence, "cols", None)  # a cached sentence: read its columns
        if cols is not None:
            upos, feats, heads = cols[2], cols[3], cols[4]
        else:
            tokens = sentence.tokens
            upos, feats, heads = [t.upos for t in tokens], [t.feats for t in tokens], [t.head for t in tokens]
        n = len(heads)
        order = self.sentences
        self.sentences += 1
        self.tokens += n
        drops = self.drops
        n_arcs = n - heads.count(-1)  # the root's head is -1
        cands = [(i, h) for i, h in enumerate(heads) if h >= 0 and lo_d <= (i - h if i > h else h - i) <= hi_d]
        drops["arcs"] += n_arcs
        drops["distance"] += n_arcs - len(cands)
        if not cands:
            return
        depth = sentence.depths or _depths(heads, sentence)  # the parse cache stores them
        joint, agreeing = self.joint, self.agreeing
        values, pivot = cfg.values, cfg.pivot
        for i, h in cands:
            if upos[i] == "PUNCT" or upos[h] == "PUNCT":
                drops["punct"] += 1
                continue
            lo, hi = (i, h) if i < h else (h, i)
            between = range(lo + 1, hi)
            # Projective: h dominates every word between. When every word between
            # has its head inside [lo, hi] that holds (each head chain stays inside
            # until it reaches h); otherwise climb to h's depth and look.
            if not all(lo <= heads[k] <= hi for k in between) and not _dominates(h, between, heads, depth):
                drops["non_projective"] += 1
                continue
            cv = feature_values(feats[lo], features)
            tv = feature_values(feats[hi], features)
            if cv is None or tv is None:
                drops["missing_feature"] += 1
                continue
            if values and (cv[pivot] not in values or tv[pivot] not in values):
                drops["excluded_value"] += 1
                continue
            drops["candidates"] += 1
            pos = (upos[lo],) + tuple(upos[k] for k in between if heads[k] == lo or heads[k] == hi) + (upos[hi],)
            key = ("L" if h == hi else "R", pos)
            joint[key][(cv, tv)] += 1
            if cv == tv:
                agreeing[key].append(Arc(order, sentence, lo, hi, cv))

    def add_columns(self, tb) -> None:
        """:meth:`add_sentence` for every sentence of a treebank at once, on its
        arrays (``tb``: :class:`treebanks.cache.TreebankColumns`): the same drops,
        joint counts and agreeing arcs in the same order. An arc's sentence record
        is built only when :attr:`agreeing` is read for its construction (the kept
        ones: a few hundred sentences of tens of thousands)."""
        starts = tb.starts
        first, n_sent = self.sentences, len(starts) - 1
        self.sentences, self.tokens = first + n_sent, self.tokens + int(starts[-1])
        sent = np.repeat(np.arange(n_sent), np.diff(starts))  # each word's sentence
        base = starts[:-1][sent]  # each word's sentence's first word
        gh = np.where(tb.heads >= 0, base + tb.heads, -1)  # heads as indices over the whole treebank
        head, lo, hi, cv, tv, vals = _candidates(tb, gh, base, self.config, self.drops)
        keys: dict[Key, int] = {}
        step = max(1, (1 << 21) // max(1, int((hi - lo).max(initial=1))))  # bounded memory
        cid = np.concatenate([_patterns(lo[a:a + step], hi[a:a + step], head[a:a + step], gh, tb.upos, tb.upos_names,
                                        keys) for a in range(0, len(lo), step)] or [np.zeros(0, dtype=np.int64)])
        names = list(keys)
        self._count(names, cid, cv, tv, vals)
        agree = np.flatnonzero(cv == tv)
        agree = agree[np.argsort(cid[agree], kind="stable")]  # by construction, treebank order inside
        s_of, b_of = sent[lo[agree]], base[lo[agree]]
        rows = list(zip((first + s_of).tolist(), s_of.tolist(), (lo[agree] - b_of).tolist(),
                        (hi[agree] - b_of).tolist(), cv[agree].tolist()))
        ends = np.flatnonzero(np.diff(cid[agree], append=-1)).tolist()
        for a, b in zip([0] + [e + 1 for e in ends], ends):
            self.agreeing.later(names[int(cid[agree[a]])], lambda a=a, b=b: [
                Arc(order, tb.sentence(s), c, t, vals[v]) for order, s, c, t, v in rows[a:b + 1]])

    def _count(self, names: list, cid, cv, tv, vals) -> None:
        # into the Counters in the order add_sentence first meets each pair: the
        # entropy sums in that order, and must come out to the same last bit
        nv = max(len(vals), 1)
        triple = (cid * nv + cv) * nv + tv
        uniq, first, counts = np.unique(triple, return_index=True, return_counts=True)
        joint = self.joint
        for k in np.argsort(first, kind="stable").tolist():
            rest, t = divmod(int(uniq[k]), nv)
            c, v = divmod(rest, nv)
            joint[names[c]][(vals[v], vals[t])] += int(counts[k])

    def judge(self, key: Key) -> Construction | None:
        """The verdict on one construction, or None when no candidate arc had it."""
        if key not in self.joint:
            return None
        return judge(key, self.joint[key], self.config)

    def constructions(self) -> list[Construction]:
        """Every construction seen, judged, sorted by (direction, POS)."""
        return [judge(k, self.joint[k], self.config) for k in sorted(self.joint)]


def judge(key: Key, joint: Counter, cfg: MiningConfig) -> Construction:
    """Apply the filters of method.md step 4 to one construction's joint counts."""
    kept_pairs = {p: c for p, c in joint.items() if c > 1}
    if not kept_pairs:  # most constructions (3 in 4 on EWT): what the general case gives, directly
        pairs = tuple(sorted((value_str(cv), value_str(tv), 1) for cv, tv in joint))
        return Construction(key[0], key[1], pairs, 0.0, (), False, _unseen(cfg.features, cfg.min_count), len(joint))
    by_target: dict[tuple, Counter] = defaultdict(Counter)
    for (cv, tv), c in kept_pairs.items():
        by_target[tv][cv] += c
    total = sum(kept_pairs.values())
    entropy = 0.0
    for cues in by_target.values():
        n_t = sum(cues.values())
        h_t = -sum(c / n_t * math.log(c / n_t) for c in cues.values())
        entropy += n_t / total * h_t
    entropy = abs(entropy)  # -0.0 -> 0.0
    cue_counts = []
    reasons = []
    if total == 0:
        reasons.append("no (cue, target) value pair seen more than once")
    elif entropy >= cfg.max_entropy:
        reasons.append(f"H(cue|target) = {entropy:.4f} nats >= {cfg.max_entropy:g}")
    for fi, feature in enumerate(cfg.features):
        per_value: Counter = Counter()
        for (cv, _tv), c in kept_pairs.items():
            per_value[cv[fi]] += c
        cue_counts.extend((f"{feature}={v}", c) for v, c in sorted(per_value.items()))
        if sum(1 for c in per_value.values() if c >= cfg.min_count) < 2:
            shown = ", ".join(f"{v} {c}" for v, c in sorted(per_value.items())) or "none"
            reasons.append(f"fewer than two {feature} values on >= {cfg.min_count} cues ({shown})")
    pairs = tuple(sorted(((value_str(cv), value_str(tv), c) for (cv, tv), c in joint.items()),
                         key=lambda p: (-p[2], p[0], p[1])))
    return Construction(key[0], key[1], pairs, entropy, tuple(cue_counts), not reasons,
                        "; ".join(reasons), sum(joint.values()))


@lru_cache(maxsize=16)
def _unseen(features: tuple[str, ...], min_count: int) -> str:
    """:func:`judge`'s reason when no (cue, target) pair was seen twice."""
    return "; ".join(["no (cue, target) value pair seen more than once"] + [
        f"fewer than two {f} values on >= {min_count} cues (none)" for f in features])


def explain(construction: Construction | None, key: Key, cfg: MiningConfig) -> str:
    """A few lines for people: the joint counts of one construction and the filters' verdicts."""
    name = f"{key[0]} {' '.join(key[1])}"
    if construction is None:
        return (f"{name}: no candidate arc has this construction (arcs {cfg.min_distance}..{cfg.max_distance} "
                f"apart, projective, no PUNCT end, both ends with {'|'.join(cfg.features)})")
    c = construction
    lines = [f"{name}: {'KEPT' if c.kept else 'REJECTED'} ({c.arcs} candidate arcs)",
             "  cue>target pairs: " + ", ".join(
                 f"{cv}>{tv} {n}" + (" (seen once: dropped)" if n == 1 else "") for cv, tv, n in c.pairs)]
    ok = c.entropy < cfg.max_entropy and any(n > 1 for *_, n in c.pairs)
    lines.append(f"  H(cue|target) = {c.entropy:.4f} nats (must be < {cfg.max_entropy:g}): "
                 f"{'passes' if ok else 'FAILS'}")
    for feature in cfg.features:
        counts = [(v, n) for v, n in c.cue_counts if v.startswith(feature + "=")]
        enough = sum(1 for _, n in counts if n >= cfg.min_count) >= 2
        lines.append(f"  cues per {feature} value (two values need >= {cfg.min_count}): "
                     + (", ".join(f"{v.split('=', 1)[1]} {n}" for v, n in counts) or "none")
                     + f": {'passes' if enough else 'FAILS'}")
    lines.append("  -> kept" if c.kept else f"  -> rejected: {c.reason}")
    return "\n".join(lines)


class _ArcLists(dict):
    """construction -> agreeing arcs: a ``defaultdict(list)`` whose lists from
    :meth:`ConstructionMiner.add_columns` are built on first read."""

    def __init__(self):
        super().__init__()
        self._later: dict[Key, list] = defaultdict(list)

    def later(self, key: Key, make) -> None:
        if key in self:  # already read (or filled by add_sentence): these come after
            self[key].extend(make())
        else:
            self._later[key].append(make)

    def __missing__(self, key: Key) -> list[Arc]:
        arcs = self[key] = [arc for make in self._later.pop(key, ()) for arc in make()]
        return arcs


def _candidates(tb, gh, base, cfg: MiningConfig, drops: Counter):
    """The candidate arcs (head, lo, hi indices over the treebank; cue and target
    value ids into ``vals``) after the filters of the module docstring, counted."""
    heads, upos = tb.heads, tb.upos
    is_arc = heads >= 0
    dist = np.abs(np.arange(len(heads)) - base - heads)
    dep = np.flatnonzero(is_arc & (dist >= cfg.min_distance) & (dist <= cfg.max_distance))
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
        proj[j] = _dominates(int(head[j]), range(int(lo[j]) + 1, int(hi[j])), gh, depths)
    return proj


def _between(lo, hi, gh):
    """Row per arc: the indices of the words between its ends (padded with ``lo``),
    which are real, and their heads."""
    between = lo[:, None] + 1 + np.arange(int((hi - lo).max(initial=1)) - 1)
    inside = between < hi[:, None]
    between = np.where(inside, between, lo[:, None])
    return between, inside, gh[between]


def _patterns(lo, hi, head, gh, upos, upos_names, keys: dict) -> np.ndarray:
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


def _value_ids(feats_names: list[str], cfg: MiningConfig):
    """Distinct agreement values, each FEATS id's value id (-1: a feature missing),
    and whether a value id is outside ``cfg.values`` (one more False for -1)."""
    index: dict[tuple, int] = {}
    vid = [-1 if (v := feature_values(f, cfg.features)) is None else index.setdefault(v, len(index))
           for f in feats_names]
    vals = list(index)
    excluded = [bool(cfg.values) and v[cfg.pivot] not in cfg.values for v in vals] + [False]
    return vals, np.array(vid, dtype=np.int64), np.array(excluded, dtype=bool)


def _depths(heads: list[int], sentence: Sentence) -> list[int]:
    """Arcs from each word to its root; raises TreebankError when the heads form a cycle."""
    n = len(heads)
    depth = [-1] * n
    for i in range(n):
        if depth[i] >= 0:
            continue
        chain = []
        j = i
        while j >= 0 and depth[j] < 0:
            chain.append(j)
            j = heads[j]
            if len(chain) > n:
                raise TreebankError(f"{sentence.where}: the heads do not form a tree "
                                    f"(word {i + 1} is in a cycle)")
        d = depth[j] if j >= 0 else -1
        for j in reversed(chain):
            d += 1
            depth[j] = d
    return depth


def _dominates(h: int, words: range, heads: list[int], depth: list[int]) -> bool:
    dh = depth[h]
    for k in words:
        j = k
        while depth[j] > dh:
            j = heads[j]
        if j != h:
            return False
    return True
