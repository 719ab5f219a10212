"""The paper's arc source (``agree extract``, the default mode): treebank ->
constructions -> candidate arcs for the item builder.

:class:`ConstructionSource` reads the treebank once, as arrays (parsed in parallel
or from the parse cache: :mod:`treebanks.cache`), which feed the paradigm table
(counts per analysis) and the construction miner (:mod:`agreement.extraction.construction_miner`,
all arcs at once). Then each agreeing arc of a kept construction is a
:class:`~agreement.extraction.item_builder.CandidateArc` for the shared item step
(:mod:`agreement.extraction.item_builder`; method.md section 2, steps 5-7), whose
wrong form is :meth:`ParadigmTable.alternative` (a capitalised alternative of a
lowercase target is lowercased: the table may have seen it only at the start of
a sentence) and whose drops are counted in ``ExtractResult.filters``:

* ``non_number_difference`` (the item builder's ``non_contrast_difference``,
  under the name this mode's manifests have always used): the lemma's only
  other-number forms differ in more than number (Tense, Mood, VerbForm...;
  features that co-vary with number in the treebank, such as Gender on Russian
  past tenses, excepted: :meth:`ParadigmTable.rejected_alternatives`);
  ``--explain`` lists examples with the features that differed;
* ``no_alternative``: the paradigm table has no form of the target's lemma and
  POS with the other agreement value;
* ``same_spelling``: the alternative is spelled like the target (*said*/*said*);
* ``vocab``: with a vocabulary, a word from cue to target or the alternative
  form is not in it (the paper's filter).

``filters`` (also in ``manifest.json``), in pipeline order: ``arcs`` (non-root
arcs read), dropped by ``distance`` / ``punct`` / ``non_projective`` /
``missing_feature`` / ``excluded_value`` (see :mod:`agreement.extraction.construction_miner`), ``candidates`` left; the
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
from typing import Iterable, Iterator, Sequence

import numpy as np

from agreement.errors import AgreeError
from agreement.extraction.config import ConstructionReport, ExtractConfig, ExtractResult
from agreement.extraction.item_builder import (Attractors, CandidateArc, ItemBuilder, Rejection, WrongChoice,
                                               WrongForms, default_filters)
from agreement.extraction.itemtools import match_case
from agreement.extraction.construction_miner import (Arc, Construction, ConstructionMiner, Key, explain,
                                                     parse_construction)
from treebanks.cache import load_columns
from treebanks.columns import TreebankColumns
from treebanks.errors import TreebankError, literal
from treebanks.features import feature_names, feature_values, infer_verb_number
from treebanks.paradigms import ParadigmTable

CONSTRUCTIONS_FILE = "constructions.tsv"
CONSTRUCTION_COLUMNS = ("direction", "construction", "pairs", "sing", "plur", "cue_counts",
                        "entropy", "arcs", "items")
#: the item filters' counters, in the order ``filters`` lists them
ITEM_FILTERS = ("non_number_difference", "no_alternative", "same_spelling", "vocab")
#: the item builder's counter behind each (one counter, the paper's mode's name kept)
_COUNTER = {"non_number_difference": "non_contrast_difference"}


class ConstructionSource:
    """Constructions mode: arcs of the constructions the counts keep (module docstring)."""
    mode = "constructions"

    def check_config(self, config: ExtractConfig) -> None:
        """Nothing beyond the checks every mode has."""

    def check_inputs(self, config: ExtractConfig, paradigms: Sequence, lexicon) -> None:
        """Options that contradict this mode, before the long part."""
        if paradigms or lexicon is not None:
            raise AgreeError("pooled paradigms ({paradigms}) and a lexicon ({lexicon}) are for relation "
                             "mining ({mode} relations)", fields=True)
        for spec in config.explain:
            parse_construction(spec)

    def mine(self, files: list[Path], config: ExtractConfig, *, paradigms: Sequence = (),
             lexicon=None) -> ExtractResult:
        keys = [parse_construction(s) for s in config.explain]
        miner = ConstructionMiner(config.mining())
        tb, reading = load_columns(files, cache_dir=config.cache_dir, workers=config.workers)
        if config.infer_verb_number:
            tb = _infer_number(tb)
        table = ParadigmTable(tb.analyses())
        miner.add_columns(tb)
        _check_features(table, config.features, files)
        _check_values(table, config, files)
        constructions = miner.constructions()
        kept = [c for c in constructions if c.kept]
        builder = ItemBuilder(table_wrong_forms(table, config), default_filters(config.vocab), Attractors(table))
        per_key = {c.key: builder.items(construction_arcs(c, miner.agreeing[c.key], config.features)) for c in kept}
        kept.sort(key=lambda c: (-len(per_key[c.key]), c.direction, c.pos))
        items = tuple(it for c in kept for it in per_key[c.key])
        report = ConstructionReport(tuple(constructions), tuple(kept), {k: len(v) for k, v in per_key.items()},
                                    tuple(_explanations(miner, builder, keys, per_key, config)))
        result = ExtractResult(items=items, paradigms=table,
                               filters=_filters(miner, constructions, kept, builder, len(items)),
                               sentences=miner.sentences, tokens=miner.tokens, files=tuple(files), report=report,
                               reading=reading, columns=tb)
        if not items:
            result = dataclasses.replace(result, reason=_construction_reason(result, config))
        return result


def construction_arcs(c: Construction, arcs: Iterable[Arc], features: tuple[str, ...]) -> Iterator[CandidateArc]:
    """A kept construction's agreeing arcs as the item builder takes them."""
    name = " ".join(c.pos)
    for arc in arcs:
        yield CandidateArc(arc.sentence, arc.cue, arc.target, features, arc.value, name, group=c.key,
                           direction=c.direction)


