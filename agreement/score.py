"""Scoring agreement items with language models: the :class:`ScoredItem` record,
:func:`score_items`, model specifications (``--model [GROUP=]DIR``) and the
scored ``items.tsv``.

An item is right for a model when natural-log P(correct | prefix) is strictly
greater than natural-log P(wrong | prefix); a tie counts as wrong (the two forms
are sometimes identical strings in the released data, and a model cannot prefer
a form over itself).

Several models of one kind (e.g. five seeds) share a *group* label; the report
gives each group's mean and standard deviation, as the paper does for its five
best models.
"""
from __future__ import annotations

import glob
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from agreement.errors import AgreeError
from agreement.records import Item
from lm.base import TargetQuery

#: Columns of the scored ``items.tsv`` (CONTRACTS.md), then two of ours.
SCORED_COLUMNS = ("item_id", "variant", "perturbation", "construction", "attractors", "model",
                  "logp_correct", "logp_wrong", "correct", "oov", "group", "testset")
#: config.json keys that, beside ``kind``, tell model families apart in a default
#: group label (a seed is deliberately not among them: seeds are what a group averages).
_GROUP_KEYS = ("arch", "size", "layers", "hidden", "order")


@dataclass(frozen=True)
class ScoredItem:
    """One item scored by one model.

    item          the test item (its prefix was scored)
    model         unique model name (directory name, or the .tab column)
    group         aggregation label; models of one group are averaged
    kind          backend kind: ``lstm``, ``transformer``, ``kn5``, ``unigram``
    logp_correct  natural-log P(correct form | prefix)
    logp_wrong    natural-log P(wrong form | prefix)
    oov           a word of the prefix or either form is out of the model's vocabulary
    testset       the TESTSET argument the item came from
    """
    item: Item
    model: str
    group: str
    kind: str
    logp_correct: float
    logp_wrong: float
    oov: bool = False
    testset: str = ""

    @property
    def correct(self) -> bool:
        """Strictly more probable correct form (a tie is wrong)."""
        return self.logp_correct > self.logp_wrong

    @property
    def p_correct_share(self) -> float:
        """P(correct) / (P(correct) + P(wrong)), a logistic of the log-odds."""
        d = self.logp_wrong - self.logp_correct
        if math.isnan(d):
            return 0.5
        if d > 700:
            return 0.0
        return 1.0 / (1.0 + math.exp(d))

    @property
    def key(self) -> tuple[str, str, int, str]:
        """Identifies the item across models (for paired comparisons)."""
        return (self.testset, self.item.item_id, self.item.variant, self.item.perturbation)

    item_id = property(lambda self: self.item.item_id)
    variant = property(lambda self: self.item.variant)
    perturbation = property(lambda self: self.item.perturbation)
    construction = property(lambda self: self.item.construction)
    attractors = property(lambda self: self.item.attractors)


def condition(item: Item) -> str:
    """Which table column an item belongs to: ``original``, ``nonce`` or a perturbation."""
    if item.perturbation in ("", "original"):
        return "original" if item.variant == 0 else "nonce"
    return item.perturbation


# --------------------------------------------------------------------------- models

@dataclass(frozen=True)
class ModelSpec:
    """A model directory named on the command line.

    directory  the model directory (``config.json`` inside)
    name       unique display name (the directory name, made unique with its parent)
    group      aggregation label (explicit ``GROUP=DIR``, else from the config)
    kind       backend kind from ``config.json``
    """
    directory: Path
    name: str
    group: str
    kind: str


def default_group(config: Mapping) -> str:
    """``kind`` plus the architecture keys present in the config, e.g. ``lstm-650``."""
    parts = [str(config.get("kind", "model"))]
    for key in _GROUP_KEYS:
        value = config.get(key)
        if value not in (None, "") and str(value) not in parts:
            parts.append(str(value))
    return "-".join(parts)


def parse_model_specs(values: Sequence[str]) -> list[ModelSpec]:
    """Parse ``--model`` values: ``DIR`` or ``GROUP=DIR``; DIR may be a glob
    (``lstm=runs/seed*``) so that one option names all seeds of a group."""
    from lm.base import read_config

    specs: list[tuple[Path, str | None]] = []
    for value in values:
        group, _, path = value.partition("=") if "=" in value and not Path(value).exists() else ("", "", value)
        paths = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
        if not paths:
            raise AgreeError(f"--model {value}: no directory matches {path!r}")
        specs += [(Path(p), group or None) for p in paths]
    seen: set[str] = set()
    for d, _ in specs:
        if os.path.abspath(d) in seen:
            raise AgreeError(f"--model: {d} is given twice")
        seen.add(os.path.abspath(d))
    names = _unique_names([d for d, _ in specs])
    out = []
    for (directory, group), name in zip(specs, names):
        config = read_config(directory)
        out.append(ModelSpec(directory, name, group or default_group(config), str(config["kind"])))
    return out


