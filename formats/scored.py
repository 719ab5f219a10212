"""The scored ``items.tsv`` that ``agree score`` writes, and :class:`ScoredTable`, the one
in-memory form of scored rows (one row per (item, model)), as numpy columns.

``agree score`` builds a :class:`ScoredTable` (:meth:`ScoredTable.of_items`), writes it
(:func:`write_scored`); ``agree analyze``, the demo's report, ``--curve`` and every plot
read one back (:func:`read_scored`, the one reader). Columns make building, filtering and
grouping 100,000s of rows array work rather than a Python object per row.

An item is right for a model when natural-log P(correct) is strictly greater than
natural-log P(wrong); a tie (or NaN) is *undecidable*, neither right nor wrong.
"""
from __future__ import annotations

import csv
import dataclasses
import math
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np

from formats.errors import AgreeError, names_undecodable
from formats.tsv import checked_rows
from formats.items import Item

#: Columns of the scored ``items.tsv``, then three of ours (``undecidable``:
#: 1 for a tie; such a row also has ``correct`` 0, so readers of the older columns see
#: what they saw before).
SCORED_COLUMNS = ("item_id", "variant", "perturbation", "construction", "attractors", "model",
                  "logp_correct", "logp_wrong", "correct", "oov", "group", "testset", "method", "undecidable")
#: Written after them when any row is a relation item's (:mod:`formats.items`): its
#: relation and contrasted feature (a file of construction items is written as before).
RELATION_COLUMNS = ("relation", "feature")
#: Columns :func:`read_scored` needs; ``oov``, ``method``, ``undecidable`` and the
#: relation columns came later and default when absent (``undecidable`` is then derived
#: from the two scores, the relation columns are empty).
REQUIRED_COLUMNS = SCORED_COLUMNS[:6] + SCORED_COLUMNS[6:9] + ("group", "testset")
#: the per-row columns of :class:`ScoredTable`, in order
COLUMNS = ("item_id", "variant", "perturbation", "construction", "direction", "attractors", "model",
           "group", "kind", "logp_correct", "logp_wrong", "correct", "oov", "testset", "method",
           "pieces_differ", "undecidable", "relation", "feature")
_STR = ("item_id", "perturbation", "construction", "direction", "model", "group", "kind", "testset", "method",
        "relation", "feature")
_INT, _FLOAT = ("variant", "attractors"), ("logp_correct", "logp_wrong")


