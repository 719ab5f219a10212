"""Treebank -> constructions and original agreement items (``agree extract``).

:func:`extract_items` reads the treebank once, as arrays (parsed in parallel or
from the parse cache: :mod:`treebanks.cache`), which feed the paradigm table
(counts per analysis) and the construction miner (:mod:`agreement.extraction.mining`, all
arcs at once). Then each
agreeing arc of a kept construction becomes an original :class:`Item`
(method.md section 2, steps 5-7) unless (counted in ``ExtractResult.filters``)

* ``non_number_difference``: the lemma's only other-number forms differ in more
  than number (Tense, Mood, VerbForm...; features that co-vary with number in the
  treebank, such as Gender on Russian past tenses, excepted:
  :meth:`ParadigmTable.rejected_alternatives`); ``--explain`` lists examples with
  the features that differed;
* ``no_alternative``: the paradigm table has no form of the target's lemma and
  POS with the other agreement value (:meth:`ParadigmTable.alternative`; a
  capitalised alternative of a lowercase target is lowercased: the table may
  have seen it only at the start of a sentence);
* ``same_spelling``: the alternative is spelled like the target (*said*/*said*);
* ``vocab``: with a vocabulary, a word from cue to target or the alternative
  form is not in it (the paper's filter).

Attractors (step 7): context words that have, among their analyses in the
paradigm table at least 10% as frequent as their most frequent one, an analysis
with the cue's POS and another agreement value.

``filters`` (also in ``manifest.json``), in pipeline order: ``arcs`` (non-root
arcs read), dropped by ``distance`` / ``punct`` / ``non_projective`` /
``missing_feature`` / ``excluded_value`` (see :mod:`agreement.extraction.mining`), ``candidates`` left; the
``constructions`` they form, ``constructions_rejected`` / ``_kept`` and the arcs
in each; ``disagreeing`` arcs of kept constructions; then the item filters
above and ``items`` left.

Dual number: agreement is tested between the two values of ``values``
(``--values``, default ``Sing,Plur``): an arc with a ``Number=Dual`` (or any other
value) end is dropped as ``excluded_value``, and an alternative form is always
one of the two values, so dual forms are neither cues, targets nor wrong forms.
A value the treebank never uses is an error that lists the values it has.

Item ids are ``<file stem>:<sent_id>:<cue>-<target>`` (0-based indices), unique
and stable across runs; items are sorted by construction (the order of
``constructions.tsv``), then treebank order.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from agreement.errors import AgreeError
from agreement.extraction.config import (ExtractConfig, ExtractResult, check_relation_features, parse_features,
                                         parse_relations, parse_values)
from agreement.extraction.itemtools import ATTRACTOR_MIN_SHARE, as_word, file_stem, gc_paused, match_case
from agreement.extraction.mining import Construction, ConstructionMiner, Key, explain, parse_construction
from agreement.extraction.relations import extract_relations
from formats.items import Item
from treebanks.errors import TreebankError, literal
from treebanks.features import feature_names, feature_values, infer_verb_number
from treebanks.paradigms import MODES, ParadigmTable
from treebanks.cache import load_columns
from treebanks.columns import TreebankColumns
from treebanks.reader import expand_paths

CONSTRUCTIONS_FILE = "constructions.tsv"
CONSTRUCTION_COLUMNS = ("direction", "construction", "pairs", "sing", "plur", "cue_counts",
                        "entropy", "arcs", "items")


def extract_items(paths: Iterable[str | os.PathLike], config: ExtractConfig = ExtractConfig(), *,
                  paradigms: Sequence[str | os.PathLike] = (),
                  lexicon: str | os.PathLike | None = None) -> ExtractResult:
    """Mine agreement items from UD treebank files: constructions (the paper's
    method, the default) or, with ``config.mode == "relations"``, agreement
    relations (:mod:`agreement.extraction.relations`), with wrong forms pooled over
    ``paths``, the extra treebanks ``paradigms`` and the UniMorph file ``lexicon``.
    A run without items says why in ``reason`` (one line)."""
    config = check_config(config)
    if config.mode == "constructions" and (paradigms or lexicon is not None):
        raise AgreeError("pooled paradigms ({paradigms}) and a lexicon ({lexicon}) are for relation "
                         "mining ({mode} relations)", fields=True)
    keys = [parse_construction(s) for s in config.explain]  # fail before the long part
    files = expand_paths(paths)
    with gc_paused():
        if config.mode == "relations":
            return extract_relations(files, config, paradigms=paradigms, lexicon=lexicon)
        result = _extract(files, config, keys)
        if not result.items:
            result = dataclasses.replace(result, reason=_construction_reason(result, config))
        return result


def _extract(files: list[Path], config: ExtractConfig, keys: list[Key]) -> ExtractResult:
    miner = ConstructionMiner(config.mining())
    tb, reading = load_columns(files, cache_dir=config.cache_dir, workers=config.workers)
    if config.infer_verb_number:
        tb = _infer_number(tb)
    table = ParadigmTable(tb.analyses())
    miner.add_columns(tb)
    _check_features(table, config.features, files)
    _check_values(table, config, files)

    constructions = miner.constructions()
    filters = dict(miner.drops)
    kept = [c for c in constructions if c.kept]
    filters["constructions"] = len(constructions)
    filters["constructions_rejected"] = len(constructions) - len(kept)
    filters["constructions_kept"] = len(kept)
    filters["arcs_in_rejected_constructions"] = sum(c.arcs for c in constructions if not c.kept)
    filters["arcs_in_kept_constructions"] = sum(c.arcs for c in kept)
    filters["disagreeing"] = sum(c.arcs - len(miner.agreeing[c.key]) for c in kept)
    for name in ("non_number_difference", "no_alternative", "same_spelling", "vocab"):
        filters[name] = 0

    builder = _ItemBuilder(table, config, filters)
    per_key = {c.key: [it for arc in miner.agreeing[c.key] if (it := builder.item(c, arc))] for c in kept}
    kept.sort(key=lambda c: (-len(per_key[c.key]), c.direction, c.pos))
    items = tuple(it for c in kept for it in per_key[c.key])
    filters["items"] = len(items)
    explanations = []
    for key in keys:
        text = explain(miner.judge(key), key, config.mining())
        if key in per_key:
            text += f"\n  items: {len(per_key[key])}"
            text += builder.explain_rejections(key)
        explanations.append(text)
    return ExtractResult(items, tuple(constructions), tuple(kept), {k: len(v) for k, v in per_key.items()},
                         table, filters, miner.sentences, miner.tokens, tuple(files), tuple(explanations),
                         reading)


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
    if c.mode == "relations":
        parse_relations(c.relations)
        check_relation_features(c.features)
        if c.explain:
            raise AgreeError("{explain} names constructions; relation mining has none", fields=True)
    if c.min_count < 1:
        raise AgreeError(f"{{min_count}} must be at least 1 (got {c.min_count})", fields=True)


def _construction_reason(result: ExtractResult, config: ExtractConfig) -> str:
    """Why the construction filter kept nothing, with its counts for the construction
    nearest to passing, and what would find more (a template, as
    :func:`agreement.extraction.relations.zero_reason`)."""
    cs = result.constructions
    if not cs:
        return (f"no candidate arc ({config.min_distance}..{config.max_distance} apart, both ends with "
                f"{'|'.join(config.features)}) in {result.sentences} sentences; relation mining ({{mode}} "
                f"relations) takes every distance and needs no construction counts")
    if result.kept:
        return (f"{len(result.kept)} constructions kept, but none of their arcs has a usable wrong form "
                f"(no alternative {result.filters['no_alternative']}, not number only "
                f"{result.filters['non_number_difference']}, same spelling {result.filters['same_spelling']}, "
                f"vocabulary {result.filters['vocab']}); relation mining ({{mode}} relations) pools paradigms")

    def nearest(c):
        counts = [n for v, n in c.cue_counts]
        return (c.entropy < config.max_entropy, sorted(counts)[-2] if len(counts) > 1 else 0, c.arcs)
    best = max(cs, key=nearest)
    cues = ", ".join(f"{v} {n}" for v, n in best.cue_counts) or "no value pair seen twice"
    return (f"0 of {len(cs)} constructions kept: none has H(cue|target) < {config.max_entropy:g} and "
            f"{{min_count}} {config.min_count} cues of two values (nearest: {literal(best.name)}, "
            f"{best.arcs} arcs, cues {literal(cues)}, H = {best.entropy:.3f}); a lower {{min_count}} or "
            f"relation mining ({{mode}} relations), which needs no construction counts, would find more")


def _check_features(table: ParadigmTable, features: Sequence[str], files: Sequence[Path]) -> None:
    seen: set[str] = set()
    for feats in {a.feats for a in table.counts}:
        seen |= feature_names(feats)
    missing = [f for f in features if f not in seen]
    if missing:
        where = str(files[0]) if len(files) == 1 else f"{len(files)} files"
        have = ", ".join(sorted(seen, key=str.lower)) or "none"
        raise TreebankError(f"{where}: no token has the feature {', '.join(missing)}; "
                            f"features in this treebank: {have}")


def _check_values(table: ParadigmTable, c: ExtractConfig, files: Sequence[Path]) -> None:
    if not c.values:
        return
    feature = c.features[c.mining().pivot]
    seen = set()
    for feats in {a.feats for a in table.counts}:
        v = feature_values(feats, (feature,))
        if v is not None:
            seen.update(v[0].split(","))
    missing = [v for v in c.values if v not in seen]
    if missing:
        where = str(files[0]) if len(files) == 1 else f"{len(files)} files"
        raise AgreeError(f"{{values}} {literal(','.join(c.values))}: no token of {literal(where)} has "
                         f"{literal(feature)}={literal(missing[0])}; its {literal(feature)} values: "
                         f"{literal(', '.join(sorted(seen)))}", fields=True)


def _infer_number(tb: TreebankColumns) -> TreebankColumns:
    """``--infer-verb-number`` on a whole treebank: the rule depends on a word's
    UPOS and FEATS only, so it is worked out once per FEATS value."""
    names = list(tb.feats_names)
    index = {f: k for k, f in enumerate(names)}
    verbal = np.array([index.setdefault(infer_verb_number("VERB", f), len(index)) for f in tb.feats_names])
    names = list(index)
    is_verb = np.isin(tb.upos, [k for k, u in enumerate(tb.upos_names) if u in ("VERB", "AUX")])
    return tb.with_feats(np.where(is_verb, verbal[tb.feats], tb.feats), names)


class _ItemBuilder:
    """Turns agreeing arcs into items, applying the item filters (counted)."""

    def __init__(self, table: ParadigmTable, config: ExtractConfig, filters: dict[str, int]):
        self.table, self.config, self.filters = table, config, filters
        self._readings: dict[str, frozenset] = {}
        self.rejections: dict = {}  # construction key -> [(target, alternative, differing features)]

    def readings(self, form: str) -> frozenset:
        """(upos, agreement value) of the form's analyses that count for attractors."""
        r = self._readings.get(form)
        if r is None:
            rows = self.table.analyses(form)
            top = rows[0][1] if rows else 0
            r = frozenset((a.upos, v) for a, n in rows if n >= ATTRACTOR_MIN_SHARE * top
                          and (v := feature_values(a.feats, self.config.features)) is not None)
            self._readings[form] = r
        return r

    def item(self, c: Construction, arc) -> Item | None:
        cfg, filters = self.config, self.filters
        tokens = arc.sentence.tokens
        cue, target = tokens[arc.cue], tokens[arc.target]
        wrong = self.table.alternative(target.lemma, target.upos, target.feats, cfg.features, cfg.alt,
                                       cfg.values)
        if wrong is None:
            rejected = self.table.rejected_alternatives(target.lemma, target.upos, target.feats, cfg.features,
                                                        cfg.values)
            if rejected:
                filters["non_number_difference"] += 1
                self.rejections.setdefault(c.key, []).append((target.form, *rejected[0]))
            else:
                filters["no_alternative"] += 1
            return None
        wrong = match_case(wrong, target.form)
        if wrong == target.form:
            filters["same_spelling"] += 1
            return None
        if cfg.vocab is not None and (wrong not in cfg.vocab or any(
                t.form not in cfg.vocab for t in tokens[arc.cue:arc.target + 1])):
            filters["vocab"] += 1
            return None
        context = tokens[arc.cue + 1:arc.target]
        attractors = sum(1 for t in context if any(
            u == cue.upos and v != arc.value for u, v in self.readings(t.form)))
        s = arc.sentence
        return Item(
            item_id=f"{file_stem(s.source)}:{s.sent_id}:{arc.cue}-{arc.target}",
            variant=0, construction=" ".join(c.pos), direction=c.direction,
            tokens=tuple(as_word(t.form) for t in tokens), pos=tuple(t.upos for t in tokens),
            feats=tuple(t.feats for t in tokens), correct=as_word(target.form), wrong=as_word(wrong),
            lemma=target.lemma, number=",".join(arc.value), cue_index=arc.cue, target_index=arc.target,
            attractors=attractors, punct=any(t.upos == "PUNCT" for t in context),
            space_after=tuple(t.space_after for t in tokens[:-1]) + (False,))  # none after the end


    def explain_rejections(self, key) -> str:
        """Lines for ``--explain``: targets whose other-number form differed in more than number."""
        rows = self.rejections.get(key, [])
        if not rows:
            return ""
        shown = "; ".join(f"{t} / {alt}: {', '.join(diff)}" for t, alt, diff in rows[:5])
        return (f"\n  rejected, other-number form differs beyond number: {len(rows)} "
                f"(e.g. {shown})")


