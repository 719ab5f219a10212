"""Verb frames: which complements a verb takes, so a nonce verb keeps the sentence's.

A nonce variant replaces a verb by a random verb with the same features. If the
new verb is transitive where the old one was not, a noun before it can read as
its object and the wrong form stops being wrong (Greek *Εάν αυτό περιέχει* ->
*περιέχουν* "if they contain this"; Turkish *işlem yaptı* -> *yaptın* "you did an
operation"). So a verb is replaced only by a verb whose usual frame is the frame
the replaced verb has in its sentence.

A **frame** is the set of core complement relations among a word's dependents:
``obj``, ``iobj``, ``ccomp``, ``xcomp`` (subtypes such as ``obj:agent`` count as
their base), written as a bit mask (:data:`FRAME_BITS`). A verb lemma's **usual
frame** is its most frequent frame over the treebanks' VERB tokens (ties: the
smaller mask, so fewer complements). :func:`frames_of` reads both from a
treebank's columns: the lemmas' usual frames and each relation item's frames, one
per token of its sentence.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from formats.items import Item
from nonce.pool import CandidatePool, Choices, Key, Pair, subset
from treebanks.cache import load_columns
from treebanks.columns import TreebankColumns

#: complement relation -> its bit in a frame mask
FRAME_BITS = {"obj": 1, "iobj": 2, "ccomp": 4, "xcomp": 8}
#: the POS whose replacements must keep the frame
FRAME_POS = ("VERB",)


@dataclass(frozen=True)
class Frames:
    """usual  (lemma, upos) -> the lemma's usual frame mask
    items  item id -> the frame mask of each token of its sentence"""
    usual: dict[tuple[str, str], int] = field(default_factory=dict)
    items: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def of_item(self, item: Item) -> tuple[int, ...] | None:
        """The frames of ``item``'s tokens, or None when unknown (another sentence
        length: the item does not come from these columns)."""
        frames = self.items.get(item.item_id)
        return frames if frames is not None and len(frames) == len(item.tokens) else None


def frame_name(mask: int) -> str:
    """``5`` -> ``obj+ccomp``; ``0`` -> ``none``."""
    return "+".join(r for r, b in FRAME_BITS.items() if mask & b) or "none"


def _word_frames(tb: TreebankColumns) -> np.ndarray:
    """Each word's frame mask (the complement relations of its dependents)."""
    names, rel = tb.deprels()
    bit_of = np.array([FRAME_BITS.get(n.split(":")[0], 0) for n in names] or [0], dtype=np.int64)
    bits = bit_of[rel]
    n_words = len(tb.heads)
    sent = np.repeat(np.arange(len(tb.starts) - 1), np.diff(tb.starts))
    heads = tb.heads
    has = (heads >= 0) & (bits > 0)
    frames = np.zeros(n_words, dtype=np.int64)
    np.bitwise_or.at(frames, tb.starts[sent[has]] + heads[has], bits[has])
    return frames


def _usual(tb: TreebankColumns, frames: np.ndarray, pos: Iterable[str]) -> dict[tuple[str, str], int]:
    counts: Counter = Counter()
    word0 = 0
    wanted = {tb.upos_names.index(p): p for p in pos if p in tb.upos_names}
    for f in tb.files:
        hi = word0 + int(f.arrays["starts"][-1])
        lemmas, upos = f.arrays["lemma"], tb.upos[word0:hi]
        for uid, name in wanted.items():
            sel = upos == uid
            pairs, n = np.unique(np.stack([lemmas[sel].astype(np.int64), frames[word0:hi][sel]]), axis=1,
                                 return_counts=True)
            table = f.tables[1]
            for (lid, mask), k in zip(pairs.T.tolist(), n.tolist()):
                counts[table[lid], name, mask] += k
        word0 = hi
    best: dict[tuple[str, str], tuple[int, int]] = {}
    for (lemma, upos_name, mask), k in counts.items():
        old = best.get((lemma, upos_name))
        if old is None or (k, -mask) > (old[1], -old[0]):
            best[lemma, upos_name] = (mask, k)
    return {key: mask for key, (mask, _) in best.items()}


def frames_of(tb: TreebankColumns, items: Iterable[Item], stem_of, pos: Iterable[str] = FRAME_POS) -> Frames:
    """The usual frames of ``tb``'s lemmas of ``pos`` and the token frames of the
    relation items among ``items`` (ids ``<stem>:<sent_id>:<cue>-<target>:<feature>``;
    ``stem_of``: a treebank file path -> the stem its items' ids start with)."""
    frames = _word_frames(tb)
    sentence_of: dict[str, int] = {}
    k0 = 0
    for f in tb.files:
        stem = stem_of(f.source)
        for j, sid in enumerate(f.sent_ids):
            sentence_of[f"{stem}:{sid}"] = k0 + j
        k0 += len(f)
    by_item = {}
    for it in items:
        k = sentence_of.get(it.item_id.rsplit(":", 2)[0]) if it.relation else None
        if k is not None:
            by_item[it.item_id] = tuple(frames[tb.starts[k]:tb.starts[k + 1]].tolist())
    return Frames(_usual(tb, frames, pos), by_item)


class FrameFilter:
    """A verb's candidates (forms, or target pairs) narrowed to lemmas whose usual
    frame is the replaced verb's frame in its sentence; made once per index key and
    frame. ``pool``: the :class:`nonce.pool.CandidatePool` the candidates come from."""

    def __init__(self, frames: Frames, pool: CandidatePool):
        self.frames, self.pool = frames, pool
        self._cache: dict = {}

    def _lemma(self, form: str, upos: str, feats: str) -> str | None:
        for a, _ in self.pool.table.analyses(form):
            if a.upos == upos and a.feats == feats:
                return a.lemma
        return None

    def words(self, cands: Choices[str], key: Key, mask: int) -> Choices[str] | None:
        """``cands`` (the forms of ``key``) whose lemma's usual frame is ``mask``."""
        ck = ("w", key, mask)
        if ck not in self._cache:
            upos, feats = key[0], key[1]
            usual = self.frames.usual
            self._cache[ck] = subset(cands, lambda f: usual.get((self._lemma(f, upos, feats), upos)) == mask,
                                     lambda f: f)
        return self._cache[ck]

    def pairs(self, pairs: Choices[Pair], key: Key, contrast: tuple, mask: int) -> Choices[Pair] | None:
        """Target ``pairs`` (of ``key``, for ``contrast``) whose lemma's usual frame is ``mask``."""
        ck = ("p", key, contrast, mask)
        if ck not in self._cache:
            usual, upos = self.frames.usual, key[0]
            self._cache[ck] = subset(pairs, lambda p: usual.get((p.lemma, upos)) == mask, lambda p: p.lemma)
        return self._cache[ck]


def frames_for_files(files, items: Iterable[Item], stem_of, cache_dir=None, workers: int | None = None) -> Frames:
    """:func:`frames_of` the treebank ``files`` (read through the parse cache at
    ``cache_dir``, as the extraction read them)."""
    tb, _ = load_columns(list(files), cache_dir=cache_dir, workers=workers)
    return frames_of(tb, items, stem_of)
