"""Paradigm tables: how often each (form, lemma, POS, features) analysis occurs,
and the lookup of a word's *alternative form* (the same lemma and POS in the
other number).

The alternative (method.md section 2, step 5): among the analyses of the same
lemma and UPOS whose agreement values differ from the word's (in Number when
Number is one of the agreement features: the test is about number, and a
``Number|Gender`` list only adds Gender to what must agree),

* ``mode="exact"`` (the paper): the remaining features must be identical;
* ``mode="closest"`` (default): the remaining features may differ only where
  number takes them along: a feature present on one side only *when it
  co-varies with number in this treebank* (:meth:`ParadigmTable.covarying`:
  Russian past-tense verbs carry Gender only in the singular), or a multi-value
  set that contains the other value (Hebrew plural ``Gender=Fem,Masc`` for
  ``Gender=Masc``). A feature both sides have with disjoint values (Tense=Past
  against Tense=Pres: *became*/*become*), or one side only has and that does
  not co-vary with number (Tense, Mood, VerbForm on a form that lacks them),
  disqualifies the form, so the contrast stays one of number
  (:meth:`ParadigmTable.rejected_alternatives` says which features differed).
  Among the rest, the most overlapping one wins. An exact swap finds nothing in
  those languages.

``values`` (e.g. ``("Sing", "Plur")``) restricts the alternative's Number to
those values: with Dual in the treebank, a singular's alternative is its
plural, never its dual.

Ranking, best first: fewest agreement features changed (matters only for
``Number|Gender``-style lists), most shared remaining (feature, value) pairs,
fewest unshared ones, most frequent analysis, then the form alphabetically, so
the answer is deterministic.

File format (``paradigms.tsv``): header ``form lemma upos feats count``,
tab-separated, one row per analysis, sorted by (upos, lemma, feats, form).
"""
from __future__ import annotations

import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

from treebanks.errors import TreebankError
from treebanks.features import canonical_feats, parse_feats

PARADIGMS_FILE = "paradigms.tsv"
_HEADER = ("form", "lemma", "upos", "feats", "count")
MODES = ("closest", "exact")


class Analysis(NamedTuple):
    """One analysis of a surface form (a named tuple: tables hold tens of thousands,
    built from plain tuples in one go)."""
    form: str
    lemma: str
    upos: str
    feats: str  #: canonical FEATS, ``_`` when none


