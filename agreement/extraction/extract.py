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
import gc
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from agreement.errors import AgreeError
from agreement.extraction.mining import Construction, ConstructionMiner, Key, MiningConfig, explain, parse_construction
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
#: an attractor analysis must be at least this share of the word's most frequent one
ATTRACTOR_MIN_SHARE = 0.1


@dataclass(frozen=True)
class ExtractConfig:
    """Options of ``agree extract`` (defaults: the paper's)."""
    features: tuple[str, ...] = ("Number",)  #: agreement features
    min_count: int = 10          #: cues needed per value (singular and plural)
    min_distance: int = 4        #: smallest cue-target index difference (3 words between)
    max_distance: int = 14       #: largest cue-target index difference
    max_entropy: float = 0.001   #: H(cue | target) threshold, nats
    alt: str = "closest"         #: alternative-form lookup: "closest" or "exact" (the paper's)
    infer_verb_number: bool = False  #: add Number to finite present verbs that lack it
    vocab: frozenset[str] | None = None  #: keep items whose words are all in it
    values: tuple[str, ...] = ("Sing", "Plur")  #: the two Number values contrasted (Dual excluded)
    lang: str | None = None      #: language code, recorded for later steps
    explain: tuple[str, ...] = ()  #: constructions to explain, e.g. "R VERB NOUN CCONJ VERB"
    cache_dir: str | None = None  #: parsed-treebank cache (:mod:`treebanks.cache`); None: no cache
    workers: int | None = None   #: processes parsing (None: as many as CPUs; big files in pieces)

    def mining(self) -> MiningConfig:
        return MiningConfig(self.features, self.min_distance, self.max_distance,
                            self.min_count, self.max_entropy, tuple(self.values))

    def parameters(self) -> dict:
        """The parameters as the manifest records them."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["features"] = "|".join(self.features)
        d["vocab"] = None if self.vocab is None else len(self.vocab)
        d["explain"] = list(self.explain)
        d["values"] = ",".join(self.values)
        for name in ("cache_dir", "workers"):  # how, not what: results do not depend on them
            del d[name]
        return d


@dataclass(frozen=True)
class ExtractResult:
    """Everything ``agree extract`` writes."""
    items: tuple[Item, ...]                  #: original items, sorted
    constructions: tuple[Construction, ...]  #: every construction seen, judged
    kept: tuple[Construction, ...]           #: the kept ones, most items first
    item_counts: dict[Key, int]              #: items per kept construction
    paradigms: ParadigmTable
    filters: dict[str, int]                  #: what each filter dropped (arcs, constructions, items)
    sentences: int
    tokens: int
    files: tuple[Path, ...]
    explanations: tuple[str, ...]            #: one text per ``config.explain`` entry
    reading: dict = dataclasses.field(default_factory=dict)  #: files read from the cache / parsed


def parse_features(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"Number|Gender"`` -> ``("Gender", "Number")`` (canonical order, as in FEATS)."""
    names = spec.split("|") if isinstance(spec, str) else list(spec)
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise AgreeError("no agreement feature given (e.g. {features} Number)", fields=True)
    return tuple(sorted(set(names), key=lambda s: (s.lower(), s)))


def extract_items(paths: Iterable[str | os.PathLike], config: ExtractConfig = ExtractConfig()) -> ExtractResult:
    """Mine constructions from UD treebank files and turn them into original items."""
    config = dataclasses.replace(config, features=parse_features(config.features))
    _check_config(config)
    keys = [parse_construction(s) for s in config.explain]  # fail before the long part
    files = expand_paths(paths)
    with _gc_paused():
        return _extract(files, config, keys)


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


@contextmanager
def _gc_paused():
    """An extract run allocates millions of small objects, none in reference
    cycles (reference counting frees them); the cyclic collector's repeated scans
    of the growing heap would cost a tenth of the run or more."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # the millions of objects allocated meanwhile would all be "young": the
            # first collection after enable() would scan them all (half a second on
            # EWT); freeze + unfreeze moves them to the oldest generation unscanned
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _check_config(c: ExtractConfig) -> None:
    if c.alt not in MODES:
        raise AgreeError(f"unknown {{alt}} {literal(repr(c.alt))} (expected one of: {', '.join(MODES)})",
                         fields=True)
    if not 1 <= c.min_distance <= c.max_distance:
        raise AgreeError(f"need 1 <= min distance <= max distance (got {c.min_distance}..{c.max_distance})")
    if c.min_count < 1:
        raise AgreeError(f"{{min_count}} must be at least 1 (got {c.min_count})", fields=True)


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


def parse_values(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"Sing,Plur"`` -> ``("Sing", "Plur")``; exactly two distinct values."""
    vals = spec.split(",") if isinstance(spec, str) else list(spec)
    vals = [v.strip() for v in vals if v.strip()]
    if len(vals) != 2 or vals[0] == vals[1]:
        raise AgreeError(f"{{values}} needs two different values, e.g. Sing,Plur "
                         f"(got {literal(','.join(vals) or 'none')})", fields=True)
    return tuple(vals)


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


def _word(form: str) -> str:
    # items.tsv separates words by spaces; a few treebanks have spaces inside a form
    return form.replace(" ", "\u00a0")


def _match_case(form: str, like: str) -> str:
    # the table may know the other form only sentence-initially ("Dormono"); a
    # lowercase target gets a lowercase alternative (all-caps forms stay)
    if like[:1].islower() and form[:1].isupper() and not form.isupper():
        return form[0].lower() + form[1:]
    return form


def file_stem(path: str | os.PathLike) -> str:
    """``.../en_ewt-ud-train.conllu.gz`` -> ``en_ewt-ud-train``."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".conllu"):
        name = name.removesuffix(suffix)
    return name


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
        wrong = _match_case(wrong, target.form)
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
            tokens=tuple(_word(t.form) for t in tokens), pos=tuple(t.upos for t in tokens),
            feats=tuple(t.feats for t in tokens), correct=_word(target.form), wrong=_word(wrong),
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


__all__ = ["ExtractConfig", "ExtractResult", "extract_items", "parse_features", "parse_values",
           "write_constructions", "summary_table", "file_stem"]
