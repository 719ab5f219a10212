"""The candidate index for nonce sentences, built once from a paradigm table.

The released code scans the whole paradigm table for every word it replaces
(about 4 nonce sentences per second on English). Here one pass over the table
builds two indexes, and each replacement is then one dictionary look-up and one
random draw:

- **words**: ``(POS, features, capitalisation, initial class)`` -> the treebank
  word forms with exactly that analysis, each weighted by how often it was seen
  with it. A form qualifies (method.md section 3) when it is POS-unambiguous (it
  was seen with another POS in at most ``ambiguity`` of its occurrences; 0 is the
  released code's exactly-one-POS rule), was seen more than once (``min_count``
  2), and is in the LM vocabulary when one is given. Merged multiword tokens
  (lemma ``fare+lo`` for *farlo*) and forms with a space are never candidates.
- **pairs**: ``(POS, features, capitalisation, initial class)`` -> ``(form,
  alternative form, lemma)`` triples for the target: the alternative is the same
  lemma's other-number form (:meth:`ParadigmTable.alternative`, the rule
  ``agree extract`` used), spelled differently from the form (English past
  tenses such as *grew* have no number contrast), with the same capitalisation,
  differing from it in the agreement features only (the ``closest`` rule may
  offer *brought* for *brings* when a lemma has no plural present; such pairs
  are skipped), both in the vocabulary. The form obeys the word rules above.
  Built per (POS, features) on first use.

- **fused**: a merged multiword token (lemma ``fare+lo`` for *farlo*, a noun with
  prefixed preposition and article ``b+h+bayit``) is replaced by another merged
  token the treebank spells, with the same POS, features and function parts and
  another content part (*dirlo* for *farlo*): the function words stay. The
  content part is the one part whose lemma the treebank also has as a word of
  its own with the token's POS (``fare`` VERB; ``lo`` is a PRON). With no such
  part or no attested re-spelling the position keeps its word (counted by
  :func:`nonce.generate.make_nonce`).

Capitalisation, initial class and a German or Dutch adjective's ending
(:func:`nonce.vowels.ending_class`, appended to the initial class in the key)
come from :mod:`nonce.vowels`. A noun without Gender after a word with one is
narrowed by :meth:`CandidatePool.gender_fits` (in :func:`nonce.generate.make_nonce`). Every list is
sorted (words by form, pairs by lemma then form), so draws depend only on the
random generator, never on dictionary order.
"""
from __future__ import annotations

import bisect
import copy
import dataclasses
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Generic, Hashable, TypeVar

from nonce.vowels import case_class, ending_class, initial_class
from treebanks.features import parse_feats
from treebanks.paradigms import Analysis, ParadigmTable
from treebanks.sounds import is_elided, is_spelling_variant

#: The POS whose words a nonce sentence replaces (method.md section 3).
CONTENT_POS = ("ADJ", "NOUN", "VERB", "PROPN", "NUM", "ADV")

#: nouns whose Gender a replacement must keep when their own analysis lacks it
GENDER_POS = ("NOUN",)

#: (upos, feats, capitalisation class, initial class)
Key = tuple[str, str, str, str]
V = TypeVar("V")


@dataclass(frozen=True)
class Pair:
    """A replacement target: ``form`` (correct), ``alternative`` (wrong), their ``lemma``."""
    form: str
    alternative: str
    lemma: str


@dataclass(frozen=True, eq=False)
class Choices(Generic[V]):
    """Values to draw from, with corpus-frequency weights.

    values   sorted values (word forms, or :class:`Pair`)
    cum      cumulative weights: ``cum[i]`` = weight of ``values[0..i]``
    groups   group id -> ``(start, end)``: the contiguous slice a draw can exclude
             (a form for words, a lemma for pairs)
    """
    values: tuple[V, ...]
    cum: tuple[int, ...]
    groups: dict[Hashable, tuple[int, int]] = field(repr=False)

    def __len__(self) -> int:
        return len(self.values)

    def available(self, exclude: Hashable = None) -> int:
        """How many values lie outside group ``exclude``."""
        start, end = self.groups.get(exclude, (0, 0))
        return len(self.values) - (end - start)

    def draw(self, rng: random.Random, weighted: bool, exclude: Hashable = None) -> V | None:
        """A random value outside group ``exclude``, uniformly over values or, with
        ``weighted``, proportionally to frequency; None when nothing else is left.

        Exactly one call to the generator per draw (``randrange`` or ``random``),
        so the stream stays aligned whatever is excluded."""
        n = len(self.values)
        start, end = self.groups.get(exclude, (0, 0))
        left = n - (end - start)
        if left <= 0:
            return None
        if not weighted:
            j = rng.randrange(left)
            return self.values[j + (end - start) if j >= start else j]
        before = self.cum[start - 1] if start else 0
        w_ex = (self.cum[end - 1] - before) if end > start else 0
        r = rng.random() * (self.cum[-1] - w_ex)
        if r >= before:
            r += w_ex
        j = min(bisect.bisect_right(self.cum, r), n - 1)
        if start <= j < end:  # float rounding at a slice edge
            j = start - 1 if start else end
        return self.values[j]


