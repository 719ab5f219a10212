"""What a replaced word must fit in its sentence: its frame, the words that agree with
it, a clitic that harmonises with it.

A nonce variant replaces a content word by a random word with the same POS and
features. Three things the features do not show can still break the sentence:

- **The frame.** A verb swapped for one that takes another complement or another
  marker: Italian *comincia a studiare* -> *vuole a studiare*; a verb transitive where
  the old one was not lets a noun before it read as its object, and the wrong form
  stops being wrong (Greek *Εάν αυτό περιέχει* -> *περιέχουν*; Turkish *işlem yaptı* ->
  *yaptın*); an intransitive verb's participle in a passive (*è stato arrivato*). A
  word's **frame** in its sentence (:func:`signature`) is the set of its dependents'
  relations among :data:`FRAME_RELS`, each with the marker its dependent carries (the
  lemma of that dependent's ``case`` or ``mark`` child: ``xcomp:a``, ``iobj:σε``,
  ``ccomp:che``; a particle's own lemma, ``compound:prt:an``), and ``pass`` when it has
  a passive dependent (``aux:pass``, ``nsubj:pass``...). A verb lemma **fits** a frame
  when the frame is its most frequent one among its tokens of the same verb form
  and voice (:func:`verb_class`), or, for a frame with at least one dependent, at
  least :data:`MIN_SHARE` of them: a frame without complements must be the lemma's
  usual one, so a mostly transitive verb never comes in where nothing follows.
- **Agreement the annotation leaves out.** A word whose own features lack Gender or
  Number takes them from the words that agree with it (:func:`agreeing`): its
  determiners, adjectives, participles and numerals, the relative pronouns of its
  relative clauses, the genitive postposition of its possessor (Hindi *की*), its head
  noun for an adjective, its subject for a predicate.
  Spanish *persona* annotated ``Number=Sing`` only must stay feminine before *electa*;
  German *Senat, welcher* never becomes *Gericht, welcher*; Italian *le grandi* never
  *le shakespeariani*. The need is a tuple of (feature, value); when those words
  disagree the word keeps its form (:data:`CONFLICT`).
- **Harmony.** A word followed by a clitic or a suffix written apart that harmonises
  with it (Turkish *de/da*, *mi/mı/mu/mü*, *'ta*: :func:`treebanks.sounds.harmonises`)
  is replaced only by a word of the same harmony class (*Kıbrıs'ta da*, never
  *Kıbrıs'ta de*).

:func:`frames_of` reads all three from the treebank columns the items were mined from.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from formats.items import Item
from nonce.pool import CandidatePool, Choices, Key, Pair, subset
from treebanks.cache import load_columns
from treebanks.columns import TreebankColumns
from treebanks.features import parse_feats
from treebanks.sounds import harmonises

#: dependent relations that make a frame (subtypes count as themselves: ``expl:pv``)
FRAME_RELS = ("obj", "iobj", "ccomp", "xcomp", "csubj", "expl", "obl:arg", "compound:prt", "compound:lvc")
#: relations whose dependent's marker (its case or mark child) is part of the frame entry
MARKED = ("obj", "iobj", "ccomp", "xcomp", "csubj", "obl:arg")
#: dependents that make a verb passive
PASSIVE_RELS = ("aux:pass", "nsubj:pass", "csubj:pass", "expl:pass", "obl:agent")
#: the POS whose replacements must keep the frame
FRAME_POS = ("VERB",)
#: the least share of a verb class's tokens with a frame for the lemma to fit it
MIN_SHARE = 0.2
#: relations by which a dependent agrees with its head (the head noun's features)
AGREEING_DEPS = ("det", "amod", "acl", "nummod")
#: the features a word takes from the words that agree with it when its own lack them
NEED_FEATURES = ("Case", "Gender", "Number")
#: a word that keeps its form: its agreeing words disagree, or it opens a relative clause
CONFLICT = (("", ""),)


def _verb_form(feats: str) -> str:
    """The VerbForm of a FEATS string (``Inf``, ``Ger``...; ``""``: none): a complement
    clause's form is part of the frame (Spanish *sigue pasando*, *quiere pasar*)."""
    i = feats.find("VerbForm=")
    return feats[i + 9:].split("|")[0] if i >= 0 else ""


