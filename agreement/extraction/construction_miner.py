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
treebank at once on arrays (:class:`treebanks.columns.TreebankColumns`), several
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
from agreement.extraction.construction_arrays import ArcLists, dominates, candidates, patterns
from agreement.extraction.tree_arrays import global_heads
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
        self.agreeing: dict[Key, list[Arc]] = ArcLists()
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
            if not all(lo <= heads[k] <= hi for k in between) and not dominates(h, between, heads, depth):
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
        arrays (``tb``: :class:`treebanks.columns.TreebankColumns`): the same drops,
        joint counts and agreeing arcs in the same order. An arc's sentence record
        is built only when :attr:`agreeing` is read for its construction (the kept
        ones: a few hundred sentences of tens of thousands)."""
        starts = tb.starts
        first, n_sent = self.sentences, len(starts) - 1
        self.sentences, self.tokens = first + n_sent, self.tokens + int(starts[-1])
        sent, base, gh = global_heads(tb)
        head, lo, hi, cv, tv, vals = candidates(tb, gh, base, self.config, self.drops)
        keys: dict[Key, int] = {}
        step = max(1, (1 << 21) // max(1, int((hi - lo).max(initial=1))))  # bounded memory
        cid = np.concatenate([patterns(lo[a:a + step], hi[a:a + step], head[a:a + step], gh, tb.upos, tb.upos_names,
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