class ParadigmTable:
    """Counts of analyses, with lookups by form and by (lemma, UPOS)."""

    def __init__(self, counts: dict[Analysis, int] | None = None):
        self._counts: Counter = Counter(counts or {})
        # add_tokens() counts plain tuples (several times faster than building an
        # Analysis per token); they become Analysis keys on the next read
        self._pending: Counter = Counter()
        self._by_form: dict[str, list[tuple[Analysis, int]]] | None = None
        self._by_lemma: dict[tuple[str, str], list[tuple[Analysis, int]]] | None = None
        self._alt_cache: dict = {}
        self._covarying: dict | None = None
        self._covary_from: ParadigmTable | None = None
        self._covary_only: frozenset[str] | None = None

    @property
    def counts(self) -> dict[Analysis, int]:
        """analysis -> number of tokens with it."""
        if self._pending:
            make = Analysis._make
            for key, n in self._pending.items():
                self._counts[make(key)] += n
            self._pending.clear()
        return self._counts

    def _changed(self) -> None:
        self._by_form = self._by_lemma = self._covarying = None
        self._alt_cache.clear()

    # -- building -------------------------------------------------------------
    def add(self, form: str, lemma: str, upos: str, feats: str, n: int = 1) -> None:
        self._pending[(form, lemma, upos, feats)] += n
        self._changed()

    def add_tokens(self, tokens: Iterable) -> None:
        """Count every token of a sentence (anything with form/lemma/upos/feats)."""
        self._pending.update([(t.form, t.lemma, t.upos, t.feats) for t in tokens])
        self._changed()

    def add_counts(self, counts: dict) -> None:
        """Add ``{(form, lemma, upos, feats): n}`` (a cached treebank's counts)."""
        self._pending.update(counts)
        self._changed()

    @classmethod
    def from_sentences(cls, sentences: Iterable) -> "ParadigmTable":
        """The table of every token of ``sentences`` (``treebanks.reader.Sentence``)."""
        table = cls()
        for s in sentences:
            table.add_tokens(s.tokens)
        return table

    # -- lookups --------------------------------------------------------------
    def analyses(self, form: str) -> list[tuple[Analysis, int]]:
        """All analyses of a surface form with their counts, most frequent first."""
        if self._by_form is None:
            self._by_form = _index(self.counts, 0)
        return _sorted_rows(self._by_form, form)

    def lemma_forms(self, lemma: str, upos: str) -> list[tuple[Analysis, int]]:
        """All analyses of a lemma with a given UPOS, most frequent first."""
        if self._by_lemma is None:
            self._by_lemma = _index(self.counts, 1)
        return _sorted_rows(self._by_lemma, (lemma, upos))

    def alternative(self, lemma: str, upos: str, feats: str, features: Sequence[str] = ("Number",),
                    mode: str = "closest", values: Sequence[str] | None = None) -> str | None:
        """The form of ``lemma``/``upos`` with other values of ``features`` (see the
        module docstring for the ranking), or None when the treebank has none."""
        best = self.alternative_analysis(lemma, upos, feats, features, mode, values)
        return None if best is None else best.form

    def alternative_analysis(self, lemma: str, upos: str, feats: str, features: Sequence[str] = ("Number",),
                             mode: str = "closest", values: Sequence[str] | None = None) -> Analysis | None:
        """:meth:`alternative` as the whole analysis (its FEATS give the value it has)."""
        key = (lemma, upos, feats, tuple(features), mode, tuple(values or ()))
        if key not in self._alt_cache:
            self._alt_cache[key] = self._alternative(lemma, upos, feats, tuple(features), mode,
                                                     tuple(values or ()))
        return self._alt_cache[key]

    def covarying(self, upos: str, pivot: str = "Number") -> frozenset[str]:
        """Features of ``upos`` words that come and go with ``pivot`` (Number) in this
        treebank: carried by at least :data:`COVARY_PRESENT` of the tokens of one
        value and at most :data:`COVARY_ABSENT` of those of another (Russian
        past-tense Gender: singular only; Czech Animacy: masculine only). Only these
        may be present on one side of a pair."""
        if self._covary_from is not None:
            found = self._covary_from.covarying(upos, pivot)
        else:
            if self._covarying is None:
                self._covarying = {}
            if pivot not in self._covarying:
                self._covarying[pivot] = _covarying(self.counts, pivot)
            found = self._covarying[pivot].get(upos, frozenset())
        return found if self._covary_only is None else frozenset(k for k in found if k.split("[")[0] in self._covary_only)

    def covary_as(self, other: "ParadigmTable | None", only: frozenset[str] | None = None) -> None:
        """Judge co-variation (:meth:`covarying`) on ``other``'s counts (None: this
        table's), and let only the features ``only`` co-vary (None: any). One file of
        a language is often too small to tell a feature that comes and goes with
        Number from one that happens to (a pooled table of all its files decides);
        and a statistical co-variation of Case, Tense or Polarity with an agreement
        value is an accident of the sample, never a paradigm (:data:`AGREEMENT_LIKE`;
        their layers, ``Gender[subj]``, count as them)."""
        self._covary_from, self._covary_only = other, only
        self._alt_cache.clear()

    def _other_number(self, lemma, upos, feats, features, values):
        """(form, count, own rest, other rest) of the lemma's analyses with other
        agreement values (None when ``feats`` lacks one)."""
        own = parse_feats(feats)
        if any(f not in own for f in features):
            return None
        pivot = _pivot(features)
        own_rest = {k: v for k, v in own.items() if k not in features}
        out = []
        for a, n in self.lemma_forms(lemma, upos):
            other = parse_feats(a.feats)
            if any(f not in other for f in features):
                continue
            changed = sum(other[f] != own[f] for f in features)
            if changed == 0 or other[pivot] == own[pivot] or (values and other[pivot] not in values):
                continue
            out.append((a, n, changed, own_rest, {k: v for k, v in other.items() if k not in features}))
        return out

    def _differing(self, upos: str, own_rest: dict, rest: dict, pivot: str = "Number") -> list[str]:
        """Non-agreement features that make a pair more than a contrast of ``pivot``."""
        cov = self.covarying(upos, pivot)
        out = []
        for k in sorted(set(own_rest) | set(rest)):
            if k in own_rest and k in rest:
                if not _compatible(own_rest[k], rest[k]):
                    out.append(k)
            elif k not in cov:
                out.append(k)
        return out

    def rejected_alternatives(self, lemma: str, upos: str, feats: str, features: Sequence[str] = ("Number",),
                              values: Sequence[str] | None = None) -> list[tuple[str, list[str]]]:
        """The other-number forms the ``closest`` rule turned down, each with the
        features that differed beyond number (``[("brought", ["Tense"])]``)."""
        rows = self._other_number(lemma, upos, feats, tuple(features), tuple(values or ())) or []
        out = []
        for a, _n, _c, own_rest, rest in rows:
            diff = self._differing(upos, own_rest, rest, _pivot(features))
            if diff:
                out.append((a.form, diff))
        return out

    def _alternative(self, lemma, upos, feats, features, mode, values=()) -> Analysis | None:
        if mode not in MODES:
            raise ValueError(f"unknown alternative mode {mode!r} (expected one of {', '.join(MODES)})")
        rows = self._other_number(lemma, upos, feats, features, values)
        if not rows:
            return None
        best, best_key = None, None
        for a, n, changed, own_rest, rest in rows:
            if mode == "exact" and rest != own_rest:
                continue
            if mode == "closest" and self._differing(upos, own_rest, rest, _pivot(features)):
                continue
            shared = sum(1 for k, v in rest.items() if own_rest.get(k) == v)
            unshared = len(rest) + len(own_rest) - 2 * shared
            rank = (changed, -shared, unshared, -n, a.form)
            if best_key is None or rank < best_key:
                best, best_key = a, rank
        return best

    def form_counts(self) -> dict[str, int]:
        """form -> tokens with that form (all analyses together)."""
        out: dict[str, int] = Counter()
        for a, n in self.counts.items():
            out[a.form] += n
        return dict(out)

    # -- files ----------------------------------------------------------------
    def rows(self) -> list[tuple[Analysis, int]]:
        """(analysis, count) sorted by (upos, lemma, feats, form), the file order."""
        return sorted(self.counts.items(), key=lambda r: (r[0].upos, r[0].lemma, r[0].feats, r[0].form))

    def save(self, path: str | os.PathLike) -> int:
        """Write ``paradigms.tsv``; returns the number of rows."""
        rows = self.rows()
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write("\t".join(_HEADER) + "\n")
            for a, n in rows:
                fh.write(f"{a.form}\t{a.lemma}\t{a.upos}\t{a.feats}\t{n}\n")
        return len(rows)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "ParadigmTable":
        """Read a ``paradigms.tsv`` (or a directory holding one)."""
        path = Path(path)
        if path.is_dir():
            path = path / PARADIGMS_FILE
        if not path.exists():
            raise TreebankError(f"{path}: no such paradigm table")
        table = cls()
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                header = fh.readline().rstrip("\r\n").split("\t")
                if tuple(header) != _HEADER:
                    raise TreebankError(f"{path}:1: not a paradigm table (expected header {' '.join(_HEADER)})")
                for lineno, line in enumerate(fh, start=2):
                    cols = line.rstrip("\r\n").split("\t")
                    _check_row(cols, path, lineno)
                    try:
                        feats = canonical_feats(cols[3])
                    except ValueError as e:
                        raise TreebankError(f"{path}:{lineno}: {e}") from None
                    table.add(cols[0], cols[1], cols[2], feats, int(cols[4]))
        except UnicodeDecodeError as e:   # named here: the CLI's own line would not say which file
            raise TreebankError(f"{path}: not valid UTF-8 ({e.reason}); not a paradigm table") from None
        return table

    def __len__(self) -> int:
        return len(self.counts)


