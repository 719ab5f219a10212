"""The options and the result of ``agree extract`` (:func:`agreement.extraction.extract.extract_items`),
for both mining methods: ``constructions`` (the paper's, the default) and
``relations`` (:mod:`agreement.extraction.relations`)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Sequence

from agreement.errors import AgreeError
from agreement.extraction.construction_miner import Construction, Key, MiningConfig
from agreement.extraction.relation_arcs import FEATURES as RELATION_FEATURES, RELATIONS
from formats.items import Item
from treebanks.columns import TreebankColumns
from treebanks.errors import literal
from treebanks.paradigms import ParadigmTable

MODES = ("constructions", "relations")
#: per mode: features, min_distance, max_distance when not given (None: no bound)
MODE_DEFAULTS = {"constructions": (("Number",), 4, 14), "relations": (tuple(sorted(RELATION_FEATURES)), 1, None)}
#: what the manifest records only in constructions mode, and only in relations mode
_CONSTRUCTION_ONLY = ("min_count", "max_entropy", "infer_verb_number", "values", "explain")
_RELATION_ONLY = ("mode", "relations")


@dataclass(frozen=True)
class ExtractConfig:
    """Options of ``agree extract`` (defaults: the paper's). ``features``,
    ``min_distance`` and ``max_distance`` left as None take the mode's defaults
    (:data:`MODE_DEFAULTS`): constructions ``Number``, 4..14; relations ``Gender``,
    ``Number``, ``Person``, every distance."""
    features: tuple[str, ...] | None = None  #: agreement features (relations: each item contrasts one)
    min_count: int = 10          #: cues needed per value (singular and plural)
    min_distance: int | None = None  #: smallest cue-target index difference (constructions: 4, 3 words between)
    max_distance: int | None = None  #: largest cue-target index difference (constructions: 14; None: none)
    max_entropy: float = 0.001   #: H(cue | target) threshold, nats
    alt: str = "closest"         #: alternative-form lookup: "closest" or "exact" (the paper's)
    infer_verb_number: bool = False  #: add Number to finite present verbs that lack it
    vocab: frozenset[str] | None = None  #: keep items whose words are all in it
    values: tuple[str, ...] = ("Sing", "Plur")  #: the two Number values contrasted (Dual excluded)
    lang: str | None = None      #: language code, recorded for later steps
    explain: tuple[str, ...] = ()  #: constructions to explain, e.g. "R VERB NOUN CCONJ VERB"
    cache_dir: str | None = None  #: parsed-treebank cache (:mod:`treebanks.cache`); None: no cache
    workers: int | None = None   #: processes parsing (None: as many as CPUs; big files in pieces)
    mode: str = "constructions"  #: "constructions" (the paper's) or "relations"
    relations: tuple[str, ...] = RELATIONS  #: relations mined (relations mode)

    def __post_init__(self):
        if self.mode not in MODES:
            raise AgreeError(f"unknown {{mode}} {literal(repr(self.mode))} (expected one of: {', '.join(MODES)})",
                             fields=True)
        features, lo, hi = MODE_DEFAULTS[self.mode]
        if self.features is None:
            object.__setattr__(self, "features", features)
        if self.min_distance is None:
            object.__setattr__(self, "min_distance", lo)
        if self.max_distance is None and self.mode == "constructions":
            object.__setattr__(self, "max_distance", hi)

    def mining(self) -> MiningConfig:
        return MiningConfig(self.features, self.min_distance, self.max_distance,
                            self.min_count, self.max_entropy, tuple(self.values))

    def parameters(self) -> dict:
        """The parameters as the manifest records them (a constructions run's as
        before relation mining existed)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["features"] = "|".join(self.features)
        d["vocab"] = None if self.vocab is None else len(self.vocab)
        d["explain"] = list(self.explain)
        d["values"] = ",".join(self.values)
        d["relations"] = list(self.relations)
        for name in ("cache_dir", "workers"):  # how, not what: results do not depend on them
            del d[name]
        for name in (_RELATION_ONLY if self.mode == "constructions" else _CONSTRUCTION_ONLY):
            del d[name]
        return d


@dataclass(frozen=True)
class ConstructionReport:
    """What constructions mode finds besides items (:mod:`agreement.extraction.constructions`)."""
    constructions: tuple[Construction, ...]  #: every construction seen, judged
    kept: tuple[Construction, ...]           #: the kept ones, most items first
    item_counts: dict[Key, int]              #: items per kept construction
    explanations: tuple[str, ...] = ()       #: one text per ``config.explain`` entry
    mode: ClassVar[str] = "constructions"


@dataclass(frozen=True)
class RelationReport:
    """What relations mode finds besides items (:mod:`agreement.extraction.relations`)."""
    #: (relation, feature) -> counts (``arcs``, drops, ``items``...); feature "" holds
    #: the relation's arc-level counts
    counts: dict = dataclasses.field(default_factory=dict)
    #: ``Number=Dual`` -> arcs left out of the two-way contrast
    excluded_values: dict = dataclasses.field(default_factory=dict)
    mode: ClassVar[str] = "relations"


@dataclass(frozen=True)
class ExtractResult:
    """Everything ``agree extract`` writes: the items and what every mode counts,
    and in ``report`` what only its arc source finds."""
    items: tuple[Item, ...]                  #: original items, sorted
    paradigms: ParadigmTable                 #: the table paradigms.tsv holds
    filters: dict[str, int]                  #: what each filter dropped (arcs, constructions, items)
    sentences: int
    tokens: int
    files: tuple[Path, ...]
    report: ConstructionReport | RelationReport
    reading: dict = dataclasses.field(default_factory=dict)  #: files read from the cache / parsed
    #: why there are no items, and what would find more (one line; "" when there are items)
    reason: str = ""
    #: lines for people: paradigm conflicts between treebanks, lexicon lines skipped
    notes: tuple[str, ...] = ()
    #: the treebank columns the items were mined from: a later step that reads the same
    #: sentences (nonce verb frames) takes them here instead of reading the files again
    columns: TreebankColumns | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def mode(self) -> str:
        return self.report.mode


def parse_features(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"Number|Gender"`` -> ``("Gender", "Number")`` (canonical order, as in FEATS)."""
    names = spec.split("|") if isinstance(spec, str) else list(spec)
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise AgreeError("no agreement feature given (e.g. {features} Number)", fields=True)
    return tuple(sorted(set(names), key=lambda s: (s.lower(), s)))


def parse_values(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"Sing,Plur"`` -> ``("Sing", "Plur")``; exactly two distinct values."""
    vals = spec.split(",") if isinstance(spec, str) else list(spec)
    vals = [v.strip() for v in vals if v.strip()]
    if len(vals) != 2 or vals[0] == vals[1]:
        raise AgreeError(f"{{values}} needs two different values, e.g. Sing,Plur "
                         f"(got {literal(','.join(vals) or 'none')})", fields=True)
    return tuple(vals)


def parse_relations(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"subj-verb,det-noun"`` -> the relations in :data:`RELATIONS` order; unknown
    names are an error listing the known ones."""
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in RELATIONS]
    if unknown or not names:
        raise AgreeError(f"{{relations}}: unknown relation {literal(repr(unknown[0]) if unknown else 'none')} "
                         f"(known: {', '.join(RELATIONS)})", fields=True)
    return tuple(r for r in RELATIONS if r in names)


def check_relation_features(features: Sequence[str]) -> None:
    """Relations mode contrasts Number, Person and Gender only."""
    unknown = [f for f in features if f not in RELATION_FEATURES]
    if unknown:
        raise AgreeError(f"{{features}}: relation mining contrasts {', '.join(sorted(RELATION_FEATURES))}, "
                         f"not {literal(unknown[0])}", fields=True)
