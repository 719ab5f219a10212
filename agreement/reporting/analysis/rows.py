"""Scored rows of one or more ``agree score`` output directories, as one
:class:`formats.scored.ScoredTable` (the one form of scored rows).

The scored ``items.tsv`` is read by :func:`formats.scored.read_scored`, the one
reader (by column name, with its check of the columns). A directory without
``items.tsv``, whose manifest was not written by ``agree score``, or whose
``items.tsv`` lacks a required column, is refused with one :class:`AgreeError`
naming it. The analyses group the rows by item, model and condition as arrays.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from agreement.errors import AgreeError
from formats.manifest import MANIFEST, read_manifest
from formats.scored import ScoredTable, read_scored


def _read_dir(path: Path) -> tuple[ScoredTable, str | None]:
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
    """Read score directories (or their items.tsv) into one :class:`ScoredTable` of the
    decidable rows (the undecidable ones, a tie or a NaN score, counted in
    :attr:`~formats.scored.ScoredTable.left_out`, as ``agree score`` leaves them out of
    accuracy); ``sources``: the paths read, ``humans_path``: the first ``--humans`` file
    their manifests name.

    A model name that occurs in more than one directory is prefixed with its
    directory's name (``dir:model``), so two runs of one model stay apart."""
    parts, humans = [], None
    for p in paths:
        table, h = _read_dir(Path(p))
        parts.append((Path(p), table))
        humans = humans or h
    owners: dict[str, set] = {}
    for p, table in parts:
        for m in set(table.model.tolist()):
            owners.setdefault(m, set()).add(p)
    renamed = []
    for p, table in parts:
        model = np.array([m if len(owners[m]) == 1 else f"{p.name}:{m}" for m in table.model.tolist()],
                         dtype=object)
        renamed.append(dataclasses.replace(table, model=model))
    table = ScoredTable.concat(renamed)
    if not len(table):
        raise AgreeError(f"{', '.join(map(str, paths))}: no scored rows")
    table = dataclasses.replace(table, sources=tuple(str(p) for p, _ in parts), humans_path=humans)
    return table.decidable()
