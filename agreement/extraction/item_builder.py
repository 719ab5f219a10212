"""The one item step of both mining methods: a candidate arc -> an :class:`Item`
(method.md section 2, steps 5-7; section 2b).

An arc source (:mod:`agreement.extraction.constructions`, :mod:`agreement.extraction.relations`)
yields :class:`CandidateArc` records; :class:`ItemBuilder` turns each into an
item or drops it, counting the drop under the arc's ``group`` (a construction
key, a (relation, feature) pair). In order:

1. the wrong form: ``wrong_forms(arc)`` (a :data:`WrongForms` hook: the paradigm
   table for constructions, the pooled tables and a lexicon for relations)
   returns a :class:`WrongChoice` or a :class:`Rejection` naming the counter
   (``no_alternative``; ``non_contrast_difference`` when the only other-value
   forms differ in more than the contrasted feature, its ``detail`` kept for
   ``--explain``);
2. the filters, a list of :class:`ItemFilter` in order, each dropping under its
   own name (:data:`DEFAULT_FILTERS`: ``same_spelling``, ``vocab``);
3. attractors (step 7, :class:`Attractors`), then the item, counted as ``items``.

New filters (syncretism, spelling variants, elision) are :class:`ItemFilter`
entries; a new wrong-form source (a reinflection model) is a :data:`WrongForms`
function whose :class:`WrongChoice` records its ``source``.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Sequence

from agreement.extraction.itemtools import ATTRACTOR_MIN_SHARE, as_word, file_stem
from formats.items import Item
from treebanks.features import feature_values
from treebanks.paradigms import ParadigmTable
from treebanks.reader import Sentence


@dataclass(frozen=True)
class CandidateArc:
    """One agreeing arc an arc source offers for an item; the fields after
    ``value`` are the item's labels, as items.tsv writes them."""
    sentence: Sentence
    cue: int                   #: 0-based index of the cue in the sentence
    target: int                #: 0-based index of the target (before the cue when it precedes it)
    features: tuple[str, ...]  #: the contrasted features (the wrong form and attractors differ in them)
    value: tuple[str, ...]     #: the value of each that cue and target share
    construction: str          #: items.tsv ``construction``: "L NOUN VERB VERB", "subj-verb Number"
    group: Hashable = ""       #: the counts its drops and item go to
    direction: str = "_"       #: ``L`` / ``R`` (constructions)
    id_suffix: str = ""        #: after ``<stem>:<sent_id>:<cue>-<target>`` (":Number" for relations)
    relation: str = ""         #: relation items: the relation, and the feature as the target carries it
    carried: str = ""
    scoring: str = ""          #: relation items: ``target`` or ``sentence`` (the target precedes its cue)
    #: the values an attractor's reading may have (None: any other value)
    contrast: frozenset[tuple[str, ...]] | None = None

    @property
    def span(self) -> tuple[int, int]:
        """The arc's ends in sentence order."""
        return (self.cue, self.target) if self.cue < self.target else (self.target, self.cue)


@dataclass(frozen=True)
class WrongChoice:
    """The wrong form chosen for an arc, spelled as the item writes it."""
    form: str
    value: str = ""   #: its value of the contrasted feature (items.tsv ``wrong_value``)
    source: str = ""  #: where it was found (items.tsv ``wrong_source``)
    feats: str = ""   #: its cell's FEATS, where the source knows it (the relation filters read it)


@dataclass(frozen=True)
class Rejection:
    """No wrong form: the counter to count it under, and for ``--explain`` what was turned down."""
    counter: str
    detail: tuple = ()  #: (alternative, [features that differed]) of the first form turned down


#: the wrong-form hook: an arc -> its wrong form, or why it has none
WrongForms = Callable[[CandidateArc], "WrongChoice | Rejection"]


@dataclass(frozen=True)
class ItemFilter:
    """One item filter: ``drops(arc, wrong)`` true drops the arc, counted as ``name``."""
    name: str
    drops: Callable[[CandidateArc, WrongChoice], bool]


def same_spelling(arc: CandidateArc, wrong: WrongChoice) -> bool:
    """The wrong form is spelled like the target (*said* / *said*)."""
    return wrong.form == arc.sentence.tokens[arc.target].form


def vocab_filter(vocab: frozenset[str] | None) -> ItemFilter:
    """With a vocabulary: the wrong form or a word from cue to target is outside it (the paper's filter)."""
    def drops(arc: CandidateArc, wrong: WrongChoice) -> bool:
        lo, hi = arc.span
        return vocab is not None and (wrong.form not in vocab or any(
            t.form not in vocab for t in arc.sentence.tokens[lo:hi + 1]))
    return ItemFilter("vocab", drops)