def _check_row(cols: list[str], path: Path, lineno: int) -> None:
    """A paradigms.tsv row as :meth:`ParadigmTable.save` writes it: five fields, none
    empty (an empty form would become an empty word in a nonce sentence), the count a
    whole number of tokens, at least 1 (the row says the treebank has that analysis)."""
    if len(cols) != len(_HEADER) or not cols[4].isdigit():
        raise TreebankError(f"{path}:{lineno}: expected form, lemma, upos, feats, count")
    empty = [name for name, col in zip(_HEADER, cols) if not col.strip()]
    if empty:
        raise TreebankError(f"{path}:{lineno}: empty {' and '.join(empty)} (a row is form, lemma, upos, "
                            "feats, count, with feats _ when there are none)")
    if int(cols[4]) < 1:
        raise TreebankError(f"{path}:{lineno}: count 0: a row is an analysis the treebank has, "
                            "seen at least once")


#: features that may come and go with another agreement value (Russian plural past
#: tenses drop Gender; Czech Animacy goes with masculine Gender): what relation mining
#: lets co-vary (:meth:`ParadigmTable.covary_as`)
AGREEMENT_LIKE = frozenset({"Animacy", "Gender", "Number", "Person"})

#: thresholds of :meth:`ParadigmTable.covarying`
COVARY_PRESENT = 0.1
COVARY_ABSENT = 0.05