@lru_cache(maxsize=4096)
def verb_class(feats: str) -> str:
    """``VerbForm|Voice`` of a FEATS string (``Part|Pass``; ``|`` for neither)."""
    f = _feats(feats)
    return f"{f.get('VerbForm', '')}|{f.get('Voice', '')}"


@dataclass(frozen=True)
class Context:
    """One sentence's constraints, per token: ``sigs`` its frame (:func:`signature`),
    ``needs`` the (feature, value) pairs its agreeing words impose where its own
    features lack them, ``harmony`` whether the next word harmonises with it."""
    sigs: tuple[str, ...]
    needs: tuple[tuple, ...]
    harmony: tuple[bool, ...]


@dataclass(frozen=True)
class Frames:
    """counts   (lemma, upos, verb class) -> {frame: tokens}
    items    item id -> its sentence's :class:`Context`"""
    counts: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)
    items: dict[str, Context] = field(default_factory=dict)

    def of_item(self, item: Item) -> Context | None:
        """The context of ``item``'s tokens, or None when unknown (another sentence
        length: the item does not come from these columns)."""
        ctx = self.items.get(item.item_id)
        return ctx if ctx is not None and len(ctx.sigs) == len(item.tokens) else None

    def fits(self, lemma: str | None, upos: str, vclass: str, sig: str, usual_only: bool = False) -> bool:
        """Whether ``lemma`` takes frame ``sig`` (the module doc's rule; ``usual_only``:
        only as its most frequent frame, the rule for a target, whose frame decides
        whether the cue can read as its object)."""
        got = self.counts.get((lemma, upos, vclass))
        if not got or not got.get(sig):
            return False
        usual = max(got.items(), key=lambda kv: (kv[1], -len(kv[0]), kv[0]))[0]
        if usual_only:
            # a target without an object: a lemma that often takes one would let the cue
            # read as its object once the verb disagrees (Turkish *öyküler veriyorum*)
            with_obj = sum(k for f, k in got.items() if _has_object(f))
            return sig == usual and (_has_object(sig) or with_obj <= MIN_SHARE * sum(got.values()))
        return sig == usual or (sig != "" and got[sig] >= MIN_SHARE * sum(got.values()))


def _has_object(sig: str) -> bool:
    """Whether frame ``sig`` has an object: ``obj`` (with a marker or not) or the noun of a
    light verb (``compound:lvc``, Turkish *karar ver-*, *açıklama yap-*)."""
    return any(e == "obj" or e.startswith(("obj:", "compound:lvc")) for e in sig.split("+") if e)


