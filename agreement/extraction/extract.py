"""Treebank -> original agreement items (``agree extract``), by either arc source.

:func:`extract_items` checks the options, picks the arc source of
``config.mode`` (:data:`SOURCES`: :class:`~agreement.extraction.constructions.ConstructionSource`,
the paper's method, or :class:`~agreement.extraction.relations.RelationSource`)
and lets it mine: each source reads the treebank, yields candidate arcs into the
one item builder (:mod:`agreement.extraction.item_builder`: wrong form, filters,
attractors, counters) and returns an :class:`ExtractResult` with its own report.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Iterable, Sequence

from agreement.errors import AgreeError
from agreement.extraction.config import ExtractConfig, ExtractResult, parse_features, parse_relations, parse_values
from agreement.extraction.constructions import ConstructionSource
from agreement.extraction.itemtools import file_stem, gc_paused
from agreement.extraction.relations import RelationSource
from treebanks.errors import literal
from treebanks.paradigms import MODES
from treebanks.reader import expand_paths

#: mode -> its arc source
SOURCES = {s.mode: s for s in (ConstructionSource(), RelationSource())}


def extract_items(paths: Iterable[str | os.PathLike], config: ExtractConfig = ExtractConfig(), *,
                  paradigms: Sequence[str | os.PathLike] = (),
                  lexicon: str | os.PathLike | None = None) -> ExtractResult:
    """Mine agreement items from UD treebank files: constructions (the paper's
    method, the default) or, with ``config.mode == "relations"``, agreement
    relations (:mod:`agreement.extraction.relations`), with wrong forms pooled over
    ``paths``, the extra treebanks ``paradigms`` and the UniMorph file ``lexicon``.
    A run without items says why in ``reason`` (one line)."""
    config = check_config(config)
    source = SOURCES[config.mode]
    source.check_inputs(config, paradigms, lexicon)  # fail before the long part
    files = expand_paths(paths)
    with gc_paused():
        return source.mine(files, config, paradigms=paradigms, lexicon=lexicon)


def check_config(config: ExtractConfig) -> ExtractConfig:
    """``config`` with its features in canonical order, checked: an :class:`AgreeError`
    for options that contradict each other (before any treebank is read)."""
    config = dataclasses.replace(config, features=parse_features(config.features))
    _check_config(config)
    return config


def _check_config(c: ExtractConfig) -> None:
    if c.alt not in MODES:
        raise AgreeError(f"unknown {{alt}} {literal(repr(c.alt))} (expected one of: {', '.join(MODES)})",
                         fields=True)
    if not 1 <= c.min_distance <= (c.max_distance if c.max_distance is not None else c.min_distance):
        raise AgreeError(f"need 1 <= min distance <= max distance (got {c.min_distance}..{c.max_distance})")
    SOURCES[c.mode].check_config(c)
    if c.min_count < 1:
        raise AgreeError(f"{{min_count}} must be at least 1 (got {c.min_count})", fields=True)


__all__ = ["ExtractConfig", "ExtractResult", "SOURCES", "extract_items", "check_config", "parse_features",
           "parse_values", "parse_relations", "file_stem"]
