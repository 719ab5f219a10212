"""Mining agreement items by relation (method.md section 2b): ``agree extract --mode relations``.

The paper's construction filter (:mod:`agreement.extraction.construction_miner`) learns which
arcs agree from counts and needs treebanks of 10k+ sentences; here the agreement
relation is read from the annotation, as MultiBLiMP does (Jumelet et al. 2025),
so that the test and dev splits of any UD language give items. The arcs, the
exclusions and the value checks are array work over the whole treebank
(:mod:`agreement.extraction.relation_arcs`, whose docstring states each rule);
this module makes the items and counts what it drops.

Each item is one arc and one contrasted feature (an arc whose ends agree in
Number and Gender gives two items, ids ``<stem>:<sent_id>:<cue>-<target>:<feature>``):

* ``correct`` is the target's token; ``wrong`` the same lemma and POS with
  another value of the feature, looked up in the file's own paradigm table, then
  the pooled tables of every treebank file of the run (``paradigms``: extra
  treebanks of the language, read for their paradigms only), then a UniMorph
  lexicon (:mod:`treebanks.pooled`); ``wrong_source`` says which. Number: the
  other of Sing/Plur; Gender: another of Masc/Fem/Neut/Com (closest remaining
  features, then frequency); Person: the nearest other person with an attested
  form (1: 2 then 3; 3: 2 then 1; 2: 1 or 3), passing over a person spelled like the
  target (English 1sg and 2sg *think*: *I think* -> *thinks*). The remaining features may differ
  only as the ``closest`` rule allows (:mod:`treebanks.paradigms`), else the arc
  is dropped as ``non_contrast_difference``; ``no_alternative`` when no source
  has a form, ``same_spelling`` when the form is spelled like the target,
  ``vocab`` when a word from cue to target is outside ``config.vocab``.
* ``distance`` |target - cue|, ``attractors`` (words between with the cue's POS
  and, in one of their frequent analyses, another value of the feature: section
  2.7's rule), ``target_side`` and ``relation`` are recorded for every item, so
  the paper's long-distance slice (4..14) is a selection, not the output.
* ``scoring``: ``target`` when the target follows its cue (the prefix holds the
  cue and decides), ``sentence`` when it precedes it (a determiner or adjective
  before its noun): the prefix cannot decide, the item is scored by whole sentence.

Deviations from method.md section 2b, and why: Com counts as a gender value (the
Scandinavian and Dutch common gender, which contrasts with Neut); a subject
relation also takes targets with a subject layer in any verb form (Abkhaz marks
its subject on non-finite verbs too); a finite verb without VerbForm counts as
finite (Arabic, Hindi, Irish... leave VerbForm out); ergative subjects are left
out unless the target has a subject layer (Hindi-Urdu perfectives agree with the
object).

No silent zero: with no items, :attr:`ExtractResult.reason` says why in one line,
and what would find more.
"""
from __future__ import annotations

import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from agreement.errors import AgreeError
from agreement.extraction.config import (ExtractConfig, ExtractResult, RelationReport, check_relation_features,
                                         parse_relations)
from agreement.extraction.item_builder import Attractors, CandidateArc, ItemBuilder, default_filters
from agreement.extraction.itemtools import file_stem
from agreement.extraction.relation_filters import (FILTER_NAMES, GENERATED, morphology_wrong_forms,
                                                   relation_filters, with_filters)
from agreement.extraction.relation_arcs import EXCLUSIONS, RELATIONS, VALUES, Candidates, find_candidates
from formats.items import Item
from treebanks.cache import load_columns
from treebanks.columns import TreebankColumns
from treebanks.errors import DomainError, literal
from treebanks.features import feature_names
from treebanks.paradigms import ParadigmTable
from treebanks.pooled import PooledParadigms
from treebanks.reader import expand_paths
from treebanks.reinflect import Reinflector
from treebanks.unimorph import SOURCE as LEXICON_SOURCE, read_unimorph