class _Words:
    """A treebank's words as global arrays (lemmas and forms as strings)."""

    def __init__(self, tb: TreebankColumns):
        names, rel = tb.deprels()
        self.rel = np.array(names, dtype=object)[rel] if names else np.array([], dtype=object)
        self.lemma = np.concatenate([np.array(f.tables[1], dtype=object)[f.arrays["lemma"]] for f in tb.files])
        self.form = np.concatenate([np.array(f.tables[0], dtype=object)[f.arrays["form"]] for f in tb.files])
        self.upos = np.array(tb.upos_names, dtype=object)[tb.upos]
        self.feats = np.array(tb.feats_names, dtype=object)[tb.feats]
        sent = np.repeat(np.arange(len(tb.starts) - 1), np.diff(tb.starts))
        self.head = np.where(tb.heads >= 0, tb.starts[sent] + tb.heads, -1)
        self.children: dict[int, list[int]] = defaultdict(list)
        for w, h in enumerate(self.head.tolist()):
            if h >= 0:
                self.children[h].append(w)
        self.sig = self._signatures()

    def marker(self, w: int) -> str:
        """The lemma of ``w``'s first ``case`` or ``mark`` child (lower case), or ``""``."""
        for c in self.children.get(w, ()):
            if self.rel[c].split(":")[0] in ("case", "mark"):
                return str(self.lemma[c]).lower()
        return ""

    def _signatures(self) -> dict[int, str]:
        entries: dict[int, set] = defaultdict(set)
        for w, h in enumerate(self.head.tolist()):
            r = self.rel[w]
            if h < 0:
                continue
            if r in PASSIVE_RELS:
                entries[h].add("pass")
            base = r if r in FRAME_RELS else r.split(":")[0]
            if base not in FRAME_RELS and not r.startswith("expl"):
                continue
            if r.startswith("expl"):
                entries[h].add(r)
            elif base in ("compound:prt", "compound:lvc"):
                entries[h].add(f"{base}:{str(self.lemma[w]).lower()}")
            else:
                m = self.marker(w) if base in MARKED else ""
                vf = _verb_form(self.feats[w]) if base in ("xcomp", "ccomp", "csubj") else ""
                entries[h].add(":".join(p for p in (base, m, vf) if p))
        return {h: "+".join(sorted(e)) for h, e in entries.items()}


def signature(words: _Words, w: int) -> str:
    """Word ``w``'s frame in its sentence (module doc); ``""``: no such dependent."""
    return words.sig.get(w, "")


def agreeing(words: _Words, w: int) -> list[int]:
    """The words that agree with word ``w`` (module doc)."""
    out = []
    head, r = int(words.head[w]), words.rel[w].split(":")[0]
    for c in words.children.get(w, ()):
        rc = words.rel[c]
        base = rc.split(":")[0]
        if base in AGREEING_DEPS and (base != "acl" or words.upos[c] == "ADJ" or "VerbForm=Part" in words.feats[c]):
            out.append(c)
        elif base == "nmod":      # a genitive postposition agreeing with the possessed noun
            out.extend(g for g in words.children.get(c, ()) if words.rel[g] == "case" and "Gender=" in words.feats[g])
        elif rc == "acl:relcl":   # the relative pronouns of its relative clause
            out.extend(g for g in words.children.get(c, ()) if "PronType=Rel" in words.feats[g])
        elif base == "nsubj" and words.upos[w] in ("ADJ", "VERB"):
            out.append(c)         # a predicate agrees with its subject
    if head >= 0 and (r in ("amod", "acl") or (r == "nsubj" and words.upos[head] in ("ADJ",))):
        out.append(head)
    return out


@lru_cache(maxsize=4096)
def _feats(feats: str) -> dict:
    return parse_feats(feats) if feats and feats != "_" else {}


def _needs(words: _Words, w: int) -> tuple:
    if words.upos[w] not in ("NOUN", "PROPN", "ADJ"):
        return ()
    own = _feats(words.feats[w])
    missing = [f for f in NEED_FEATURES if f not in own]
    if not missing:
        return ()
    need: dict[str, str] = {}
    for a in agreeing(words, w):
        theirs = _feats(words.feats[a])
        for f in missing:
            v = theirs.get(f, "")
            if not v or "," in v:
                continue
            if need.setdefault(f, v) != v:
                return CONFLICT
    return tuple(sorted(need.items()))


def _opens_relative(words: _Words, w: int) -> bool:
    """Whether ``w`` is an adverb opening a relative clause (Dutch *waarin*, *waarop*, which
    Alpino gives no PronType): another adverb there leaves the clause without its link."""
    h = int(words.head[w])
    return (h > w and words.upos[w] == "ADV" and words.rel[h].startswith("acl")
            and w == min(words.children.get(h, (w,))))


