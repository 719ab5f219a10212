"""Wrong forms from a language's morphology: a reinflection model learned from the
pooled treebanks' (lemma, features, form) counts.

A wrong form is looked up, in this order (:attr:`Generated.origin` says which answered):

* ``attested``: the cell (lemma, UPOS, FEATS) occurs in the treebanks; its most
  frequent form (ties: the form that sorts first);
* ``lexicon``: a UniMorph lexicon has the cell (:mod:`treebanks.unimorph`); a cell
  the lexicon spells two ways that the treebanks do not settle is left out
  (:attr:`Reinflector.lexicon_conflicts`): picking one could pick the rare variant;
* ``generated``: an edit rule (:mod:`treebanks.reinflect_rules`) from another cell
  of the same lemma. Rules are keyed by the cell change (UPOS, source cell, target
  cell), for every target cell that carries an agreement feature and every source
  cell a lemma has, and by the lemma itself (source :data:`LEMMA`). Among the
  lemma's cells the source whose rule class is most reliable answers.
* ``generated`` by the agreement change alone (:meth:`Reinflector.by_change`): where two
  cells differ only in agreement features, their pair is also filed under that change
  (``Person=3>1``, with the source's VerbForm and whether it has a Case), across every
  tense and mood: a small treebank rarely has one lemma in the 3sg and 1sg of the same
  tense, but many in the 3sg and 1sg of some tense. Its class is the change and the source
  form's last two letters, with no back-off, held out and held to 95% like the others.

**Reliability.** Every training pair is also predicted with its own contribution
left out (hide the cell, predict it from the rest). A *rule class* is (UPOS, source
cell, target cell, the source form's last two letters); its reliability is the
share of its held-out predictions that were right, backing off to the last letter,
then to the cell change alone, while a class has fewer than :data:`MIN_SUPPORT`
predictions. :meth:`Reinflector.form_of` generates a form only when that share is
at least ``min_reliability`` (:data:`RELIABLE`, 95%).

**Syncretism** is learned, not listed: an identity rule (English ``VerbForm=Inf`` ->
plural present) is a rule like any other, and :meth:`Reinflector.analyses` gives
every cell a form has, attested or generated, so that a pair whose wrong form also
reads as agreeing with the cue can be dropped (German 1sg ``gebe`` is also the 3sg
subjunctive). :meth:`Reinflector.syncretisms` lists the cell pairs that share their
forms in most lemmas.

Everything is iterated in sorted order: the same counts give the same rules,
answers and tables.
"""
from __future__ import annotations

import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping

from treebanks.paradigms import Analysis
from treebanks.reinflect_cells import (agreeing, contrast, lexicon_only_cells, most_frequent, spellings,
                                       uncapitalised)
from treebanks.reinflect_rules import RuleIndex, agreement_change, change_classes
from treebanks.sounds import is_spelling_variant
from treebanks.unimorph import Lexicon

#: the source cell of lemma -> form rules
LEMMA = "LEMMA"
#: the held-out accuracy a rule class needs before its forms are used
RELIABLE = 0.95
#: held-out predictions a rule class needs before its accuracy is trusted
MIN_SUPPORT = 10
ORIGINS = ("attested", "lexicon", "generated")
#: parts of speech that never inflect for agreement (no rules are learned for them)
_SKIP_UPOS = frozenset({"PUNCT", "SYM", "X", "ADP", "CCONJ", "SCONJ", "INTJ", "_"})
#: analyses that are no cell of a paradigm: misspellings, abbreviations, foreign words
_NOT_PARADIGM = ("Typo=Yes", "Abbr=Yes", "Foreign=Yes")


@dataclass(frozen=True)
class Generated:
    """A form of a cell and where it came from."""
    form: str
    lemma: str
    upos: str
    feats: str
    origin: str               #: ``attested``, ``lexicon`` or ``generated``
    source_feats: str = ""    #: generated: the cell the rule started from (``LEMMA``: the lemma)
    source_form: str = ""     #: generated: the form the rule rewrote
    rule: str = ""            #: generated: the edit, ``-en->e``
    reliability: float = 1.0  #: generated: its rule class's held-out accuracy
    support: int = 0          #: generated: held-out predictions behind that accuracy


@dataclass(frozen=True)
class Reading:
    """One analysis of a form: an attested one (reliability 1) or a generated one."""
    form: str
    lemma: str
    upos: str
    feats: str
    origin: str
    reliability: float = 1.0