RELATIONS_FILE = "relations.tsv"
#: per relation, what its arcs lose before the features are looked at
ARC_COUNTS = ("arcs",) + EXCLUSIONS + ("distance",)
#: per (relation, feature)
FEATURE_COUNTS = ("missing_feature", "excluded_value", "disagreeing", "agreeing", "low_agreement_rate",
                  "no_alternative", "non_contrast_difference", "same_spelling") + FILTER_NAMES + (
                  "vocab", "items", "scoring_target", "scoring_sentence", "wrong_own", "wrong_pooled",
                  "wrong_lexicon", "wrong_generated", "correct_more_frequent")
RELATION_COLUMNS = ("relation", "feature") + ARC_COUNTS + FEATURE_COUNTS
#: the other values a wrong form may have, tried in turn (Person: the nearest first)
_FEATURE_ORDER = ("Number", "Person", "Gender")
_PERSON = {"1": (("2",), ("3",)), "2": (("1", "3"), ("1",), ("3",)), "3": (("2",), ("1",))}
#: the values an attractor's reading may have: the feature's two-way values
_CONTRAST = {f: frozenset((v,) for v in vals) for f, vals in VALUES.items()}


def wrong_values(feature: str, value: str) -> tuple[tuple[str, ...], ...]:
    """The value sets to look for a wrong form in, in order."""
    if feature == "Person":
        return _PERSON[value]
    return (tuple(v for v in VALUES[feature] if v != value),)


class RelationSource:
    """Relations mode: the agreement relations the annotation marks (module docstring)."""
    mode = "relations"

    def check_config(self, config: ExtractConfig) -> None:
        parse_relations(config.relations)
        check_relation_features(config.features)
        if config.explain:
            raise AgreeError("{explain} names constructions; relation mining has none", fields=True)

    def check_inputs(self, config: ExtractConfig, paradigms: Sequence, lexicon) -> None:
        """Every input is read by :meth:`mine`, the lexicon first."""

    def mine(self, files: Sequence[Path], config: ExtractConfig, *, paradigms: Sequence[str | os.PathLike] = (),
             lexicon: str | os.PathLike | None = None) -> ExtractResult:
        """Relation items of one language's treebank ``files`` (module docstring); wrong
        forms pooled over ``files``, the treebanks ``paradigms`` and the UniMorph file
        ``lexicon``. Never raises for what the treebank lacks: the result's ``reason``
        says why it has no items."""
        extra = expand_paths(paradigms) if paradigms else []
        lex = read_unimorph(lexicon) if lexicon is not None else None  # a bad lexicon fails before the long part
        tb, reading = load_columns(files, cache_dir=config.cache_dir, workers=config.workers)
        pooled = _pooled(tb, extra, lex, config)
        counts: dict = defaultdict(Counter)
        excluded: Counter = Counter()
        cands = find_candidates(tb, config.relations, config.features, config.min_distance, config.max_distance,
                                counts, excluded)
        model = Reinflector.train(pooled.table.counts, lex)
        generated: dict = {}
        builder = ItemBuilder(morphology_wrong_forms(pooled, model, config.alt, wrong_values, generated),
                              with_filters(default_filters(config.vocab), relation_filters(model, config.lang)),
                              Attractors(pooled.table), counts)
        items = _items(builder, relation_arcs(tb, cands), _form_counts(pooled.table.counts))
        table = {(r, f): {k: counts[(r, f)][k] for k in FEATURE_COUNTS} | {k: counts[(r, "")][k] for k in ARC_COUNTS}
                 for r in config.relations for f in sorted(config.features) if (r, f) in counts}
        filters = _filters(counts, config.relations)
        notes = tuple(n for n in (pooled.conflict_note(), lex.report() if lex else "") if n)
        return ExtractResult(items=tuple(items), paradigms=_saved_table(pooled, generated), filters=dict(filters),
                             sentences=len(tb), tokens=len(tb.upos), files=tuple(files),
                             report=RelationReport(table, dict(sorted(excluded.items()))), reading=reading,
                             reason="" if items else zero_reason(tb, config, filters, lexicon is not None),
                             notes=notes, columns=tb)