@dataclass(frozen=True, eq=False)
class ScoredTable:
    """Scored rows, one entry per (item, model); every column has the same length.

    item_id, variant, perturbation, construction, attractors  the item (``items.tsv``'s fields)
    direction     the arc's direction (``L``/``R``; ``""`` when not known: rows read back)
    model         unique model name (directory name, or the .tab column)
    group         aggregation label; models of one group are averaged
    kind          backend kind: ``lstm``, ``transformer``, ``kn5``, ``unigram`` (``""`` read back)
    logp_correct  natural-log P(correct form | prefix) (method ``sentence``: of the whole
                  correct sentence); logp_wrong: of the wrong form (sentence)
    correct       bool: strictly more probable correct form (a tie is not correct)
    oov           bool: a word the method reads is out of the model's vocabulary
    testset       the TESTSET argument the item came from
    method        how the row was scored, ``target`` or ``sentence`` (an item's own
                  ``scoring`` wins in a target run: :func:`agreement.scoring.score.item_method`)
    pieces_differ bool: the two forms are made of different numbers of the model's pieces
    undecidable   bool: both forms equally probable, or a NaN score
    relation, feature  a relation item's relation and contrasted feature (``""`` for others)
    items         the test items (their words: human judgments join on them), or None
    sources, humans_path  for rows read back: the directories read, the ``--humans``
                  file their manifest names
    left_out      undecidable rows dropped from the table (:meth:`decidable`)
    """
    item_id: np.ndarray
    variant: np.ndarray
    perturbation: np.ndarray
    construction: np.ndarray
    direction: np.ndarray
    attractors: np.ndarray
    model: np.ndarray
    group: np.ndarray
    kind: np.ndarray
    logp_correct: np.ndarray
    logp_wrong: np.ndarray
    correct: np.ndarray
    oov: np.ndarray
    testset: np.ndarray
    method: np.ndarray
    pieces_differ: np.ndarray
    undecidable: np.ndarray
    relation: np.ndarray
    feature: np.ndarray
    items: np.ndarray | None = None
    sources: tuple[str, ...] = ()
    humans_path: str | None = None
    left_out: int = 0

    @classmethod
    def of_items(cls, items: Sequence[Item], *, model, group, kind, logp_correct, logp_wrong,
                 oov=False, testset="", method="target", pieces_differ=False) -> "ScoredTable":
        """Rows of test ``items``; every other argument is one value for all rows or one per item."""
        n = len(items)

        def col(v, dtype):
            if isinstance(v, str) or np.ndim(v) == 0:
                a = np.empty(n, dtype=dtype)
                a[:] = v
                return a
            return np.array(list(v), dtype=dtype) if n else np.empty(0, dtype=dtype)

        obj = lambda f: col([getattr(it, f) for it in items], object)  # noqa: E731
        lc, lw = col(logp_correct, float), col(logp_wrong, float)
        items_col = np.empty(n, dtype=object)
        items_col[:] = list(items)
        return cls(obj("item_id"), col([it.variant for it in items], int), obj("perturbation"),
                   obj("construction"), obj("direction"), col([it.attractors for it in items], int),
                   col(model, object), col(group, object), col(kind, object), lc, lw, lc > lw,
                   col(oov, bool), col(testset, object), col(method, object), col(pieces_differ, bool),
                   _ties(lc, lw), obj("relation"), obj("feature"), items_col)

    @classmethod
    def concat(cls, tables: Sequence["ScoredTable"]) -> "ScoredTable":
        """The rows of ``tables`` one after the other (their items kept only if all have them)."""
        tables = [t for t in tables if t is not None]
        if not tables:
            return empty()
        cols = {c: np.concatenate([getattr(t, c) for t in tables]) for c in COLUMNS}
        items = (np.concatenate([t.items for t in tables])
                 if all(t.items is not None for t in tables) else None)
        return cls(**cols, items=items, sources=tables[0].sources, humans_path=tables[0].humans_path,
                   left_out=sum(t.left_out for t in tables))

    def __len__(self) -> int:
        return len(self.model)

    def subset(self, mask: np.ndarray) -> "ScoredTable":
        """The rows where ``mask`` (bool array or indices) holds."""
        cols = {c: getattr(self, c)[mask] for c in COLUMNS}
        return dataclasses.replace(self, **cols, items=None if self.items is None else self.items[mask])

    def decidable(self) -> "ScoredTable":
        """The rows a model could decide, the others counted in :attr:`left_out`."""
        if not self.undecidable.any():
            return self
        return dataclasses.replace(self.subset(~self.undecidable),
                                   left_out=self.left_out + int(self.undecidable.sum()))

    def with_scores(self, logp_correct: np.ndarray, logp_wrong: np.ndarray) -> "ScoredTable":
        """These rows with other scores (float64, one per row), ``correct`` and
        ``undecidable`` decided from them by the table's rules."""
        return dataclasses.replace(self, logp_correct=logp_correct, logp_wrong=logp_wrong,
                                   correct=logp_correct > logp_wrong, undecidable=_ties(logp_correct, logp_wrong))

    def models(self) -> list[str]:
        """Model names in order of first appearance."""
        return list(dict.fromkeys(self.model.tolist()))

    @cached_property
    def condition(self) -> np.ndarray:
        """Per row: ``original``, ``nonce`` or the perturbation (the rule of :func:`condition_of`)."""
        out = self.perturbation.copy()
        plain = (self.perturbation == "") | (self.perturbation == "original")
        out[plain] = np.where(self.variant[plain] == 0, "original", "nonce").tolist()
        return out

    @cached_property
    def construction_label(self) -> np.ndarray:
        """Per row: the construction with its direction (:func:`construction_label`)."""
        bare = (self.direction == "") | (self.direction == "_")
        out = self.construction.copy()
        if (~bare).any():
            out[~bare] = np.char.add(np.char.add(self.direction[~bare].astype(str), " "),
                                     self.construction[~bare].astype(str)).astype(object)
        return out

    @cached_property
    def p_correct_share(self) -> np.ndarray:
        """Per row: P(correct) / (P(correct) + P(wrong)), the logistic of the log-odds (NaN: 0.5)."""
        d = self.logp_wrong - self.logp_correct
        with np.errstate(over="ignore", invalid="ignore"):
            p = 1.0 / (1.0 + np.exp(d))
        return np.where(np.isnan(d), 0.5, np.where(d > 700, 0.0, p))

    def item_keys(self) -> np.ndarray:
        """(testset, item_id) as one string: the item a nonce variant belongs to."""
        return np.array([f"{t}\x1f{i}" for t, i in zip(self.testset.tolist(), self.item_id.tolist())],
                        dtype=str)

    def row_keys(self) -> np.ndarray:
        """(testset, item_id, variant, perturbation) as one string: what pairs two models' rows."""
        return np.array([f"{t}\x1f{i}\x1f{v}\x1f{p}" for t, i, v, p in self.keys()], dtype=str)

    def keys(self) -> list[tuple[str, str, int, str]]:
        """Per row (testset, item_id, variant, perturbation): identifies the item across models."""
        return list(zip(self.testset.tolist(), self.item_id.tolist(), self.variant.tolist(),
                        self.perturbation.tolist()))


def empty() -> ScoredTable:
    """A table of no rows."""
    return ScoredTable.of_items([], model="", group="", kind="", logp_correct=(), logp_wrong=())


