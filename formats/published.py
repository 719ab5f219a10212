"""Per-paradigm figures computed elsewhere, shown beside ours: BLiMP's human
validation (``human_validation_summary.csv``, ``agree score --humans``) and BLiMP's
published model accuracies (``models_summary.jsonl``, ``agree score --reference``).

Both are joined to our items by construction: a BLiMP item's construction is its
paradigm (``UID``). They become rows of the summary's per-construction breakdown
(and an ``all`` row: the unweighted mean over the paradigms that the scored items
cover), so the tables and the per-construction plot show them as extra columns.
They are not recomputed here: no interval (``ci_low = ci_high = accuracy``), and
published columns are labelled ``<model> (published)``.

``human_validation_summary.csv``: CSV with a header; ``Condition`` (the paradigm),
``total_mean`` (share of raters agreeing with the label, 0..1), ``count`` (pairs rated).
``models_summary.jsonl``: one JSON object per paradigm with ``UID`` and one 0..1
accuracy per model (``ngram``, ``lstm``, ``txl``, ``gpt2``); other keys are ignored.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from formats.errors import AgreeError, names_undecodable
from formats.jsonl import json_lines
from formats.tsv import checked_rows
from formats.scored import ScoredTable

HUMANS = "humans"
#: models_summary.jsonl keys that are not model columns
_NOT_MODELS = ("UID", "linguistics_term", "field", "total")
#: BLiMP's column names -> the names of its paper
MODEL_NAMES = {"ngram": "5-gram", "lstm": "LSTM", "txl": "Transformer-XL", "gpt2": "GPT-2"}


def is_blimp_humans(path: str | os.PathLike) -> bool:
    """A CSV whose header has ``Condition`` and ``total_mean``."""
    try:
        with open(path, encoding="utf-8") as fh:
            header = next(csv.reader([fh.readline()]), [])
    except (OSError, UnicodeDecodeError):
        return False
    return "Condition" in header and "total_mean" in header


@names_undecodable
def read_blimp_humans(path: str | os.PathLike) -> dict[str, tuple[float, int]]:
    """paradigm -> (share of raters agreeing with the label, pairs rated)."""
    path = Path(path)
    out = {}
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        for row in checked_rows(reader, path):
            try:
                out[row["Condition"]] = (float(row["total_mean"]), int(float(row.get("count") or 0)))
            except (TypeError, ValueError) as e:
                raise AgreeError(f"{path}:{reader.line_num}: malformed row ({e})") from None
    if not out:
        raise AgreeError(f"{path}: no paradigm rows")
    return out


@names_undecodable
def read_reference(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """models_summary.jsonl: model label -> paradigm -> accuracy (0..1)."""
    path = Path(path)
    if not path.is_file():
        raise AgreeError(f"{path}: no such reference file")
    out: dict[str, dict[str, float]] = {}
    for lineno, row in json_lines(path):
        if "UID" not in row:
            raise AgreeError(f"{path}:{lineno}: expected a JSON object with a UID "
                             "(BLiMP's models_summary.jsonl)")
        for key, value in row.items():
            if key in _NOT_MODELS or not isinstance(value, (int, float)):
                continue
            label = f"{MODEL_NAMES.get(key, key)} (published)"
            out.setdefault(label, {})[str(row["UID"])] = float(value)
    if not out:
        raise AgreeError(f"{path}: no model accuracies found")
    return out


@dataclass(frozen=True)
class PublishedRow:
    """One figure from elsewhere as a row of the summary's breakdowns: ``label`` (its
    column: ``humans``, ``LSTM (published)``), ``kind``, ``condition``, ``by``
    (``construction`` or ``all``), ``value`` (the construction's table name; None for
    ``all``), ``rated`` (pairs or paradigms behind it, from the source) and ``accuracy``
    (%, rounded to 4 places). None of our items went into it (``items`` 0 in the
    summary, so the tables' item counts stay ours) and it has no interval."""
    label: str
    kind: str
    condition: str
    by: str
    value: str | None
    rated: int
    accuracy: float

    def as_dict(self) -> dict:
        """summary.json's row (the fields of a computed cell, the interval collapsed)."""
        return {"group": self.label, "kind": self.kind, "models": 1, "condition": self.condition, "by": self.by,
                "value": self.value, "items": 0, "rated": self.rated, "accuracy": self.accuracy, "sd": None,
                "ci_low": self.accuracy, "ci_high": self.accuracy}


@dataclass(frozen=True)
class PublishedFigures:
    """Per-paradigm figures of one file joined to the constructions scored: ``source``
    (the file as given), ``labels`` (their columns, in order), ``rows``; for BLiMP's human
    validation also ``judgments`` (paradigms in the file) and ``matched_paradigms``."""
    source: str
    labels: tuple[str, ...]
    rows: tuple[PublishedRow, ...]
    judgments: int = 0
    matched_paradigms: int = 0


def _row(label: str, kind: str, cond: str, by: str, value, rated: int, acc: float) -> PublishedRow:
    return PublishedRow(label, kind, cond, by, value, rated, round(100 * acc, 4))


def paradigm_rows(label: str, kind: str, figures: Mapping[str, float],
                  constructions: Mapping[str, tuple[str, set]],
                  counts: Mapping[str, int] | None = None) -> list[PublishedRow]:
    """Summary rows for per-paradigm ``figures`` (0..1) on the constructions scored
    (table name -> (paradigm, conditions it appears in); :func:`constructions_of`):
    one per (condition, paradigm) and an ``all`` row per condition (unweighted mean
    over the matched paradigms)."""
    rows, per_cond = [], {}
    for name in sorted(constructions):
        paradigm, conds = constructions[name]
        if paradigm not in figures:
            continue
        for cond in sorted(conds):
            n = (counts or {}).get(paradigm, 0)
            rows.append(_row(label, kind, cond, "construction", name, n, figures[paradigm]))
            per_cond.setdefault(cond, []).append(figures[paradigm])
    for cond, values in per_cond.items():
        rows.append(_row(label, kind, cond, "all", None, len(values), sum(values) / len(values)))
    return rows


def constructions_of(scored: ScoredTable) -> dict[str, tuple[str, set]]:
    """The constructions scored, by the name the tables give them
    (:func:`formats.scored.construction_label`; a BLiMP paradigm's is its UID): name ->
    (paradigm, the conditions it is scored in)."""
    out: dict[str, tuple[str, set]] = {}
    for name, bare, cond in zip(scored.construction_label.tolist(), scored.construction.tolist(),
                                scored.condition.tolist()):
        out.setdefault(name, (bare, set()))[1].add(cond)
    return out


def humans_figures(shares: Mapping[str, tuple[float, int]], scored: ScoredTable, source: str) -> PublishedFigures:
    """BLiMP's per-paradigm human shares on the constructions of ``scored``."""
    cons = constructions_of(scored)
    rows = paradigm_rows(HUMANS, "humans", {k: v[0] for k, v in shares.items()}, cons,
                         {k: v[1] for k, v in shares.items()})
    if not rows:
        raise AgreeError(f"{source}: none of its {len(shares)} paradigms is a construction of the "
                         "test sets (BLiMP paradigms are joined by UID)")
    matched = sorted(p for p, _ in cons.values() if p in shares)
    return PublishedFigures(str(source), (HUMANS,), tuple(rows), len(shares), len(matched))


def reference_figures(reference: Mapping[str, Mapping[str, float]], scored: ScoredTable,
                      source: str) -> PublishedFigures:
    """Published per-paradigm accuracies on the constructions of ``scored``."""
    cons = constructions_of(scored)
    rows = [r for label, figures in reference.items() for r in paradigm_rows(label, "published", figures, cons)]
    if not rows:
        raise AgreeError(f"{source}: none of its paradigms is a construction of the test sets "
                         "(BLiMP paradigms are joined by UID)")
    return PublishedFigures(str(source), tuple(reference), tuple(rows))
