"""Scored rows of one or more ``agree score`` output directories, as columns.

The scored ``items.tsv`` is read by column *name*: the columns in :data:`REQUIRED`
must be there, any others (``method``, ``undecidable`` ... added by later versions)
are ignored. A directory without ``items.tsv``, whose manifest was not written by
``agree score``, or whose ``items.tsv`` lacks a required column, is refused with one
:class:`AgreeError` naming it.

Numpy columns rather than one record per row: the analyses group ~50,000 rows
by item, model and condition, which array code does in milliseconds.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from agreement.errors import AgreeError

REQUIRED = ("item_id", "variant", "perturbation", "construction", "attractors", "model",
            "logp_correct", "logp_wrong", "correct", "group", "testset")


@dataclass(frozen=True)
class ScoredTable:
    """One entry per scored (item, model) row; all arrays have the same length.

    item_id, testset, perturbation, construction, model, group  str arrays (object)
    variant, attractors  int arrays
    logp_correct, logp_wrong  natural-log probabilities of the two forms
    correct      bool: the model strictly preferred the correct form (ties are left out)
    condition    ``original`` (variant 0), ``nonce`` (variants of an unperturbed item),
                 else the perturbation (``swap`` for :mod:`nonce.systematicity` items)
    sources      the directories read, in order
    humans_path  the ``--humans`` file named in the first directory's manifest, if any
    undecidable  rows left out because the model could not decide them (a tie or a NaN
                 score, as ``agree score`` counts them apart from accuracy)
    """
    item_id: np.ndarray
    testset: np.ndarray
    variant: np.ndarray
    perturbation: np.ndarray
    construction: np.ndarray
    attractors: np.ndarray
    model: np.ndarray
    group: np.ndarray
    logp_correct: np.ndarray
    logp_wrong: np.ndarray
    correct: np.ndarray
    condition: np.ndarray
    sources: tuple[str, ...] = ()
    humans_path: str | None = None
    undecidable: int = 0

    def __len__(self) -> int:
        return len(self.model)

    def models(self) -> list[str]:
        """Model names in order of first appearance."""
        return list(dict.fromkeys(self.model.tolist()))

    def subset(self, mask: np.ndarray) -> "ScoredTable":
        cols = {f: getattr(self, f)[mask] for f in _ARRAYS}
        return ScoredTable(**cols, sources=self.sources, humans_path=self.humans_path,
                           undecidable=self.undecidable)

    def item_keys(self) -> np.ndarray:
        """(testset, item_id) as one string: the item a nonce variant belongs to."""
        return np.char.add(np.char.add(self.testset.astype(str), "\x1f"), self.item_id.astype(str))

    def row_keys(self) -> np.ndarray:
        """(testset, item_id, variant, perturbation): what pairs two models' rows."""
        k = np.char.add(self.item_keys(), "\x1f")
        k = np.char.add(np.char.add(k, self.variant.astype(str)), "\x1f")
        return np.char.add(k, self.perturbation.astype(str))


_ARRAYS = ("item_id", "testset", "variant", "perturbation", "construction", "attractors", "model",
           "group", "logp_correct", "logp_wrong", "correct", "condition")


def _condition(perturbation: str, variant: int) -> str:
    # the same rule as agreement.score.condition, on the written columns
    if perturbation in ("", "original"):
        return "original" if variant == 0 else "nonce"
    return perturbation


def _read_dir(path: Path) -> tuple[dict[str, list], str | None]:
    """Columns of one score directory, checked; and the humans file its manifest names."""
    tsv = path / "items.tsv" if path.is_dir() else path
    if not tsv.is_file():
        raise AgreeError(f"{path}: not an agree score output (no items.tsv)")
    manifest_path = tsv.parent / "manifest.json"
    humans = None
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise AgreeError(f"{path}: not an agree score output (manifest.json unreadable: {e})") from None
        if not isinstance(manifest, dict) or manifest.get("command") != "score":
            cmd = manifest.get("command") if isinstance(manifest, dict) else None
            raise AgreeError(f"{path}: not an agree score output (manifest.json written by {cmd!r})")
        humans = (manifest.get("parameters") or {}).get("humans")
    with open(tsv, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, [])
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise AgreeError(f"{path}: not an agree score output (items.tsv lacks the columns "
                             f"{', '.join(missing)}; written by another version?)")
        pos = [header.index(c) for c in REQUIRED]
        cols: dict[str, list] = {c: [] for c in REQUIRED}
        for line, row in enumerate(reader, start=2):
            if len(row) < len(header):
                raise AgreeError(f"{tsv}:{line}: {len(row)} fields, the header has {len(header)}")
            for c, i in zip(REQUIRED, pos):
                cols[c].append(row[i])
    return cols, humans


def read_scored(paths: Sequence[str | os.PathLike]) -> ScoredTable:
    """Read score directories (or their items.tsv) into one :class:`ScoredTable`.

    A model name that occurs in more than one directory is prefixed with its
    directory's name (``dir:model``), so two runs of one model stay apart."""
    parts, humans = [], None
    for p in paths:
        cols, h = _read_dir(Path(p))
        parts.append((Path(p), cols))
        humans = humans or h
    owners: dict[str, set] = {}
    for p, cols in parts:
        for m in set(cols["model"]):
            owners.setdefault(m, set()).add(p)
    merged: dict[str, list] = {c: [] for c in REQUIRED}
    for p, cols in parts:
        for c in REQUIRED:
            if c == "model":
                merged[c] += [m if len(owners[m]) == 1 else f"{p.name}:{m}" for m in cols[c]]
            else:
                merged[c] += cols[c]
    if not merged["model"]:
        raise AgreeError(f"{', '.join(map(str, paths))}: no scored rows")
    try:
        variant = np.array(merged["variant"], dtype=int)
        attractors = np.array(merged["attractors"], dtype=int)
        lc = np.array(merged["logp_correct"], dtype=float)
        lw = np.array(merged["logp_wrong"], dtype=float)
        correct = np.array(merged["correct"], dtype=int) == 1
    except ValueError as e:
        raise AgreeError(f"{', '.join(map(str, paths))}: not an agree score output (bad number: {e})") from None
    obj = lambda c: np.array(merged[c], dtype=object)  # noqa: E731
    pert = obj("perturbation")
    cond = np.array([_condition(p, v) for p, v in zip(merged["perturbation"], variant.tolist())], dtype=object)
    table = ScoredTable(obj("item_id"), obj("testset"), variant, pert, obj("construction"), attractors,
                        obj("model"), obj("group"), lc, lw, correct, cond,
                        sources=tuple(str(p) for p, _ in parts), humans_path=humans)
    # the rule of agree score (ScoredItem.undecidable): accuracy is over decidable rows
    undecidable = (lc == lw) | np.isnan(lc) | np.isnan(lw)
    if undecidable.any():
        table = dataclasses.replace(table.subset(~undecidable), undecidable=int(undecidable.sum()))
    return table
