"""Scored rows of one or more ``agree score`` output directories, as columns.

The scored ``items.tsv`` is read by :func:`formats.scored.read_scored`, the one
reader (by column name, with its check of the columns). A directory without
``items.tsv``, whose manifest was not written by ``agree score``, or whose
``items.tsv`` lacks a required column, is refused with one :class:`AgreeError`
naming it.

Numpy columns built from the read rows: the analyses group ~50,000 rows by item,
model and condition, which array code does in milliseconds.
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from agreement.errors import AgreeError
from formats.manifest import MANIFEST, read_manifest
from formats.scored import ScoredRow, read_scored


@dataclass(frozen=True)
class ScoredTable:
    """One entry per scored (item, model) row; all arrays have the same length.

    item_id, testset, perturbation, construction, model, group  str arrays (object)
    variant, attractors  int arrays
    logp_correct, logp_wrong  natural-log probabilities of the two forms
    correct      bool: the model strictly preferred the correct form (ties are left out)
    condition    ``original`` (variant 0), ``nonce`` (variants of an unperturbed item),
                 else the perturbation (``swap`` for :mod:`nonce.target_swaps` items)
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


def _read_dir(path: Path) -> tuple[list[ScoredRow], str | None]:
    """Rows of one score directory (the one reader, :func:`formats.scored.read_scored`),
    and the humans file its manifest names."""
    tsv = path / "items.tsv" if path.is_dir() else path
    if not tsv.is_file():
        raise AgreeError(f"{path}: not an agree score output (no items.tsv)")
    humans = None
    if (tsv.parent / MANIFEST).is_file():
        try:
            manifest = read_manifest(tsv.parent)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise AgreeError(f"{path}: not an agree score output (manifest.json unreadable: {e})") from None
        if not isinstance(manifest, dict) or manifest.get("command") != "score":
            cmd = manifest.get("command") if isinstance(manifest, dict) else None
            raise AgreeError(f"{path}: not an agree score output (manifest.json written by {cmd!r})")
        humans = (manifest.get("parameters") or {}).get("humans")
    return read_scored(tsv), humans


def scored_table(paths: Sequence[str | os.PathLike]) -> ScoredTable:
    """Read score directories (or their items.tsv) into one :class:`ScoredTable`.

    A model name that occurs in more than one directory is prefixed with its
    directory's name (``dir:model``), so two runs of one model stay apart."""
    parts, humans = [], None
    for p in paths:
        rows, h = _read_dir(Path(p))
        parts.append((Path(p), rows))
        humans = humans or h
    owners: dict[str, set] = {}
    for p, rows in parts:
        for m in {r.model for r in rows}:
            owners.setdefault(m, set()).add(p)
    rows = [(r, r.model if len(owners[r.model]) == 1 else f"{p.name}:{r.model}") for p, rs in parts for r in rs]
    if not rows:
        raise AgreeError(f"{', '.join(map(str, paths))}: no scored rows")
    obj = lambda values: np.array(list(values), dtype=object)  # noqa: E731
    lc = np.array([r.logp_correct for r, _ in rows], dtype=float)
    lw = np.array([r.logp_wrong for r, _ in rows], dtype=float)
    table = ScoredTable(obj(r.item_id for r, _ in rows), obj(r.testset for r, _ in rows),
                        np.array([r.variant for r, _ in rows], dtype=int),
                        obj(r.perturbation for r, _ in rows), obj(r.construction for r, _ in rows),
                        np.array([r.attractors for r, _ in rows], dtype=int), obj(m for _, m in rows),
                        obj(r.group for r, _ in rows), lc, lw,
                        np.array([r.correct for r, _ in rows], dtype=bool),
                        obj(r.condition for r, _ in rows),
                        sources=tuple(str(p) for p, _ in parts), humans_path=humans)
    # as agree score counts them (read_scored: the column, or the rule of ScoredItem.undecidable);
    # accuracy is over the decidable rows
    undecidable = np.array([r.undecidable for r, _ in rows], dtype=bool)
    if undecidable.any():
        table = dataclasses.replace(table.subset(~undecidable), undecidable=int(undecidable.sum()))
    return table