def default_filters(vocab: frozenset[str] | None) -> list[ItemFilter]:
    """The item filters both methods apply, in order."""
    return [ItemFilter("same_spelling", same_spelling), vocab_filter(vocab)]


class Attractors:
    """Method.md step 7: context words with, among their analyses in ``table`` at
    least :data:`ATTRACTOR_MIN_SHARE` as frequent as their most frequent one, one
    with the cue's POS and another value of the arc's features."""

    def __init__(self, table: ParadigmTable):
        self.table = table
        self._readings: dict[tuple, frozenset] = {}

    def readings(self, form: str, features: tuple[str, ...]) -> frozenset:
        """(upos, value of ``features``) of the form's analyses that count."""
        r = self._readings.get((form, features))
        if r is None:
            rows = self.table.analyses(form)
            top = rows[0][1] if rows else 0
            r = self._readings[form, features] = frozenset(
                (a.upos, v) for a, n in rows if n >= ATTRACTOR_MIN_SHARE * top
                and (v := feature_values(a.feats, features)) is not None)
        return r

    def count(self, arc: CandidateArc) -> int:
        tokens = arc.sentence.tokens
        lo, hi = arc.span
        cue_pos, allowed = tokens[arc.cue].upos, arc.contrast
        return sum(1 for t in tokens[lo + 1:hi] if any(
            u == cue_pos and v != arc.value and (allowed is None or v in allowed)
            for u, v in self.readings(t.form, arc.features)))


class ItemBuilder:
    """Candidate arcs -> items: the wrong-form hook, the filters, attractors, each
    drop counted in ``counts[arc.group]`` (module docstring)."""

    def __init__(self, wrong_forms: WrongForms, filters: Sequence[ItemFilter], attractors: Attractors,
                 counts: dict[Hashable, Counter] | None = None):
        self.wrong_forms, self.filters, self.attractors = wrong_forms, list(filters), attractors
        self.counts = counts if counts is not None else defaultdict(Counter)
        self.rejections: dict[Hashable, list] = {}  # group -> [(target, alternative, differing features)]

    def items(self, arcs: Iterable[CandidateArc]) -> list[Item]:
        return [it for arc in arcs if (it := self.item(arc)) is not None]

    def item(self, arc: CandidateArc) -> Item | None:
        counts = self.counts[arc.group]
        wrong = self.wrong_forms(arc)
        if isinstance(wrong, Rejection):
            counts[wrong.counter] += 1
            if wrong.detail:
                self.rejections.setdefault(arc.group, []).append(
                    (arc.sentence.tokens[arc.target].form, *wrong.detail))
            return None
        for f in self.filters:
            if f.drops(arc, wrong):
                counts[f.name] += 1
                return None
        counts["items"] += 1
        return make_item(arc, wrong, self.attractors.count(arc))

    def explain_rejections(self, group: Hashable) -> str:
        """Lines for ``--explain``: targets whose other-value form differed in more than the feature."""
        rows = self.rejections.get(group, [])
        if not rows:
            return ""
        shown = "; ".join(f"{t} / {alt}: {', '.join(diff)}" for t, alt, diff in rows[:5])
        return (f"\n  rejected, other-number form differs beyond number: {len(rows)} "
                f"(e.g. {shown})")


def make_item(arc: CandidateArc, wrong: WrongChoice, attractors: int) -> Item:
    s, tokens = arc.sentence, arc.sentence.tokens
    lo, hi = arc.span
    target = tokens[arc.target]
    return Item(
        item_id=f"{file_stem(s.source)}:{s.sent_id}:{arc.cue}-{arc.target}{arc.id_suffix}",
        variant=0, construction=arc.construction, direction=arc.direction,
        tokens=tuple(as_word(t.form) for t in tokens), pos=tuple(t.upos for t in tokens),
        feats=tuple(t.feats for t in tokens), correct=as_word(target.form), wrong=as_word(wrong.form),
        lemma=target.lemma, number=",".join(arc.value), cue_index=arc.cue, target_index=arc.target,
        attractors=attractors, punct=any(t.upos == "PUNCT" for t in tokens[lo + 1:hi]),
        space_after=tuple(t.space_after for t in tokens[:-1]) + (False,),  # none after the end
        relation=arc.relation, feature=arc.carried, wrong_value=wrong.value,
        scoring=arc.scoring,
        wrong_source=wrong.source)