def _context(words: _Words, lo: int, hi: int, lang: str | None) -> Context:
    sigs = tuple(words.sig.get(w, "") for w in range(lo, hi))
    needs = tuple(CONFLICT if _opens_relative(words, w) else _needs(words, w) for w in range(lo, hi))
    harmony = tuple(w + 1 < hi and harmonises(str(words.form[w + 1]), lang, str(words.lemma[w + 1]))
                    for w in range(lo, hi))
    return Context(sigs, needs, harmony)


def _counts(words: _Words, pos: Iterable[str]) -> dict:
    counts: dict = defaultdict(Counter)
    wanted = set(pos)
    for w in np.flatnonzero(np.isin(words.upos, list(wanted))).tolist():
        counts[words.lemma[w], words.upos[w], verb_class(words.feats[w])][words.sig.get(w, "")] += 1
    return {k: dict(v) for k, v in counts.items()}


def frames_of(tb: TreebankColumns, items: Iterable[Item], stem_of, pos: Iterable[str] = FRAME_POS,
              lang: str | None = None) -> Frames:
    """The frame counts of ``tb``'s lemmas of ``pos`` and the :class:`Context` of the
    relation items among ``items`` (ids ``<stem>:<sent_id>:<cue>-<target>:<feature>``;
    ``stem_of``: a treebank file path -> the stem its items' ids start with)."""
    words = _Words(tb)
    sentence_of: dict[str, int] = {}
    k0 = 0
    for f in tb.files:
        stem = stem_of(f.source)
        for j, sid in enumerate(f.sent_ids):
            sentence_of[f"{stem}:{sid}"] = k0 + j
        k0 += len(f)
    by_item, by_sentence = {}, {}
    for it in items:
        k = sentence_of.get(it.item_id.rsplit(":", 2)[0]) if it.relation else None
        if k is not None:
            if k not in by_sentence:
                by_sentence[k] = _context(words, int(tb.starts[k]), int(tb.starts[k + 1]), lang)
            by_item[it.item_id] = by_sentence[k]
    return Frames(_counts(words, pos), by_item)


class FrameFilter:
    """A verb's candidates (forms, or target pairs) narrowed to lemmas that fit the
    replaced verb's frame in its sentence (the caller keeps what it narrows:
    :func:`nonce.fit.fitting`). ``pool``: the :class:`nonce.pool.CandidatePool` the
    candidates come from."""

    def __init__(self, frames: Frames, pool: CandidatePool):
        self.frames, self.pool = frames, pool

    def _lemma(self, form: str, upos: str, feats: str) -> str | None:
        for a, _ in self.pool.table.analyses(form):
            if a.upos == upos and a.feats == feats:
                return a.lemma
        return None

    def words(self, cands: Choices[str], key: Key, sig: str) -> Choices[str] | None:
        """``cands`` (the forms of ``key``) whose lemma fits frame ``sig``."""
        upos, feats = key[0], key[1]
        vc, fits = verb_class(feats), self.frames.fits
        return subset(cands, lambda f: fits(self._lemma(f, upos, feats), upos, vc, sig), lambda f: f)

    def pairs(self, pairs: Choices[Pair], key: Key, sig: str) -> Choices[Pair] | None:
        """Target ``pairs`` (of ``key``) whose lemma takes frame ``sig`` as its usual one."""
        upos, vc, fits = key[0], verb_class(key[1]), self.frames.fits
        return subset(pairs, lambda p: fits(p.lemma, upos, vc, sig, True), lambda p: p.lemma)


def frames_for_files(files, items: Iterable[Item], stem_of, cache_dir=None, workers: int | None = None,
                     lang: str | None = None) -> Frames:
    """:func:`frames_of` the treebank ``files`` (read through the parse cache at
    ``cache_dir``, as the extraction read them)."""
    tb, _ = load_columns(list(files), cache_dir=cache_dir, workers=workers)
    return frames_of(tb, items, stem_of, lang=lang)
