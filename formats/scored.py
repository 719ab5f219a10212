"""The scored ``items.tsv`` that ``agree score`` writes: one row per (item, model).

:class:`ScoredItem` is the record; :func:`write_scored` the writer; the reader
that reports and analyses use is :func:`read_scored`, the one reader, returning
:class:`ScoredRow` records (not :class:`ScoredItem`: a scored file holds the items'
ids and labels, not their words).

An item is right for a model when natural-log P(correct) is strictly greater than
natural-log P(wrong); a tie (or NaN) is *undecidable*, neither right nor wrong.
"""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, NamedTuple

from formats.errors import AgreeError, names_undecodable
from formats.tsv import checked_rows
from formats.items import Item

#: Columns of the scored ``items.tsv``, then three of ours (``undecidable``:
#: 1 for a tie; such a row also has ``correct`` 0, so readers of the older columns see
#: what they saw before).
SCORED_COLUMNS = ("item_id", "variant", "perturbation", "construction", "attractors", "model",
                  "logp_correct", "logp_wrong", "correct", "oov", "group", "testset", "method", "undecidable")
#: Columns :func:`read_scored` needs; ``oov``, ``method`` and ``undecidable`` came later
#: and default when absent (``undecidable`` is then derived from the two scores).
REQUIRED_COLUMNS = SCORED_COLUMNS[:6] + SCORED_COLUMNS[6:9] + ("group", "testset")


@dataclass(frozen=True)
class ScoredItem:
    """One item scored by one model.

    item          the test item (its prefix was scored)
    model         unique model name (directory name, or the .tab column)
    group         aggregation label; models of one group are averaged
    kind          backend kind: ``lstm``, ``transformer``, ``kn5``, ``unigram``
    logp_correct  natural-log P(correct form | prefix) (method ``sentence``: of the
                  whole correct sentence)
    logp_wrong    natural-log P(wrong form | prefix) (``sentence``: the wrong sentence)
    oov           a word the method reads (prefix and both forms; ``sentence``: both
                  whole sentences) is out of the model's vocabulary
    testset       the TESTSET argument the item came from
    method        ``target`` or ``sentence``
    pieces_differ the two forms are made of different numbers of the model's
                  pieces (subword models; reported in summary.md)
    """
    item: Item
    model: str
    group: str
    kind: str
    logp_correct: float
    logp_wrong: float
    oov: bool = False
    testset: str = ""
    method: str = "target"
    pieces_differ: bool = False

    @property
    def correct(self) -> bool:
        """Strictly more probable correct form (a tie is not correct; see :attr:`undecidable`)."""
        return self.logp_correct > self.logp_wrong

    @property
    def undecidable(self) -> bool:
        """The model cannot choose: both forms equally probable (or a NaN score)."""
        return is_tie(self.logp_correct, self.logp_wrong)

    @property
    def p_correct_share(self) -> float:
        """P(correct) / (P(correct) + P(wrong)), a logistic of the log-odds."""
        d = self.logp_wrong - self.logp_correct
        if math.isnan(d):
            return 0.5
        if d > 700:
            return 0.0
        return 1.0 / (1.0 + math.exp(d))

    @property
    def key(self) -> tuple[str, str, int, str]:
        """Identifies the item across models (for paired comparisons)."""
        return (self.testset, self.item.item_id, self.item.variant, self.item.perturbation)

    item_id = property(lambda self: self.item.item_id)
    variant = property(lambda self: self.item.variant)
    perturbation = property(lambda self: self.item.perturbation)
    construction = property(lambda self: self.item.construction)
    attractors = property(lambda self: self.item.attractors)


def is_tie(logp_correct: float, logp_wrong: float) -> bool:
    """The undecidable rule: both forms equally probable, or a NaN score."""
    return logp_correct == logp_wrong or math.isnan(logp_correct) or math.isnan(logp_wrong)


def condition(item: Item) -> str:
    """Which table column an item belongs to: ``original``, ``nonce`` or a perturbation."""
    return condition_of(item.perturbation, item.variant)


def condition_of(perturbation: str, variant: int) -> str:
    """The rule of :func:`condition` on the two fields it reads (for rows read back)."""
    if perturbation in ("", "original"):
        return "original" if variant == 0 else "nonce"
    return perturbation