def _unique_names(dirs: Sequence[Path]) -> list[str]:
    """Directory names; a name shared by several directories gets parent folders
    added (``a/model``, ``b/model``) until it is unique."""
    parts = [Path(os.path.abspath(d)).parts for d in dirs]
    depth = [1] * len(dirs)
    while True:
        names = [os.path.join(*p[-k:]) for p, k in zip(parts, depth)]
        clash = [i for i, n in enumerate(names) if names.count(n) > 1 and depth[i] < len(parts[i])]
        if not clash:
            return names
        for i in clash:
            depth[i] += 1


def load_scorers(specs: Sequence[ModelSpec], **options):
    """Load each model directory as an ``lm.base.Scorer`` named after its spec."""
    from lm.base import load_model

    scorers = []
    for spec in specs:
        scorer = load_model(spec.directory, **options)
        scorer.name = spec.name
        scorers.append(scorer)
    return scorers


# --------------------------------------------------------------------------- scoring

def score_items(items: Sequence[Item], scorers: Sequence, *, require_in_vocab: bool = False,
                quiet: bool = False, groups: Mapping[str, str] | None = None,
                chunk_size: int = 1024, testsets: Sequence[str] | None = None) -> list[ScoredItem]:
    """Score every item with every scorer; returns model-major ``ScoredItem`` records.

    ``groups`` maps scorer name -> group label (default: the scorer's kind);
    ``testsets`` gives each item's TESTSET label (aligned with ``items``).
    With ``require_in_vocab`` only items that every scorer fully covers are scored,
    so that all models are compared on the same items. Raises :class:`AgreeError`
    when a scorer knows none of the test set's target forms (wrong language or
    wrong vocabulary), or when ``require_in_vocab`` leaves no item.
    """
    from tqdm import tqdm

    items = list(items)
    testsets = list(testsets) if testsets is not None else [""] * len(items)
    groups = dict(groups or {})
    oov = {s.name: _oov_flags(items, s) for s in scorers}
    if require_in_vocab and scorers:
        keep = [i for i in range(len(items)) if not any(oov[s.name][i] for s in scorers)]
        if not keep:
            raise AgreeError("--require-in-vocab: no item is fully in the vocabulary of every model "
                             f"({len(items)} items, models: {', '.join(s.name for s in scorers)})")
        items, testsets = [items[i] for i in keep], [testsets[i] for i in keep]
        oov = {name: [flags[i] for i in keep] for name, flags in oov.items()}
    out: list[ScoredItem] = []
    for scorer in scorers:
        group = groups.get(scorer.name) or scorer.kind or scorer.name
        bar = tqdm(total=len(items), desc=f"scoring {scorer.name}", unit="item", disable=quiet)
        for start in range(0, len(items), chunk_size):
            batch = items[start:start + chunk_size]
            logp = scorer.score_targets([target_query(it) for it in batch])
            if getattr(logp, "shape", None) != (len(batch), 2):
                raise AgreeError(f"model {scorer.name}: scorer returned shape "
                                 f"{getattr(logp, 'shape', None)}, expected {(len(batch), 2)}")
            for j, it in enumerate(batch):
                out.append(ScoredItem(it, scorer.name, group, scorer.kind, float(logp[j, 0]),
                                      float(logp[j, 1]), oov[scorer.name][start + j],
                                      testsets[start + j]))
            bar.update(len(batch))
        bar.close()
    return out


def target_query(item: Item) -> TargetQuery:
    """The item as a model sees it: the whole sentence with the correct form at the
    target position (a masked model reads all of it, a causal one the prefix), and
    the two candidate forms, correct first."""
    words = list(item.tokens) if len(item.tokens) > item.target_index else list(item.prefix) + [item.correct]
    words[item.target_index] = item.correct
    return TargetQuery(tuple(words), item.target_index, (item.correct, item.wrong))