@dataclass(frozen=True)
class HeldOutRow:
    """Held-out reinflection of one UPOS across one agreement feature (source and
    target cells differ in it and at most other agreement features)."""
    upos: str
    feature: str
    tests: int              #: attested (lemma, source cell, target cell) triples predicted
    correct: int            #: ... predicted right (no prediction counts as wrong)
    reliable_tests: int     #: ... whose rule class was reliable (judged on the other half of the lemmas)
    reliable_correct: int   #: ... of those, predicted right

    @property
    def accuracy(self) -> float:
        return self.correct / self.tests if self.tests else 0.0

    @property
    def reliable_accuracy(self) -> float:
        return self.reliable_correct / self.reliable_tests if self.reliable_tests else 0.0

    @property
    def coverage(self) -> float:
        return self.reliable_tests / self.tests if self.tests else 0.0


@dataclass(frozen=True)
class Syncretism:
    """Two cells of a UPOS that share their form in ``same`` of ``lemmas`` lemmas."""
    upos: str
    cell_a: str
    cell_b: str
    same: int
    lemmas: int


def _classes(upos: str, src: str, dst: str, form: str) -> tuple[tuple, ...]:
    """A prediction's rule classes, most specific first (module docstring)."""
    return (upos, src, dst, form[-2:]), (upos, src, dst, form[-1:]), (upos, src, dst, "")


def _fold(lemma: str) -> int:
    return zlib.crc32(lemma.encode("utf-8")) & 1