def _pooled(tb: TreebankColumns, extra: list[Path], lex, config: ExtractConfig) -> PooledParadigms:
    """The paradigm tables wrong forms come from: each file of the run, the extra treebanks', the lexicon."""
    sources = [(file_stem(f.source), ParadigmTable(a)) for f, a in zip(tb.files, tb.file_analyses())]
    if extra:
        etb, _ = load_columns(extra, cache_dir=config.cache_dir, workers=config.workers)
        sources += [(file_stem(f.source), ParadigmTable(a)) for f, a in zip(etb.files, etb.file_analyses())]
    return PooledParadigms(sources, lex)


def _filters(counts: dict, relations: Sequence[str]) -> Counter:
    filters = Counter()
    for r in relations:
        filters.update({k: counts[(r, "")][k] for k in ARC_COUNTS})
    for key, c in counts.items():
        if key[1]:
            filters.update({k: c[k] for k in FEATURE_COUNTS})
    return filters


def relation_arcs(tb: TreebankColumns, cands: Candidates) -> Iterator[CandidateArc]:
    """The candidates as the item builder takes them, by relation, feature, target, cue."""
    sent = np.searchsorted(tb.starts, cands.target, side="right") - 1
    feature = np.array([_FEATURE_ORDER.index(f) for f in cands.feature], dtype=np.int64)
    for k in np.lexsort((cands.cue, cands.target, feature, cands.relation)).tolist():
        s = int(sent[k])
        base = int(tb.starts[s])
        ci, ti = int(cands.cue[k]) - base, int(cands.target[k]) - base
        relation, f = RELATIONS[int(cands.relation[k])], cands.feature[k]
        yield CandidateArc(tb.sentence(s), ci, ti, (f,), (cands.value[k],), f"{relation} {f}",
                           group=(relation, f), id_suffix=f":{f}", relation=relation, carried=cands.carried[k],
                           scoring="sentence" if ti < ci else "target", contrast=_CONTRAST[f])


def _items(builder: ItemBuilder, arcs: Iterable[CandidateArc], freq: Counter) -> list[Item]:
    """The builder's items, each also counted by how it is scored, where its wrong form
    came from and whether its correct form is the more frequent of the two in the treebanks."""
    out = []
    for arc in arcs:
        item = builder.item(arc)
        if item is not None:
            c = builder.counts[arc.group]
            c[f"scoring_{arc.scoring}"] += 1
            source = item.wrong_source
            c["wrong_own" if source == file_stem(arc.sentence.source) else "wrong_lexicon"
              if source == LEXICON_SOURCE else "wrong_generated" if source == GENERATED else "wrong_pooled"] += 1
            c["correct_more_frequent"] += freq[item.correct.lower()] > freq[item.wrong.lower()]
            out.append(item)
    return out


def _form_counts(counts: dict) -> Counter:
    """Tokens per lower-cased form over the pooled treebanks."""
    freq: Counter = Counter()
    for a, n in counts.items():
        freq[a.form.lower()] += n
    return freq


def _saved_table(pooled: PooledParadigms, generated: dict) -> ParadigmTable:
    """``paradigms.tsv``: the pooled table, with the generated wrong forms' cells (count 0)
    so that later steps (nonce target pairs) find them too."""
    table = pooled.saved_table()
    new = {a: 0 for a in sorted(generated) if a not in table.counts}
    if not new:
        return table
    out = ParadigmTable(dict(table.counts))
    out.add_counts(new)
    return out