def subset(choices: Choices[V], keep, group_of) -> Choices[V] | None:
    """The values of ``choices`` that ``keep`` accepts, with their weights and order
    (``group_of`` as they were built with); None when none is kept."""
    order = {v: i for i, v in enumerate(choices.values)}
    weights = {v: choices.cum[i] - (choices.cum[i - 1] if i else 0)
               for i, v in enumerate(choices.values) if keep(v)}
    return _choices(weights, group_of, order.__getitem__) if weights else None


def _choices(weights: dict, group_of, sort_key) -> Choices:
    """Choices from ``{value: weight}``, sorted by ``sort_key`` (which must keep each
    group contiguous)."""
    values = sorted(weights, key=sort_key)
    cum, total, groups = [], 0, {}
    for i, v in enumerate(values):
        total += weights[v]
        cum.append(total)
        g = group_of(v)
        s, _ = groups.get(g, (i, i))
        groups[g] = (s, i + 1)
    return Choices(tuple(values), tuple(cum), groups)


def _main_forms(analyses) -> dict[tuple[str, str], str]:
    """(lemma, capitalisation) -> the most frequent form of one cell's ``analyses`` (ties:
    the form that sorts first): a cell's other spellings and forms the annotation does
    not tell apart (Dutch *kun*, 2sg, beside *kan*) are no target of a nonce pair."""
    best: dict[tuple[str, str], tuple[int, str]] = {}
    for a, n in analyses:
        k = (a.lemma, case_class(a.form))
        if k not in best or (-n, a.form) < (-best[k][0], best[k][1]):
            best[k] = (n, a.form)
    return {k: form for k, (_, form) in best.items()}


def _same(form: str) -> str:
    return form


def _lemma(p: Pair) -> str:
    return p.lemma


def _lemma_form(p: Pair) -> tuple[str, str, str]:
    return (p.lemma, p.form, p.alternative)


@dataclass(frozen=True)
class PoolOptions:
    """What makes a treebank word a candidate.

    ambiguity    largest share of a form's occurrences with another POS (0 = one POS only)
    min_count    fewest occurrences of the form (2 = "seen more than once")
    vocab        the LM vocabulary; None = no restriction
    lang         language code for the initial-class rule (``en``, ``it`` ...)
    vowel_rule   whether candidates must share the replaced word's initial class
    features     agreement features (``agree extract --features``), for the alternatives
    alternative_mode  ``closest`` or ``exact`` (:meth:`ParadigmTable.alternative`)
    content_pos  the POS that are replaced
    """
    ambiguity: float = 0.1
    min_count: int = 2
    vocab: frozenset[str] | None = None
    lang: str | None = None
    vowel_rule: bool = False
    features: tuple[str, ...] = ("Number",)
    alternative_mode: str = "closest"
    content_pos: tuple[str, ...] = CONTENT_POS
    values: tuple[str, ...] = ("Sing", "Plur")  #: the Number values contrasted (``agree extract --values``)


#: why a merged token keeps its word (keys of ``positions_fused_unchanged``)
FUSED_NO_CONTENT = "content_part_unknown"
FUSED_NO_SPELLING = "no_attested_respelling"