def score_testsets(testsets: Sequence, specs: Sequence[ModelSpec] = (), *,
                   from_outputs: Sequence[str] = (), require_in_vocab: bool = False,
                   quiet: bool = False, scoring: dict | None = None,
                   **load_options) -> list[ScoredItem]:
    """Score loaded test sets (``agreement.papertab.TestSet``) with model directories
    and/or output columns of paper .tab files; the ``freq`` column of a paper .tab
    adds the paper's unigram baseline. ``load_options`` go to ``lm.base.load_model``
    (``device``, ``batch_size``, ``carry_state``). A ``scoring`` dict receives each
    model's scoring conventions (``summary.collect_scoring``) for the manifest."""
    from agreement.papertab import freq_baseline, scores_from_column

    items = [it for ts in testsets for it in ts.items]
    labels = [ts.label for ts in testsets for _ in ts.items]
    seen: set[tuple] = set()
    for label, it in zip(labels, items):  # the key that pairs models' outcomes must be unique
        key = (label, it.item_id, it.variant, it.perturbation)
        if key in seen:
            raise AgreeError(f"{label}: item {it.item_id} variant {it.variant} ({it.perturbation}) "
                             "appears twice")
        seen.add(key)
    scorers = load_scorers(specs, **load_options)
    try:
        scored = score_items(items, scorers, require_in_vocab=require_in_vocab, quiet=quiet,
                             groups={s.name: s.group for s in specs}, testsets=labels)
        if scoring is not None:  # after scoring: conventions include counted skips
            from agreement.summary import collect_scoring
            scoring.update(collect_scoring(scorers))
    finally:
        for scorer in scorers:
            scorer.close()
    extra: list[ScoredItem] = []
    for ts in testsets:
        if from_outputs and ts.table is None:
            raise AgreeError(f"--from-outputs needs a paper .tab file with model columns; "
                             f"{ts.label} is not one ({ts.kind} test set)")
        for column in from_outputs:
            extra += scores_from_column(ts.table, column, ts.label)
        if ts.table is not None:
            extra += freq_baseline(ts.table, ts.label)
    if require_in_vocab and scorers:  # outputs join the models on the items they kept
        kept = {s.key for s in scored}
        extra = [s for s in extra if s.key in kept]
    if not scored and not extra:
        raise AgreeError("nothing to score: give --model DIR or --from-outputs COLUMN")
    return extra + scored


def _oov_flags(items: Sequence[Item], scorer) -> list[bool]:
    """Per item: does the prefix or either form contain a word the scorer lacks?
    Also checks that the scorer knows at least one target form at all."""
    known: dict[str, bool] = {}

    def iv(word: str) -> bool:
        if word not in known:
            known[word] = bool(scorer.in_vocab(word))
        return known[word]

    flags = [not (all(iv(w) for w in it.prefix) and iv(it.correct) and iv(it.wrong)) for it in items]
    targets = sorted({w for it in items for w in (it.correct, it.wrong)})
    if targets and not any(iv(w) for w in targets):
        raise AgreeError(f"model {scorer.name} knows none of the {len(targets)} target forms of the "
                         f"test set (e.g. {', '.join(targets[:3])}): is it a model of another "
                         "language or vocabulary?")
    return flags


def oov_counts(scored: Iterable[ScoredItem]) -> dict[str, dict[str, int]]:
    """Per model: ``{"items": n, "oov_items": k}``."""
    counts: dict[str, dict[str, int]] = {}
    for s in scored:
        c = counts.setdefault(s.model, {"items": 0, "oov_items": 0})
        c["items"] += 1
        c["oov_items"] += int(s.oov)
    return counts


# --------------------------------------------------------------------------- files

def _fmt(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else ("-inf" if x < 0 else "inf" if x > 0 else "nan")


def write_scored(path: str | os.PathLike, scored: Iterable[ScoredItem]) -> int:
    """Write the scored ``items.tsv`` (columns :data:`SCORED_COLUMNS`); returns rows."""
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(SCORED_COLUMNS) + "\n")
        for s in scored:
            it = s.item
            row = (it.item_id, str(it.variant), it.perturbation, it.construction, str(it.attractors),
                   s.model, _fmt(s.logp_correct), _fmt(s.logp_wrong), "1" if s.correct else "0",
                   "1" if s.oov else "0", s.group, s.testset)
            fh.write("\t".join(row) + "\n")
            n += 1
    return n