def construction_label(item: Item) -> str:
    """The construction as tables name it, with its direction (``L NOUN VERB VERB``, as
    ``constructions.tsv`` does); the bare name when the item has no direction (BLiMP
    paradigms: ``_``)."""
    if item.direction in ("", "_"):
        return item.construction
    return f"{item.direction} {item.construction}"


def _fmt(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else ("-inf" if x < 0 else "inf" if x > 0 else "nan")


def write_scored(path: str | os.PathLike, scored: Iterable[ScoredItem]) -> int:
    """Write the scored ``items.tsv`` (columns :data:`SCORED_COLUMNS`); returns rows."""
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(SCORED_COLUMNS) + "\n")
        for s in scored:
            it = s.item
            row = (it.item_id, str(it.variant), it.perturbation, it.construction, str(it.attractors),
                   s.model, _fmt(s.logp_correct), _fmt(s.logp_wrong), "1" if s.correct else "0",
                   "1" if s.oov else "0", s.group, s.testset, s.method,
                   "1" if s.undecidable else "0")
            fh.write("\t".join(row) + "\n")
            n += 1
    return n


class ScoredRow(NamedTuple):
    """One row of a scored ``items.tsv`` as read back (columns :data:`SCORED_COLUMNS`).

    The fields are the columns, typed; ``undecidable`` is the column when present,
    else derived from the two scores as :attr:`ScoredItem.undecidable` does. (A named
    tuple, not a frozen dataclass: the analyses read ~50,000 rows, and a frozen
    dataclass's constructor takes twice as long.)"""
    item_id: str
    variant: int
    perturbation: str
    construction: str
    attractors: int
    model: str
    logp_correct: float
    logp_wrong: float
    correct: bool
    oov: bool
    group: str
    testset: str
    method: str
    undecidable: bool

    @property
    def condition(self) -> str:
        """``original``, ``nonce`` or the perturbation (the rule of :func:`condition`)."""
        return condition_of(self.perturbation, self.variant)

    @property
    def key(self) -> tuple[str, str, int, str]:
        """As :attr:`ScoredItem.key`: identifies the item across models."""
        return (self.testset, self.item_id, self.variant, self.perturbation)


def _columns(path: Path, header: list[str]) -> list[int | None]:
    """Position of each of :data:`SCORED_COLUMNS` in ``header`` (None: absent, optional)."""
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise AgreeError(f"{path}: not a scored items.tsv of this version of agree (it lacks the "
                         f"columns {', '.join(missing)}; written by another version, or not by "
                         "agree score?)")
    return [header.index(c) if c in header else None for c in SCORED_COLUMNS]


def _typed(path: Path, line: int, fields: list[str]) -> ScoredRow:
    (item_id, variant, pert, cons, att, model, lc, lw, correct, oov, group, testset, method,
     undecidable) = fields
    try:
        a, b = float(lc), float(lw)
        return ScoredRow(item_id, int(variant), pert, cons, int(att), model, a, b, correct == "1",
                         oov == "1", group, testset, method or "target",
                         is_tie(a, b) if undecidable is None else undecidable == "1")
    except ValueError as e:
        raise AgreeError(f"{path}:{line}: not a scored row (bad number: {e})") from None


@names_undecodable
def read_scored(path: str | os.PathLike) -> list[ScoredRow]:
    """Read a scored ``items.tsv`` (or the directory holding it) into :class:`ScoredRow`
    records, by column name; :class:`AgreeError` for a missing file, a file from
    another version (a required column missing) or a malformed row."""
    path = Path(path)
    tsv = path / "items.tsv" if path.is_dir() else path
    if not tsv.is_file():
        raise AgreeError(f"{path}: no scored items.tsv (run agree score first)")
    with open(tsv, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        rows_in = checked_rows(reader, tsv)
        header = next(rows_in, [])
        pos = _columns(tsv, header)
        rows = []
        for line, row in enumerate(rows_in, start=2):
            if len(row) < len(header):
                raise AgreeError(f"{tsv}:{line}: {len(row)} fields, the header has {len(header)}")
            rows.append(_typed(tsv, line, [None if i is None else row[i] for i in pos]))
    return rows