def write_constructions(path: str | os.PathLike, result: ExtractResult, features: Sequence[str]) -> int:
    """Write ``constructions.tsv`` (the kept constructions, in item order); returns rows.

    Columns: direction; construction (POS, cue first); pairs (``cue>target:arcs``,
    all candidate arcs); sing / plur (cues with Number=Sing / Plur, pairs seen once
    excluded; empty when Number is not an agreement feature); cue_counts (the same
    for every value of every feature); entropy (H(cue | target), nats); arcs
    (candidate arcs); items (original items extracted)."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(CONSTRUCTION_COLUMNS) + "\n")
        for c in result.kept:
            counts = dict(c.cue_counts)
            number = "Number" in features
            row = (c.direction, " ".join(c.pos), " ".join(f"{cv}>{tv}:{n}" for cv, tv, n in c.pairs),
                   str(counts.get("Number=Sing", 0)) if number else "",
                   str(counts.get("Number=Plur", 0)) if number else "",
                   " ".join(f"{v}:{n}" for v, n in c.cue_counts), f"{c.entropy:.6f}", str(c.arcs),
                   str(result.item_counts[c.key]))
            fh.write("\t".join(row) + "\n")
    return len(result.kept)


def summary_table(result: ExtractResult) -> str:
    """The kept constructions as a small text table (for stdout)."""
    rows = [("dir", "construction", "sing", "plur", "arcs", "items")]
    for c in result.kept:
        counts = dict(c.cue_counts)
        rows.append((c.direction, " ".join(c.pos), str(counts.get("Number=Sing", "-")),
                     str(counts.get("Number=Plur", "-")), str(c.arcs), str(result.item_counts[c.key])))
    rows.append(("", f"{len(result.kept)} constructions", "", "", "", str(len(result.items))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {2, 3, 4, 5}
    return "\n".join("  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in
                               enumerate(zip(r, widths))).rstrip() for r in rows)


__all__ = ["ExtractConfig", "ExtractResult", "extract_items", "check_config", "parse_features", "parse_values",
           "parse_relations", "write_constructions", "summary_table", "file_stem"]