def zero_reason(tb: TreebankColumns, config: ExtractConfig, filters: Counter, lexicon: bool) -> str:
    """Why a relations run found no item, and what would find more: one line, a
    template whose ``{fields}`` are ExtractConfig fields and extract_items arguments."""
    features = config.features
    seen = set()
    for feats in tb.feats_names:
        seen |= {n.split("[")[0] for n in feature_names(feats)}
    carried = [f for f in features if f in seen]
    if not carried:
        have = ", ".join(sorted(seen, key=str.lower)) or "none"
        return (f"no token carries {' or '.join(features)} (features in this treebank: {literal(have)}): "
                f"nothing to contrast")
    if not filters["arcs"]:
        return (f"no {', '.join(config.relations)} arc (nsubj to a verb or predicate, det or amod on a NOUN) "
                f"in {len(tb)} sentences")
    dropped = {k: filters[k] for k in EXCLUSIONS + ("distance",) if filters[k]}
    if filters["agreeing"] and filters["low_agreement_rate"] == filters["agreeing"]:
        return (f"{filters['agreeing']} agreeing arcs, each in a relation x feature under 90% agreement in the "
                f"treebank ({filters['disagreeing']} disagreeing): the cue does not control agreement there")
    if not filters["agreeing"]:
        parts = [f"{n} {k.replace('_', ' ')}" for k, n in dropped.items()]
        parts += [f"{filters[k]} {k.replace('_', ' ')}" for k in ("missing_feature", "excluded_value",
                                                                    "disagreeing") if filters[k]]
        hint = " (lower {min_distance})" if filters["distance"] and config.min_distance > 1 else ""
        return (f"{filters['arcs']} arcs, none with {' or '.join(carried)} on both ends with the same two-way "
                f"value: {', '.join(parts)}{hint}")
    parts = [f"{filters[k]} {k.replace('_', ' ')}" for k in ("low_agreement_rate", "no_alternative",
                                                              "non_contrast_difference", "same_spelling",
                                                              *FILTER_NAMES, "vocab") if filters[k]]
    more = "more treebanks of the language ({paradigms})" + ("" if lexicon else " or a UniMorph lexicon ({lexicon})")
    return (f"{filters['agreeing']} agreeing arcs, none with a usable wrong form ({', '.join(parts)}): "
            f"{more} would supply other-value forms")


def reason_text(template: str, spell=lambda name: name) -> str:
    """A reason (:func:`zero_reason`, a template) as text, each field written as
    ``spell(name)`` (the CLI: the option's flag)."""
    return DomainError(template, fields=True).spelled(spell) if template else ""


def write_relations(path: str | os.PathLike, result: ExtractResult) -> int:
    """Write ``relations.tsv``: per (relation, feature), the arcs and what dropped
    them (:data:`RELATION_COLUMNS`; the arc-level counts are the relation's, the
    same on each of its features' rows), the items and how they are scored and
    where their wrong forms came from. Returns the rows written."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(RELATION_COLUMNS) + "\n")
        for (r, f), c in result.report.counts.items():
            fh.write("\t".join([r, f] + [str(c.get(k, 0)) for k in RELATION_COLUMNS[2:]]) + "\n")
    return len(result.report.counts)


def relation_table(result: ExtractResult) -> str:
    """Items by relation x feature, a small text table (stdout)."""
    features = sorted({f for _, f in result.report.counts})
    rows = [("relation", *features, "items", "scored by sentence")]
    for r in RELATIONS:
        cells = [result.report.counts.get((r, f)) for f in features]
        if all(c is None for c in cells):
            continue
        n = sum(c["items"] for c in cells if c)
        rows.append((r, *["-" if c is None else str(c["items"]) for c in cells], str(n),
                     str(sum(c["scoring_sentence"] for c in cells if c))))
    total = [sum(c["items"] for (_, g), c in result.report.counts.items() if g == f) for f in features]
    rows.append(("all", *map(str, total), str(len(result.items)),
                 str(sum(it.scoring == "sentence" for it in result.items))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
                     .rstrip() for r in rows)