class CandidatePool:
    """The word and target-pair indexes of one paradigm table (see the module doc)."""

    def __init__(self, table: ParadigmTable, options: PoolOptions = PoolOptions()):
        self.table = table
        self.options = options
        form_total: dict[str, int] = defaultdict(int)
        form_pos: dict[tuple[str, str], int] = defaultdict(int)
        gendered: set[str] = set()
        for a, n in table.counts.items():
            form_total[a.form] += n
            form_pos[a.form, a.upos] += n
            if a.upos in GENDER_POS and "Gender=" in a.feats:
                gendered.add(a.upos)
        self._form_total, self._form_pos = form_total, form_pos
        self._gendered = frozenset(gendered)  # the noun POS this treebank gives a Gender
        self._genders: dict[tuple[str, str], frozenset[str]] = {}
        self._gender_fits: dict = {}
        self._classes: dict[str, tuple[str, str]] = {}  # form -> (case, initial) class
        # analyses of qualifying forms, by (upos, feats): the pair index reads them
        self._by_analysis: dict[tuple[str, str], list[tuple[Analysis, int]]] = defaultdict(list)
        words: dict[Key, dict[str, int]] = {}
        content = set(options.content_pos)
        qualifies, key = self.qualifies, self.key
        for a, n in table.counts.items():
            # merged multiword tokens (lemma "fare+lo": "farlo") carry a clitic or an
            # article the analysis does not show; forms with a space would split in items.tsv
            if "+" in a.lemma or " " in a.form or not qualifies(a.form, a.upos):
                continue
            self._by_analysis[a.upos, a.feats].append((a, n))
            if a.upos in content:
                forms = words.setdefault(key(a.form, a.upos, a.feats), {})
                forms[a.form] = forms.get(a.form, 0) + n
        self.words: dict[Key, Choices[str]] = {k: _choices(v, _same, _same) for k, v in words.items()}
        self._pairs: dict[Key, Choices[Pair]] = {}
        self._pairs_built: set[tuple[str, str]] = set()
        self._fused: dict | None = None   # (upos, feats, parts with the content one blanked) -> {form: n}
        self._plain_lemmas: set | None = None

    def for_contrast(self, features: tuple[str, ...], values: tuple[str, ...]) -> "CandidatePool":
        """The same word index with target pairs contrasting ``features`` towards
        ``values`` (a relation item's feature and wrong value: a Gender item's pairs
        differ in Gender, a Person item's reach the same other person)."""
        pool = copy.copy(self)
        pool.options = dataclasses.replace(self.options, features=tuple(features), values=tuple(values))
        pool._pairs, pool._pairs_built = {}, set()
        return pool

    # -- merged multiword tokens ------------------------------------------------
    def merged_lemma(self, form: str, upos: str, feats: str) -> str | None:
        """The ``a+b`` lemma of ``form`` when the treebank has it as a merged token
        with this POS and features (its most frequent such analysis), else None."""
        for a, _ in self.table.analyses(form):
            if a.upos == upos and a.feats == feats:
                return a.lemma if "+" in a.lemma else None
        return None

    def content_part(self, lemma: str, upos: str) -> int | None:
        """Index of the content part of a merged lemma (see the module doc), or None."""
        if self._plain_lemmas is None:
            self._plain_lemmas = {(a.lemma, a.upos) for a in self.table.counts if "+" not in a.lemma}
        hits = [i for i, part in enumerate(lemma.split("+")) if (part, upos) in self._plain_lemmas]
        return hits[0] if len(hits) == 1 else None

    def _fused_key(self, lemma: str, k: int, upos: str, feats: str, form: str):
        parts = lemma.split("+")
        return (upos, feats, tuple(p if i != k else None for i, p in enumerate(parts))) + self.key(form, upos, feats)[2:]

    def fused_candidates(self, form: str, lemma: str, upos: str, feats: str) -> tuple[Choices[str] | None, str]:
        """Attested merged forms that swap only the content part of ``form``
        (``lemma`` ``fare+lo``), and, when there are none, why (a FUSED_* reason)."""
        k = self.content_part(lemma, upos)
        if k is None:
            return None, FUSED_NO_CONTENT
        if self._fused is None:
            index: dict = defaultdict(dict)
            for a, n in self.table.counts.items():
                if "+" not in a.lemma or " " in a.form or not self.qualifies(a.form, a.upos):
                    continue
                j = self.content_part(a.lemma, a.upos)
                if j is not None:
                    forms = index[self._fused_key(a.lemma, j, a.upos, a.feats, a.form)]
                    forms[a.form] = forms.get(a.form, 0) + n
            self._fused = {key: _choices(v, _same, _same) for key, v in index.items()}
        cands = self._fused.get(self._fused_key(lemma, k, upos, feats, form))
        if cands is None or not cands.available(form):
            return None, FUSED_NO_SPELLING
        return cands, ""

    def qualifies(self, form: str, upos: str) -> bool:
        """Seen often enough, POS-unambiguous enough, in the vocabulary."""
        total = self._form_total.get(form, 0)
        o = self.options
        return (total >= o.min_count and total - self._form_pos.get((form, upos), 0) <= o.ambiguity * total
                and (o.vocab is None or form in o.vocab))

    def key(self, form: str, upos: str, feats: str) -> Key:
        """The index key a replacement for ``form`` (analysed ``upos``/``feats``) must share:
        capitalisation, elision (an elided word for an elided word), initial class and, for a German or Dutch adjective, its ending
        (:func:`nonce.vowels.ending_class`, after the initial class: ``V|er``)."""
        classes = self._classes.get(form)
        if classes is None:
            initial = initial_class(form, self.options.lang) if self.options.vowel_rule else ""
            # an elided word (French n', Italian anch') is written glued to the next one:
            # only another elided word can take its place without gluing a non-word
            elided = "|elided" if is_elided(form) else ""
            classes = self._classes[form] = (case_class(form) + elided, initial)
        ending = ending_class(form, upos, self.options.lang)
        if ending:
            return (upos, feats, classes[0], f"{classes[1]}|{ending}")
        return (upos, feats) + classes

    def genders(self, form: str, upos: str) -> frozenset[str]:
        """The Genders of ``form``'s analyses as ``upos`` (empty: none has one)."""
        got = self._genders.get((form, upos))
        if got is None:
            got = self._genders[form, upos] = frozenset(
                g for a, _ in self.table.analyses(form) if a.upos == upos
                for g in parse_feats(a.feats).get("Gender", "").split(",") if g)
        return got

    def gender_fits(self, cands: Choices[str], key: Key, gender: str) -> Choices[str] | None:
        """For a noun whose analysis lacks the Gender its treebank gives other nouns,
        after a word of ``gender`` (Spanish *la base* with FEATS ``Number=Sing``): the
        candidates that have that gender or none at all (Italian epicenes, *la
        presidente*, *la consulente*), never *la cabo* (made once per key and gender)."""
        ck = (key, gender)
        if ck not in self._gender_fits:
            upos = key[0]
            self._gender_fits[ck] = subset(cands, lambda f: not self.genders(f, upos) or gender in self.genders(f, upos),
                                           _same)
        return self._gender_fits[ck]

    def analyses_of(self, upos: str, feats: str) -> list:
        """The (analysis, count) pairs of qualifying forms with ``upos`` and ``feats``."""
        return self._by_analysis.get((upos, feats), [])

    def cached(self, key, make):
        """``make()`` once per ``key`` (narrowed candidates kept with the pool)."""
        if key not in self._gender_fits:
            self._gender_fits[key] = make()
        return self._gender_fits[key]

    def gendered(self, upos: str) -> bool:
        """Whether the treebank gives some ``upos`` word a Gender."""
        return upos in self._gendered

    def candidates(self, key: Key) -> Choices[str] | None:
        return self.words.get(key)

    def pairs(self, key: Key) -> Choices[Pair] | None:
        """Target pairs for ``key``; the (POS, features) slice is built on first use."""
        upos, feats = key[0], key[1]
        if (upos, feats) not in self._pairs_built:
            self._build_pairs(upos, feats)
        return self._pairs.get(key)

    def alternative(self, lemma: str, upos: str, feats: str) -> str | None:
        """The other-number form, by the extract run's rule (the table caches it)."""
        return self.table.alternative(lemma, upos, feats, features=self.options.features,
                                      mode=self.options.alternative_mode, values=self.options.values)

    def _build_pairs(self, upos: str, feats: str) -> None:
        self._pairs_built.add((upos, feats))
        vocab = self.options.vocab
        by_key: dict[Key, dict[Pair, int]] = defaultdict(lambda: defaultdict(int))
        analyses = self._by_analysis.get((upos, feats), ())
        main = _main_forms(analyses)
        for a, n in analyses:
            if main[a.lemma, case_class(a.form)] != a.form:
                continue   # kun beside kan (Alpino gives verbs no Person), muß beside muss: not the cell's form
            alt = self.alternative(a.lemma, upos, feats)
            if (alt is None or alt.lower() == a.form.lower() or is_spelling_variant(a.form, alt) or " " in alt
                    or case_class(alt) != case_class(a.form)):
                continue
            if (vocab is not None and alt not in vocab) or not self._contrast_only(alt, a):
                continue
            by_key[self.key(a.form, upos, feats)][Pair(a.form, alt, a.lemma)] += n
        for k, weights in by_key.items():
            self._pairs[k] = _choices(weights, _lemma, _lemma_form)

    def _contrast_only(self, alt: str, a: Analysis) -> bool:
        """Whether ``alt`` has an analysis of ``a``'s lemma and POS that differs from
        ``a`` in the agreement features and contradicts none of its other features
        (a feature may be absent on one side: Russian plural past tenses drop Gender).
        The ``closest`` rule can return e.g. *brought* (past) for *brings*."""
        own = parse_feats(a.feats)
        agr = self.options.features
        for b, _ in self.table.analyses(alt):
            if b.lemma != a.lemma or b.upos != a.upos:
                continue
            other = parse_feats(b.feats)
            if all(other.get(f) == own.get(f) for f in agr):
                continue
            if all(other[k] == v for k, v in own.items() if k in other and k not in agr):
                return True
        return False

    def stats(self) -> dict[str, int]:
        return {"word_keys": len(self.words), "candidate_words": sum(len(c) for c in self.words.values()),
                "pair_keys": len(self._pairs), "pairs": sum(len(c) for c in self._pairs.values())}
