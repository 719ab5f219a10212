"""The one results model of ``agree score``: a typed record built once from scored
items, that every report renders from (``summary.json``/``summary.md`` in
:mod:`agreement.reporting.summary`, the PNGs in :mod:`agreement.reporting.plots`, the robustness table in
:mod:`agreement.reporting.robustness`, the demo's ``report.md`` in :mod:`agreement.reporting.report`).

Every accuracy is over the *decidable* items: a tie (both forms scored alike) is
undecidable, counted apart, never wrong. Two kinds of figures:

- :attr:`Results.counts`: per model, right/decidable/undecidable counts by condition
  and breakdown, with the Wilson interval (:func:`agreement.reporting.stats.wilson`);
- :attr:`Results.cells`: per *group* (several models of one kind, e.g. five seeds),
  the mean accuracy over its models with the sample standard deviation between
  them and a 95% bootstrap interval over items of the per-item mean
  (:func:`agreement.reporting.stats.bootstrap_ci`); only when a generator is given, since the
  bootstrap is the slow part.

Humans are one more group of cells (mean share of raters choosing the correct form);
with rater counts, the panel's split-half noise ceiling per condition
(:func:`agreement.reporting.analysis.ceiling.split_half_reliability`, Pearson).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from agreement.reporting.analysis.ceiling import Reliability, split_half_reliability
from agreement.reporting.humans import HumanAgreement, HumanIndex, model_human_agreement
from agreement.scoring.score import oov_counts
from agreement.reporting.stats import N_BOOT, PairedTest, bootstrap_ci, mean_sd, paired_tests, wilson
from formats.testsets.papertab import FREQ_MODEL
from formats.scored import ScoredItem, condition, construction_label

HUMANS = "humans"
BREAKDOWNS = ("all", "construction", "attractors", "testset")
#: per-model counts also have this breakdown: items with at least one attractor
ATTRACTED = "attracted"


@dataclass(frozen=True)
class Count:
    """One model's outcomes in one cell: ``right`` of ``n`` decidable items, and ``ties``
    undecidable ones (not in ``n``)."""
    right: int = 0
    n: int = 0
    ties: int = 0

    def __add__(self, other: "Count") -> "Count":
        return Count(self.right + other.right, self.n + other.n, self.ties + other.ties)

    @property
    def pct(self) -> float | None:
        """Accuracy in % over the decidable items (None when there are none)."""
        return 100.0 * self.right / self.n if self.n else None

    def interval(self) -> tuple[float, float] | None:
        """95% Wilson interval in % (None when there are no decidable items)."""
        if not self.n:
            return None
        lo, hi = wilson(self.right, self.n)
        return 100 * lo, 100 * hi


@dataclass(frozen=True)
class Cell:
    """A group's (or the humans') accuracy in one breakdown cell, in %.

    by/value: the breakdown (``all``/None, ``construction``/name with its direction,
    ``attractors``/count, ``testset``/label); items: decidable items; sd: between the
    group's models (None for one model); undecidable: the group's ties in the cell
    (None for humans)."""
    group: str
    kind: str
    models: int
    condition: str
    by: str
    value: object
    items: int
    accuracy: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    undecidable: int | None = None

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        if d["undecidable"] is None:
            del d["undecidable"]
        return d


@dataclass(frozen=True)
class ModelRecord:
    """One model: its group and kind, items scored, items with an out-of-vocabulary word
    (None for released outputs: their vocabulary is unknown), items whose two forms
    differ in piece count, undecidable items."""
    name: str
    group: str
    kind: str
    items: int
    oov_items: int | None
    piece_mismatch_items: int
    undecidable_items: int


@dataclass(frozen=True)
class Group:
    """Models averaged together (:attr:`Results.cells` give their mean and spread);
    ``baseline``: a unigram group, listed first."""
    group: str
    kind: str
    models: tuple[str, ...]
    baseline: bool


@dataclass(frozen=True)
class HumanCells:
    """Humans as one more group: judged items in the file, scored items matched, cells."""
    judgments: int
    matched_items: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Results:
    """Everything the reports show (see the module docstring)."""
    conditions: tuple[str, ...]
    models: tuple[ModelRecord, ...]
    groups: tuple[Group, ...]
    counts: Mapping[tuple, Count]
    cells: tuple[Cell, ...] = ()
    humans: HumanCells | None = None
    paired_tests: tuple[PairedTest, ...] = ()
    human_agreement: tuple[HumanAgreement, ...] = ()
    ceiling: Mapping[str, Reliability] = field(default_factory=dict)
    n_boot: int = N_BOOT

    def count(self, model: str, cond: str, by: str = "all", value=None) -> Count | None:
        """A model's :class:`Count` in one cell (``by``: ``all``, ``attracted``,
        ``construction``, ``attractors``, ``testset``); None when it scored nothing there."""
        return self.counts.get((model, cond, by, value))

    def values(self, by: str) -> list:
        """The breakdown values present in :attr:`counts` for ``by``."""
        return list(dict.fromkeys(v for (_, _, b, v) in self.counts if b == by))


def order_conditions(names) -> list[str]:
    """``original``, ``nonce``, then the perturbations in sorted order."""
    fixed = [c for c in ("original", "nonce") if c in names]
    return fixed + sorted(n for n in names if n not in fixed)


def _cell(key: tuple, item, by: str):
    """The breakdown value of an item; ``key`` is ``ScoredItem.key`` (test set first)."""
    if by == "all":
        return None
    return {"construction": construction_label(item), "attractors": item.attractors, "testset": key[0]}[by]


def _pct(x: float | None) -> float | None:
    return None if x is None or np.isnan(x) else round(100 * x, 4)


def build_results(scored: Sequence[ScoredItem], *, rng: np.random.Generator | None = None,
                  humans: HumanIndex | None = None, n_boot: int = N_BOOT) -> Results:
    """The :class:`Results` of scored items; group cells and human cells (bootstrap
    intervals) and the noise ceiling only with a generator ``rng``."""
    models = _model_records(scored)
    groups = _groups(models)
    conditions = tuple(order_conditions({condition(s.item) for s in scored}))
    outcome, undecided = _outcomes(scored)
    breakdowns = BREAKDOWNS if len({s.testset for s in scored}) > 1 else BREAKDOWNS[:-1]
    cells, human = [], None
    if rng is not None:
        for g in groups:
            for by in breakdowns:
                cells += _group_cells(g, outcome, undecided, conditions, by, rng, n_boot)
        if humans is not None:
            human = _human_cells(scored, humans, conditions, breakdowns, rng, n_boot)
    tests = []
    for cond in conditions:
        per = {m.name: {k: r for k, (it, r) in outcome[m.name].items() if condition(it) == cond} for m in models}
        tests += paired_tests(per, condition=cond)
    agreement = _human_agreement(scored, humans, [m.name for m in models], conditions)
    ceiling = _ceiling(scored, humans, conditions, rng) if rng is not None and humans is not None else {}
    return Results(conditions, tuple(models), tuple(groups), _counts(scored), tuple(cells), human,
                   tuple(tests), tuple(agreement), ceiling, n_boot)


def _model_records(scored: Sequence[ScoredItem]) -> list[ModelRecord]:
    first = {}
    for s in scored:
        first.setdefault(s.model, s)
    mismatch, ties = defaultdict(int), defaultdict(int)
    for s in scored:
        mismatch[s.model] += int(s.pieces_differ)
        ties[s.model] += int(s.undecidable)
    out = []
    for name, c in oov_counts(scored).items():
        s = first[name]
        released = s.kind == "paper-output" or name == FREQ_MODEL  # the vocabulary is unknown
        out.append(ModelRecord(name, s.group, s.kind, c["items"], None if released else c["oov_items"],
                               mismatch[name], ties[name]))
    return out


def _groups(models: Sequence[ModelRecord]) -> list[Group]:
    """Groups in order of first appearance, baselines (unigram) first."""
    members: dict[str, list[ModelRecord]] = {}
    for m in models:
        members.setdefault(m.group, []).append(m)
    # as the summary always had: a group's kind is its first model's, baseline its last's
    groups = [Group(g, ms[0].kind, tuple(m.name for m in ms), ms[-1].kind == "unigram")
              for g, ms in members.items()]
    return [g for g in groups if g.baseline] + [g for g in groups if not g.baseline]


def _outcomes(scored: Sequence[ScoredItem]) -> tuple[dict, dict]:
    """model -> item key -> (item, right?) for the decidable items, and model -> item
    key -> item for the undecidable ones (ties)."""
    outcome: dict[str, dict] = defaultdict(dict)
    undecided: dict[str, dict] = defaultdict(dict)
    for s in scored:
        if s.undecidable:
            undecided[s.model][s.key] = s.item
        else:
            outcome[s.model][s.key] = (s.item, s.correct)
    return outcome, undecided


def _counts(scored: Sequence[ScoredItem]) -> dict[tuple, Count]:
    """Per model (model, condition, by, value) -> :class:`Count`."""
    raw: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for s in scored:
        it, cond = s.item, condition(s.item)
        cells = [("all", None), ("construction", construction_label(it)), ("attractors", it.attractors),
                 ("testset", s.testset)] + ([(ATTRACTED, None)] if it.attractors > 0 else [])
        for by, value in cells:
            c = raw[(s.model, cond, by, value)]
            if s.undecidable:
                c[2] += 1
            else:
                c[0] += int(s.correct)
                c[1] += 1
    return {k: Count(*v) for k, v in raw.items()}


def _group_cells(g: Group, outcome, undecided, conditions, by, rng, n_boot) -> list[Cell]:
    # item key -> (item, [1/0 for each model of the group that scored it])
    per_item: dict = {}
    for m in g.models:
        for k, (it, right) in outcome[m].items():
            per_item.setdefault(k, (it, []))[1].append(float(right))
    per_model = {m: outcome[m] for m in g.models}
    # (condition, cell value) -> undecidable (model, item) scores, reported beside the accuracy
    ties: dict = defaultdict(int)
    for m in g.models:
        for k, it in undecided.get(m, {}).items():
            ties[(condition(it), _cell(k, it, by))] += 1
    cells = _cells(per_item, g.group, g.kind, len(g.models), conditions, by, rng, n_boot, per_model)
    out = [Cell(**{**c.__dict__, "undecidable": ties.pop((c.condition, c.value), 0)}) for c in cells]
    for (cond, value), n in sorted(ties.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        # every item of the cell undecidable: no accuracy, still reported
        out.append(Cell(g.group, g.kind, len(g.models), cond, by, value, 0, None, None, None, None, n))
    return out


def _cells(per_item, group, kind, n_models, conditions, by, rng, n_boot, per_model=None) -> list[Cell]:
    """Cells of one breakdown: per_item maps item key -> (item, [scores])."""
    keys_of: dict = defaultdict(list)
    bare: dict = {}  # construction label -> the construction without its direction
    for k, (it, _) in per_item.items():
        value = _cell(k, it, by)
        keys_of[(condition(it), value)].append(k)
        bare[value] = it.construction if by == "construction" else value
    out = []
    for cond in conditions:
        # in the order of the bare construction names (the bootstrap draws cell by cell in
        # this order, so the intervals stay those of the labels without a direction)
        values = sorted({v for c, v in keys_of if c == cond}, key=lambda v: (v is None, bare[v], v))
        for value in values:
            keys = keys_of[(cond, value)]
            item_means = [float(np.mean(per_item[k][1])) for k in keys]
            if per_model and len(per_model) > 1:
                accs = [np.mean(v) for m in per_model
                        if (v := [per_model[m][k][1] for k in keys if k in per_model[m]])]
                mean, spread = mean_sd(accs)
            else:
                mean, spread = float(np.mean(item_means)), None
            lo, hi = bootstrap_ci(item_means, rng, n_boot=n_boot)
            out.append(Cell(group, kind, n_models, cond, by, value, len(keys), _pct(mean),
                            _pct(spread) if spread is not None else None, _pct(lo), _pct(hi)))
    return out


def _human_cells(scored, humans: HumanIndex, conditions, breakdowns, rng, n_boot) -> HumanCells:
    items = {s.key: s.item for s in scored}
    shares = {}
    for k, it in items.items():
        j = humans.lookup(it)
        if j is not None:
            shares[k] = j.share_correct
    cells = []
    for by in breakdowns:
        cells += _cells({k: (items[k], [v]) for k, v in shares.items()}, HUMANS, HUMANS, 1,
                        conditions, by, rng, n_boot)
    return HumanCells(len(humans), len(shares), tuple(cells))


def _human_agreement(scored, humans: HumanIndex | None, models, conditions) -> list[HumanAgreement]:
    out = []
    if humans is None:
        return out
    for m in models:
        for cond in conditions:
            subset = [s for s in scored if s.model == m and condition(s.item) == cond]
            a = model_human_agreement(subset, humans, model=m, condition=cond)
            if a.n:
                out.append(a)
    return out


def _ceiling(scored, humans: HumanIndex, conditions, rng) -> dict[str, Reliability]:
    """Per condition: the split-half reliability of the raters on the scored items they
    judged (Pearson, the correlation summary.md reports), whose square root is the
    ceiling of any model's correlation with the rater share. Conditions with fewer
    than three items of two or more raters are left out."""
    out = {}
    for cond in conditions:
        votes = {}
        for s in scored:
            if condition(s.item) == cond and s.key not in votes:
                j = humans.lookup(s.item)
                if j is not None:
                    votes[s.key] = (j.votes_correct, j.votes_wrong)
        if not votes:
            continue
        c, w = np.array(list(votes.values()), dtype=float).T
        with np.errstate(divide="ignore", invalid="ignore"):  # a split with r = -1 or constant halves
            rel = split_half_reliability(c, w, rng, method="pearson")  # agree analyze's defaults
        if np.isfinite(rel.ceiling):
            out[cond] = rel
    return out
