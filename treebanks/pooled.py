"""Paradigms pooled over every treebank of a language (and a lexicon), with the
source of each answer.

A wrong form (the target's lemma and POS with another value of the contrasted
feature) is looked up, in this order, in

1. the paradigm table of the treebank file the item comes from;
2. the tables of every treebank file of the run pooled (the files mined, then the
   extra ones given for their paradigms only): counts summed, so the most
   frequent spelling across them wins;
3. a UniMorph lexicon, when one is given (:mod:`treebanks.unimorph`).

:meth:`PooledParadigms.wrong_form` says which answered (``source``: a file's stem,
the first in run order whose own table has the analysis, or ``unimorph``).

Only agreement features (:data:`treebanks.paradigms.AGREEMENT_LIKE`: Gender,
Animacy, Number, Person) may come and go with the contrasted value, judged on the
pooled counts: a wrong form never differs in Case, Tense, Polarity or Variant.

Treebanks that disagree: a paradigm cell (lemma, POS, FEATS) that two treebanks
spell differently (their most frequent forms differ, ignoring case) is a
*conflict* (:attr:`PooledParadigms.conflicts`, reported by the caller). It is
resolved by the order above: an item takes its own treebank's form when it has
one, else the pooled table's most frequent.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Sequence

from treebanks.features import parse_feats
from treebanks.paradigms import AGREEMENT_LIKE, Analysis, ParadigmTable
from treebanks.unimorph import SOURCE as LEXICON_SOURCE, Lexicon


@dataclass(frozen=True)
class WrongForm:
    """A wrong form and where it came from."""
    form: str
    value: str    #: its value of the contrasted feature
    source: str   #: the treebank file's stem, or ``unimorph``
    feats: str    #: its FEATS (a lexicon's: the target's, with the value swapped)
    lemma: str
    upos: str

    @property
    def analysis(self) -> Analysis:
        return Analysis(self.form, self.lemma, self.upos, self.feats)


class PooledParadigms:
    """The paradigm tables of a language's treebank files, and optionally a lexicon.

    ``sources``: (name, table) per treebank file, the files mined first; names are
    file stems and must be distinct (a repeated stem keeps its first table)."""

    def __init__(self, sources: Sequence[tuple[str, ParadigmTable]], lexicon: Lexicon | None = None):
        self.tables: dict[str, ParadigmTable] = {}
        for name, table in sources:
            self.tables.setdefault(name, table)
        total: Counter = Counter()
        for table in self.tables.values():
            total.update(table.counts)
        self.table = ParadigmTable(dict(total))
        self.table.covary_as(None, AGREEMENT_LIKE)
        for table in self.tables.values():  # one judgement of co-variation for every file
            table.covary_as(self.table, AGREEMENT_LIKE)
        self.lexicon = lexicon
        self.conflicts = _conflicts(self.tables) if len(self.tables) > 1 else []
        self._filled: dict[Analysis, int] = {}

    def wrong_form(self, own: str, lemma: str, upos: str, feats: str, feature: str, values: Sequence[str],
                   mode: str = "closest") -> WrongForm | None:
        """The form of ``lemma``/``upos`` whose ``feature`` is one of ``values`` and
        whose other features are ``feats``'s (the ``mode`` rule of
        :meth:`ParadigmTable.alternative`), from the first source that has one."""
        values = tuple(values)
        table = self.tables.get(own)
        if table is not None:
            a = table.alternative_analysis(lemma, upos, feats, (feature,), mode, values)
            if a is not None:
                return _wrong(a, feature, own)
        a = self.table.alternative_analysis(lemma, upos, feats, (feature,), mode, values)
        if a is not None:
            source = next((name for name, t in self.tables.items() if a in t.counts), own)
            return _wrong(a, feature, source)
        if self.lexicon is not None:
            found = self.lexicon.other_form(lemma, upos, parse_feats(feats), feature, values)
            if found is not None:
                form, value, wrong_feats = found
                w = WrongForm(form, value, LEXICON_SOURCE, wrong_feats, lemma, upos)
                self._filled[w.analysis] = 0
                return w
        return None

    def rejected(self, lemma: str, upos: str, feats: str, feature: str, values: Sequence[str]) -> list:
        """The pooled table's other-value forms the ``closest`` rule turned down, with
        the features that differed beyond ``feature``."""
        return self.table.rejected_alternatives(lemma, upos, feats, (feature,), tuple(values))

    def saved_table(self) -> ParadigmTable:
        """What ``paradigms.tsv`` holds: the pooled treebank counts, plus the cells a
        lexicon filled for items (count 0), so that later steps (nonce target pairs)
        find those forms too."""
        if not self._filled:
            return self.table
        table = ParadigmTable(dict(self.table.counts))
        table.add_counts({tuple(a): n for a, n in self._filled.items() if a not in self.table.counts})
        return table

    def conflict_note(self) -> str:
        """One line on the cells treebanks spell differently ("" when none)."""
        if not self.conflicts:
            return ""
        lemma, upos, feats, spellings = self.conflicts[0]
        shown = " / ".join(f"{form} ({', '.join(names)})" for form, names in spellings)
        return (f"{len(self.conflicts)} paradigm cells are spelled differently in two treebank files (e.g. {lemma} "
                f"{upos} {feats}: {shown}); an item takes its own treebank's form, else the most frequent")


def _wrong(a: Analysis, feature: str, source: str) -> WrongForm:
    return WrongForm(a.form, parse_feats(a.feats).get(feature, ""), source, a.feats, a.lemma, a.upos)


def _conflicts(tables: dict[str, ParadigmTable]) -> list[tuple[str, str, str, list]]:
    """Cells whose most frequent spelling (lowercased) differs between sources, sorted."""
    best: dict[tuple, dict[str, tuple[int, str]]] = defaultdict(dict)
    for name, table in tables.items():
        cells: dict[tuple, tuple[int, str]] = {}
        for a, n in table.counts.items():
            if "+" in a.lemma or a.lemma == "_":  # merged tokens (spelled by their parts), no lemma
                continue
            cell = (a.lemma, a.upos, a.feats)
            key = (-n, a.form)
            if cell not in cells or key < cells[cell]:
                cells[cell] = key
        for cell, key in cells.items():
            best[cell][name] = key
    out = []
    for cell, by_source in best.items():
        if len({form.lower() for _, form in by_source.values()}) > 1:
            spellings: dict[str, list[str]] = defaultdict(list)
            for name, (_, form) in by_source.items():
                spellings[form].append(name)
            tokens = -sum(n for n, _ in by_source.values())
            out.append((tokens, *cell, sorted(spellings.items())))
    out.sort()  # the most frequent cell first: the example a note shows
    return [row[1:] for row in out]