def table_wrong_forms(table: ParadigmTable, config: ExtractConfig) -> WrongForms:
    """The wrong-form hook of constructions mode: the treebank's own paradigm table."""
    def choose(arc: CandidateArc) -> WrongChoice | Rejection:
        t = arc.sentence.tokens[arc.target]
        wrong = table.alternative(t.lemma, t.upos, t.feats, config.features, config.alt, config.values)
        if wrong is not None:
            return WrongChoice(match_case(wrong, t.form))
        rejected = table.rejected_alternatives(t.lemma, t.upos, t.feats, config.features, config.values)
        return Rejection("non_contrast_difference", rejected[0]) if rejected else Rejection("no_alternative")
    return choose


def _filters(miner: ConstructionMiner, constructions: list[Construction], kept: list[Construction],
             builder: ItemBuilder, items: int) -> dict[str, int]:
    filters = dict(miner.drops)
    filters["constructions"] = len(constructions)
    filters["constructions_rejected"] = len(constructions) - len(kept)
    filters["constructions_kept"] = len(kept)
    filters["arcs_in_rejected_constructions"] = sum(c.arcs for c in constructions if not c.kept)
    filters["arcs_in_kept_constructions"] = sum(c.arcs for c in kept)
    filters["disagreeing"] = sum(c.arcs - len(miner.agreeing[c.key]) for c in kept)
    for name in ITEM_FILTERS:
        filters[name] = sum(builder.counts[c.key][_COUNTER.get(name, name)] for c in kept)
    filters["items"] = items
    return filters


def _explanations(miner: ConstructionMiner, builder: ItemBuilder, keys: list[Key], per_key: dict,
                  config: ExtractConfig) -> Iterator[str]:
    for key in keys:
        text = explain(miner.judge(key), key, config.mining())
        if key in per_key:
            text += f"\n  items: {len(per_key[key])}"
            text += builder.explain_rejections(key)
        yield text


def _construction_reason(result: ExtractResult, config: ExtractConfig) -> str:
    """Why the construction filter kept nothing, with its counts for the construction
    nearest to passing, and what would find more (a template, as
    :func:`agreement.extraction.relations.zero_reason`)."""
    cs = result.report.constructions
    if not cs:
        return (f"no candidate arc ({config.min_distance}..{config.max_distance} apart, both ends with "
                f"{'|'.join(config.features)}) in {result.sentences} sentences; relation mining ({{mode}} "
                f"relations) takes every distance and needs no construction counts")
    if result.report.kept:
        return (f"{len(result.report.kept)} constructions kept, but none of their arcs has a usable wrong form "
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


def write_constructions(path: str | os.PathLike, result: ExtractResult, features: Sequence[str]) -> int:
    """Write ``constructions.tsv`` (the kept constructions, in item order); returns rows.

    Columns: direction; construction (POS, cue first); pairs (``cue>target:arcs``,
    all candidate arcs); sing / plur (cues with Number=Sing / Plur, pairs seen once
    excluded; empty when Number is not an agreement feature); cue_counts (the same
    for every value of every feature); entropy (H(cue | target), nats); arcs
    (candidate arcs); items (original items extracted)."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(CONSTRUCTION_COLUMNS) + "\n")
        for c in result.report.kept:
            counts = dict(c.cue_counts)
            number = "Number" in features
            row = (c.direction, " ".join(c.pos), " ".join(f"{cv}>{tv}:{n}" for cv, tv, n in c.pairs),
                   str(counts.get("Number=Sing", 0)) if number else "",
                   str(counts.get("Number=Plur", 0)) if number else "",
                   " ".join(f"{v}:{n}" for v, n in c.cue_counts), f"{c.entropy:.6f}", str(c.arcs),
                   str(result.report.item_counts[c.key]))
            fh.write("\t".join(row) + "\n")
    return len(result.report.kept)


def summary_table(result: ExtractResult) -> str:
    """The kept constructions as a small text table (for stdout)."""
    rows = [("dir", "construction", "sing", "plur", "arcs", "items")]
    for c in result.report.kept:
        counts = dict(c.cue_counts)
        rows.append((c.direction, " ".join(c.pos), str(counts.get("Number=Sing", "-")),
                     str(counts.get("Number=Plur", "-")), str(c.arcs), str(result.report.item_counts[c.key])))
    rows.append(("", f"{len(result.report.kept)} constructions", "", "", "", str(len(result.items))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {2, 3, 4, 5}
    return "\n".join("  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in
                               enumerate(zip(r, widths))).rstrip() for r in rows)