class Reinflector:
    """A language's reinflection model (module docstring); build with :meth:`train`."""

    def __init__(self, cells: dict, lexicon_cells: dict, lexicon_conflicts: int):
        #: (lemma, upos) -> feats -> Counter(form -> tokens)
        self.cells = cells
        #: (lemma, upos) -> feats -> the lexicon's form (cells it spells one way only)
        self.lexicon_cells = lexicon_cells
        self.lexicon_conflicts = lexicon_conflicts
        self.index = RuleIndex()
        self.stats: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])   # class -> [right, predicted]
        self.tests: list[tuple] = []   # (fold, upos, feature, classes, right) of agreement contrasts
        self.same: Counter = Counter()    # (upos, a, b) -> lemmas whose forms of a and b are one
        self.both: Counter = Counter()    # (upos, a, b) -> lemmas with both
        self._by_form: dict[tuple[str, str], list[Reading]] = defaultdict(list)
        self._agreement_cells: dict[str, list[str]] = {}
        self._generated: dict[tuple, dict[str, Generated]] = {}
        self._main: dict[tuple[str, str], dict[str, str]] = {}

    # -- training ---------------------------------------------------------------
    @classmethod
    def train(cls, counts: Mapping[Analysis, int] | Iterable[tuple[Analysis, int]],
              lexicon: Lexicon | None = None) -> "Reinflector":
        """The model of pooled treebank counts (``{Analysis: tokens}``, as
        :meth:`treebanks.columns.TreebankColumns.analyses` gives them) and an
        optional lexicon."""
        rows = sorted(counts.items() if isinstance(counts, Mapping) else counts)
        known = {a.form for a, _ in rows}
        cells: dict = defaultdict(lambda: defaultdict(Counter))
        for a, n in rows:
            if (a.upos in _SKIP_UPOS or a.lemma == "_" or "+" in a.lemma or not a.form or a.feats == "_"
                    or any(mark in a.feats for mark in _NOT_PARADIGM)):
                continue
            cells[a.lemma, a.upos][a.feats][uncapitalised(a.form, known)] += n
        lex_cells, conflicts = lexicon_only_cells(lexicon, cells)
        model = cls({k: dict(v) for k, v in cells.items()}, lex_cells, conflicts)
        model._fit()
        return model

    def main_forms(self, lemma: str, upos: str) -> dict[str, str]:
        """feats -> the cell's form: the treebanks' most frequent, else the lexicon's
        (computed once per lemma; do not change the dict returned)."""
        key = (lemma, upos)
        out = self._main.get(key)
        if out is None:
            out = dict(self.lexicon_cells.get(key, {}))
            for feats, forms in self.cells.get(key, {}).items():
                out[feats] = most_frequent(forms)
            self._main[key] = out
        return out

    def _pairs(self):
        """(lemma, upos, source cell, its form, target cell, its form), sorted."""
        for lemma, upos in sorted(set(self.cells) | set(self.lexicon_cells)):
            forms = self.main_forms(lemma, upos)
            order = sorted(forms)
            for dst in order:
                if not agreeing(dst):
                    continue
                yield lemma, upos, LEMMA, lemma, dst, forms[dst]
                for src in order:
                    if src != dst:
                        yield lemma, upos, src, forms[src], dst, forms[dst]

    def _fit(self) -> None:
        for lemma, upos, src, f_src, dst, f_dst in self._pairs():
            self.index.add((upos, src, dst), f_src, f_dst)
            change = agreement_change(src, dst) if src != LEMMA else ""
            if change:
                self.index.add((upos, change), f_src, f_dst)
        for lemma, upos, src, f_src, dst, f_dst in self._pairs():
            change = agreement_change(src, dst) if src != LEMMA else ""
            if change:   # the same change of agreement cell across every tense and mood, held out too
                got = self.index.apply((upos, change), f_src, exclude=(f_src, f_dst))
                if got is not None:
                    for c in change_classes(upos, change, f_src):
                        self.stats.setdefault(c, [0, 0])
                        self.stats[c][0] += got[0] == f_dst
                        self.stats[c][1] += 1
            got = self.index.apply((upos, src, dst), f_src, exclude=(f_src, f_dst))
            if src != LEMMA and (src < dst or not agreeing(src)):   # each pair of cells once
                pair = (upos, *sorted((src, dst)))
                self.both[pair] += 1
                self.same[pair] += f_src == f_dst
            if got is None:
                continue   # no rule: nothing generated, nothing wrong
            right = got[0] == f_dst
            classes = _classes(upos, src, dst, f_src)
            for c in classes:
                s = self.stats[c]
                s[0] += right
                s[1] += 1
            feature = contrast(src, dst) if src != LEMMA else ""
            if feature:
                self.tests.append((_fold(lemma), upos, feature, classes, right))
        self.stats = dict(self.stats)
        for (lemma, upos), by_cell in sorted(self.cells.items()):
            for feats, forms in sorted(by_cell.items()):
                for form in sorted(forms):
                    self._by_form[form, upos].append(Reading(form, lemma, upos, feats, "attested"))
        for (lemma, upos), by_cell in sorted(self.lexicon_cells.items()):
            for feats, form in sorted(by_cell.items()):
                if feats not in self.cells.get((lemma, upos), {}):
                    self._by_form[form, upos].append(Reading(form, lemma, upos, feats, "lexicon"))
        agreement: dict[str, set] = defaultdict(set)
        for (_lemma, upos), by_cell in list(self.cells.items()) + list(self.lexicon_cells.items()):
            agreement[upos].update(f for f in by_cell if agreeing(f))
        self._agreement_cells = {u: sorted(c) for u, c in agreement.items()}

    # -- reliability --------------------------------------------------------------
    def reliability(self, upos: str, src: str, dst: str, form: str,
                    stats: Mapping | None = None) -> tuple[float, int]:
        """(held-out accuracy, predictions) of the rule class of rewriting ``form``
        from cell ``src`` to ``dst``: the most specific class with
        :data:`MIN_SUPPORT` predictions; (0.0, n) when none has."""
        return _reliability(self.stats if stats is None else stats, _classes(upos, src, dst, form))

    # -- look-ups -------------------------------------------------------------------
    def reinflect(self, form: str, lemma: str, upos: str, src: str, dst: str,
                  min_reliability: float = RELIABLE) -> Generated | None:
        """``form`` of cell ``src`` rewritten into cell ``dst`` by its rule, when the
        rule class is at least ``min_reliability`` right on held-out cells."""
        got = self.index.apply((upos, src, dst), form)
        if got is None:
            return None
        rel, n = self.reliability(upos, src, dst, form)
        if rel < min_reliability or not got[0]:
            return None
        return Generated(got[0], lemma, upos, dst, "generated", src, form, str(got[1]), rel, n)

    def form_of(self, lemma: str, upos: str, feats: str, min_reliability: float = RELIABLE) -> Generated | None:
        """The form of a cell: attested, else the lexicon's, else generated from the
        lemma's most reliable source cell (module docstring); None when none is."""
        by_cell = self.cells.get((lemma, upos), {})
        if feats in by_cell:
            return Generated(most_frequent(by_cell[feats]), lemma, upos, feats, "attested")
        lex = self.lexicon_cells.get((lemma, upos), {})
        if feats in lex:
            return Generated(lex[feats], lemma, upos, feats, "lexicon")
        best = None
        sources = sorted(self.main_forms(lemma, upos).items())
        for src, f_src in [(LEMMA, lemma)] + sources:
            g = self.reinflect(f_src, lemma, upos, src, feats, min_reliability)
            if g is not None and (best is None or (g.reliability, g.support) > (best.reliability, best.support)):
                best = g
        return best

    def by_change(self, form: str, lemma: str, upos: str, src: str, dst: str,
                  min_reliability: float = RELIABLE) -> Generated | None:
        """``form`` of cell ``src`` rewritten into ``dst``, which differs from it in agreement
        features only, by the rule of that change learned over every cell pair with it (Turkish
        3sg -> 1sg: past *-dı* -> *-dım*, progressive *-yor* -> *-yorum*), when its class (the
        change and the form's last two letters, :func:`~treebanks.reinflect_rules.change_classes`) is at least
        ``min_reliability`` right on held-out pairs. The caller gives the form it holds
        (an item's target): another form of the cell could be another voice misannotated."""
        change = agreement_change(src, dst)
        if not change:
            return None
        got = self.index.apply((upos, change), form)
        if got is None or not got[0]:
            return None
        rel, n = _reliability(self.stats, change_classes(upos, change, form))
        if rel < min_reliability:
            return None
        return Generated(got[0], lemma, upos, dst, "generated", src, form, str(got[1]), rel, n)

    def analyses(self, form: str, upos: str, lemma: str | None = None,
                 min_reliability: float = RELIABLE) -> list[Reading]:
        """Every cell ``form`` fills as ``upos``: the attested and lexicon analyses, and
        each agreement cell of ``lemma`` (or of the lemmas the form is attested with)
        whose generated form is ``form``. A sentence-initial capital is read as the
        model stores forms (``Gebe`` as ``gebe``). Sorted by lemma, then cell."""
        written = spellings(form)
        found = [r for f in sorted(written) for r in self._by_form.get((f, upos), ())]
        lemmas = sorted({r.lemma for r in found} | ({lemma} if lemma else set()))
        for lem in lemmas:
            for feats, g in sorted(self._generated_cells(lem, upos, min_reliability).items()):
                if g.form in written:
                    found.append(Reading(form, lem, upos, feats, "generated", g.reliability))
        return sorted(set(found), key=lambda r: (r.lemma, r.feats, ORIGINS.index(r.origin)))

    def attested(self, form: str, upos: str, lemma: str) -> list[Reading]:
        """The attested and lexicon analyses of ``form`` as ``upos`` with ``lemma`` (those of
        :meth:`analyses` without the generated cells, which cost a reinflection of the lemma)."""
        return [r for f in sorted(spellings(form)) for r in self._by_form.get((f, upos), ()) if r.lemma == lemma]

    def _generated_cells(self, lemma: str, upos: str, min_reliability: float) -> dict[str, Generated]:
        key = (lemma, upos, min_reliability)
        if key not in self._generated:
            known = self.main_forms(lemma, upos)
            out = {}
            for feats in self._agreement_cells.get(upos, ()):
                if feats not in known:
                    g = self.form_of(lemma, upos, feats, min_reliability)
                    if g is not None:
                        out[feats] = g
            self._generated[key] = out
        return self._generated[key]

    def guard(self, correct: str, wrong: str, lemma: str, upos: str, feats: str) -> str:
        """Why ``wrong`` (the form of cell ``feats``) may not stand against ``correct``,
        or "": a spelling variant of it, or not its cell's most frequent form."""
        if wrong == correct:
            return "the same form"
        if is_spelling_variant(correct, wrong):
            return "a spelling variant of the correct form (case, ß/ss, hyphen or apostrophe)"
        main = self.main_forms(lemma, upos).get(feats)
        if main is not None and wrong != main and wrong != main[:1].upper() + main[1:]:
            return f"not the most frequent form of its cell ({main})"
        return ""

    # -- reports --------------------------------------------------------------------
    def syncretisms(self, min_lemmas: int = 5, min_share: float = 0.9) -> list[Syncretism]:
        """Cell pairs (one of them an agreement cell) whose forms are one in at least
        ``min_share`` of the ``min_lemmas`` or more lemmas that have both."""
        out = []
        for (upos, a, b), n in sorted(self.both.items()):
            same = self.same[upos, a, b]
            if n >= min_lemmas and same >= min_share * n:
                out.append(Syncretism(upos, a, b, same, n))
        return out

    def held_out(self) -> list[HeldOutRow]:
        """Held-out accuracy per UPOS x agreement feature (:class:`HeldOutRow`); which
        rule classes count as reliable is judged on the other half of the lemmas."""
        half: list[dict] = [defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])]
        for fold, _upos, _feature, classes, right in self.tests:
            for c in classes:
                half[fold][c][0] += right
                half[fold][c][1] += 1
        rows: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for fold, upos, feature, classes, right in self.tests:
            rel, _ = _reliability(half[1 - fold], classes)
            r = rows[upos, feature]
            r[0] += 1
            r[1] += right
            if rel >= RELIABLE:
                r[2] += 1
                r[3] += right
        return [HeldOutRow(u, f, *v) for (u, f), v in sorted(rows.items())]


def _reliability(stats: Mapping, classes: tuple) -> tuple[float, int]:
    """(accuracy, predictions) of the most specific of ``classes`` with
    :data:`MIN_SUPPORT` predictions in ``stats``; (0.0, the most seen) when none has."""
    n = 0
    for c in classes:
        s = stats.get(c)
        if s is not None:
            if s[1] >= MIN_SUPPORT:
                return s[0] / s[1], s[1]
            n = max(n, s[1])
    return 0.0, n