def _pivot(features: Sequence[str]) -> str:
    """The feature whose value must change: Number when it is one of them."""
    return "Number" if "Number" in features else features[0]


def _covarying(counts: dict, pivot: str = "Number") -> dict[str, frozenset[str]]:
    # upos -> pivot value -> (tokens, feature -> tokens carrying it)
    per: dict = defaultdict(lambda: defaultdict(lambda: [0, Counter()]))
    parsed: dict[str, dict] = {}  # a few thousand FEATS strings among tens of thousands of analyses
    for a, n in counts.items():
        d = parsed.get(a.feats)
        if d is None:
            d = parsed[a.feats] = parse_feats(a.feats)
        num = d.get(pivot)
        if num is None:
            continue
        cell = per[a.upos][num]
        cell[0] += n
        for k in d:
            if k != pivot:
                cell[1][k] += n
    out = {}
    for upos, by_value in per.items():
        cov = set()
        names = {k for _, c in by_value.values() for k in c}
        for k in names:
            shares = [c[k] / total for total, c in by_value.values() if total]
            if len(shares) > 1 and max(shares) >= COVARY_PRESENT and min(shares) <= COVARY_ABSENT:
                cov.add(k)
        out[upos] = frozenset(cov)
    return out


def _compatible(a: str, b: str) -> bool:
    """Two values of one feature are compatible when equal or when their value
    sets (``Fem,Masc``) overlap."""
    return a == b or not set(a.split(",")).isdisjoint(b.split(","))


def _index(counts: dict, by: int) -> dict:
    """form (by=0) or (lemma, upos) (by=1) -> [False, rows]; rows are sorted on the
    first look-up only (:func:`_sorted_rows`): an extract run looks up a few hundred
    keys of tens of thousands."""
    index: dict = {}
    for a, n in counts.items():
        key = a[0] if by == 0 else (a[1], a[2])
        entry = index.get(key)
        if entry is None:
            index[key] = [False, [(a, n)]]
        else:
            entry[1].append((a, n))
    return index


def _sorted_rows(index: dict, key) -> list:
    entry = index.get(key)
    if entry is None:
        return []
    if not entry[0]:
        entry[1].sort(key=_rank)
        entry[0] = True
    return entry[1]


def _rank(row: tuple[Analysis, int]):
    a, n = row
    return (-n, a.upos, a.lemma, a.feats, a.form)