def _ties(lc: np.ndarray, lw: np.ndarray) -> np.ndarray:
    """The undecidable rule on columns: equal scores, or a NaN."""
    return (lc == lw) | np.isnan(lc) | np.isnan(lw)


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


def write_scored(path: str | os.PathLike, scored: ScoredTable) -> int:
    """Write the scored ``items.tsv`` (columns :data:`SCORED_COLUMNS`, then
    :data:`RELATION_COLUMNS` when a row is a relation item's); returns rows."""
    flag = lambda a: np.where(a, "1", "0").tolist()  # noqa: E731
    cols = (scored.item_id.tolist(), scored.variant.astype(str).tolist(), scored.perturbation.tolist(),
            scored.construction.tolist(), scored.attractors.astype(str).tolist(), scored.model.tolist(),
            [_fmt(x) for x in scored.logp_correct.tolist()], [_fmt(x) for x in scored.logp_wrong.tolist()],
            flag(scored.correct), flag(scored.oov), scored.group.tolist(), scored.testset.tolist(),
            scored.method.tolist(), flag(scored.undecidable))
    header = SCORED_COLUMNS
    if (scored.relation != "").any():
        cols, header = cols + (scored.relation.tolist(), scored.feature.tolist()), header + RELATION_COLUMNS
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(header) + "\n")
        fh.writelines("\t".join(row) + "\n" for row in zip(*cols))
    return len(scored)


def _columns(path: Path, header: list[str]) -> list[int | None]:
    """Position of each of :data:`SCORED_COLUMNS` and :data:`RELATION_COLUMNS` in
    ``header`` (None: absent, optional)."""
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise AgreeError(f"{path}: not a scored items.tsv of this version of agree (it lacks the "
                         f"columns {', '.join(missing)}; written by another version, or not by "
                         "agree score?)")
    return [header.index(c) if c in header else None for c in SCORED_COLUMNS + RELATION_COLUMNS]


def _table(path: Path, fields: dict[str, list], start: int) -> ScoredTable:
    """The read columns (strings; None for an absent optional column) as a table."""
    n = len(fields["model"])
    obj = lambda c: np.array(fields[c], dtype=object) if n else np.empty(0, dtype=object)  # noqa: E731
    num = {}
    for c, dtype in [(c, int) for c in _INT] + [(c, float) for c in _FLOAT]:
        try:
            num[c] = np.array(fields[c], dtype=dtype) if n else np.empty(0, dtype=dtype)
        except ValueError:   # find the row, to name it
            for line, text in enumerate(fields[c], start=start):
                try:
                    dtype(text)
                except ValueError as e:
                    raise AgreeError(f"{path}:{line}: not a scored row (bad number: {e})") from None
            raise
    lc, lw = num["logp_correct"], num["logp_wrong"]
    flag = lambda c, default: (np.full(n, default, dtype=bool) if fields[c] is None  # noqa: E731
                               else np.array(fields[c], dtype=object) == "1")
    method = obj("method") if fields["method"] is not None else np.full(n, "", dtype=object)
    method[method == ""] = "target"
    blank = lambda c: obj(c) if fields[c] is not None else np.full(n, "", dtype=object)  # noqa: E731
    return ScoredTable(obj("item_id"), num["variant"], obj("perturbation"), obj("construction"),
                       np.full(n, "", dtype=object), num["attractors"], obj("model"), obj("group"),
                       np.full(n, "", dtype=object), lc, lw, flag("correct", False), flag("oov", False),
                       obj("testset"), method, np.zeros(n, dtype=bool),
                       _ties(lc, lw) if fields["undecidable"] is None else flag("undecidable", False),
                       blank("relation"), blank("feature"))


@names_undecodable
def read_scored(path: str | os.PathLike) -> ScoredTable:
    """Read a scored ``items.tsv`` (or the directory holding it) into a :class:`ScoredTable`,
    by column name; :class:`AgreeError` for a missing file, a file from another version (a
    required column missing) or a malformed row. An absent ``undecidable`` column is
    derived from the two scores."""
    path = Path(path)
    tsv = path / "items.tsv" if path.is_dir() else path
    if not tsv.is_file():
        raise AgreeError(f"{path}: no scored items.tsv (run agree score first)")
    with open(tsv, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        rows_in = checked_rows(reader, tsv)
        header = next(rows_in, [])
        pos = _columns(tsv, header)
        names = SCORED_COLUMNS + RELATION_COLUMNS
        fields: dict[str, list | None] = {c: (None if i is None else []) for c, i in zip(names, pos)}
        present = [(fields[c], i) for c, i in zip(names, pos) if i is not None]
        for line, row in enumerate(rows_in, start=2):
            if len(row) < len(header):
                raise AgreeError(f"{tsv}:{line}: {len(row)} fields, the header has {len(header)}")
            for out, i in present:
                out.append(row[i])
    return _table(tsv, fields, 2)
