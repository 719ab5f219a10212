"""The one results model of ``agree score``: a typed record built once from scored
items, that every report renders from (``summary.json``/``summary.md`` in
:mod:`agreement.reporting.summary`, the PNGs in :mod:`agreement.reporting.plots`, the robustness table in
:mod:`agreement.reporting.robustness`, the demo's ``report.md`` in :mod:`agreement.reporting.demo_report`,
``agree analyze``'s accuracies).

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
(:func:`agreement.reporting.humans.split_half_reliability`, Pearson).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from agreement.reporting.humans import (HumanComparison, HumanIndex, Reliability, model_human_agreement,
                                        split_half_reliability)
from agreement.reporting.paired import paired_tests
# the records live in result_records; re-exported here, where reports have always found them
from agreement.reporting.result_records import (ATTRACTED, BREAKDOWNS, HUMANS, METHOD,  # noqa: F401
                                                RELATION_BREAKDOWNS, Cell, Count, CountKey, Group, HumanCells,
                                                ModelRecord, Results, order_conditions)
from agreement.reporting.stats import N_BOOT, bootstrap_ci, mean_sd
from formats.scored import ScoredTable
from formats.testsets.papertab import FREQ_MODEL

class _Rows:
    """The table's columns as Python lists, for the per-item loops (dicts keyed by item)."""

    def __init__(self, t: ScoredTable):
        self.key = t.keys()
        self.model, self.cond = t.model.tolist(), t.condition.tolist()
        self.label, self.attractors = t.construction_label.tolist(), t.attractors.tolist()
        self.bare, self.correct, self.tie = t.construction.tolist(), t.correct.tolist(), t.undecidable.tolist()
        self.other = {by: getattr(t, by).tolist() for by in (*RELATION_BREAKDOWNS, METHOD)}

    def cell(self, i: int, by: str):
        """The breakdown value of row ``i`` (``all``: None)."""
        if by == "all":
            return None
        if by == "testset":
            return self.key[i][0]
        if by in self.other:
            return self.other[by][i]
        return (self.label if by == "construction" else self.attractors)[i]


def _pct(x: float | None) -> float | None:
    return None if x is None or np.isnan(x) else round(100 * x, 4)


def build_results(scored: ScoredTable, *, rng: np.random.Generator | None = None,
                  humans: HumanIndex | None = None, n_boot: int = N_BOOT) -> Results:
    """The :class:`Results` of scored rows; group cells and human cells (bootstrap
    intervals) and the noise ceiling only with a generator ``rng``."""
    models = _model_records(scored)
    groups = _groups(models)
    conditions = tuple(order_conditions(set(scored.condition.tolist())))
    breakdowns = breakdowns_of(scored)
    cells, human, ceiling = [], None, {}
    if rng is not None:   # the per-item loops of the bootstrap cells
        rows = _Rows(scored)
        outcome, undecided = _outcomes(rows)
        for g in groups:
            for by in breakdowns:
                cells += _group_cells(g, rows, outcome, undecided, conditions, by, rng, n_boot)
        if humans is not None:
            human = _human_cells(scored, rows, humans, conditions, breakdowns, rng, n_boot)
            ceiling = _ceiling(scored, rows, humans, conditions, rng)
    tests = paired_tests(scored, [m.name for m in models], conditions)
    agreement = _human_agreement(scored, humans, [m.name for m in models], conditions)
    return Results(conditions, tuple(models), tuple(groups), _counts(scored), tuple(cells), human,
                   tuple(tests), tuple(agreement), ceiling, n_boot)


def breakdowns_of(scored: ScoredTable) -> tuple[str, ...]:
    """The breakdowns of a table's cells: :data:`BREAKDOWNS` (``testset`` only for
    several test sets), then by relation and by feature when rows are relation items',
    then by method when the rows were scored by more than one (the later ones after, so
    that the bootstrap draws the earlier cells as it always has)."""
    out = BREAKDOWNS if len(set(scored.testset.tolist())) > 1 else BREAKDOWNS[:-1]
    if _has_relations(scored):
        out += RELATION_BREAKDOWNS
    if len(set(scored.method.tolist())) > 1:
        out += (METHOD,)
    return out


def _has_relations(scored: ScoredTable) -> bool:
    return bool((scored.relation != "").any())


def _model_records(scored: ScoredTable) -> list[ModelRecord]:
    names, first, inverse = np.unique(scored.model, return_index=True, return_inverse=True)
    per = lambda flags: np.bincount(inverse, weights=flags, minlength=len(names)).astype(int)  # noqa: E731
    items, oov = np.bincount(inverse, minlength=len(names)), per(scored.oov)
    mismatch, ties = per(scored.pieces_differ), per(scored.undecidable)
    methods = _method_counts(scored)
    out = []
    for j in np.argsort(first, kind="stable"):  # in order of first appearance
        i = first[j]
        name, kind = scored.model[i], scored.kind[i]
        released = kind == "paper-output" or name == FREQ_MODEL  # the vocabulary is unknown
        out.append(ModelRecord(name, scored.group[i], kind, int(items[j]), None if released else int(oov[j]),
                               int(mismatch[j]), int(ties[j]), methods.get(name)))
    return out


def _method_counts(scored: ScoredTable) -> dict[str, dict[str, int]]:
    """model -> method -> rows, when the rows are relation items' or scored by more than
    one method (else empty: nothing to say beyond the run's method)."""
    if not _has_relations(scored) and len(set(scored.method.tolist())) < 2:
        return {}
    out: dict[str, dict[str, int]] = {}
    for (model, method), n in Counter(zip(scored.model.tolist(), scored.method.tolist())).items():
        out.setdefault(model, {})[method] = n
    return {m: dict(sorted(c.items(), key=lambda kv: (kv[0] != "target", kv[0]))) for m, c in out.items()}


def _groups(models: Sequence[ModelRecord]) -> list[Group]:
    """Groups in order of first appearance, baselines (unigram) first."""
    members: dict[str, list[ModelRecord]] = {}
    for m in models:
        members.setdefault(m.group, []).append(m)
    # as the summary always had: a group's kind is its first model's, baseline its last's
    groups = [Group(g, ms[0].kind, tuple(m.name for m in ms), ms[-1].kind == "unigram")
              for g, ms in members.items()]
    return [g for g in groups if g.baseline] + [g for g in groups if not g.baseline]


def _outcomes(rows: _Rows) -> tuple[dict, dict]:
    """model -> item key -> (row, right?) for the decidable rows, and model -> item key ->
    row for the undecidable ones (ties)."""
    outcome: dict[str, dict] = defaultdict(dict)
    undecided: dict[str, dict] = defaultdict(dict)
    for i, (m, k, tie, right) in enumerate(zip(rows.model, rows.key, rows.tie, rows.correct)):
        if tie:
            undecided[m][k] = i
        else:
            outcome[m][k] = (i, right)
    return outcome, undecided


def _counts(scored: ScoredTable) -> dict[CountKey, Count]:
    """Per model :class:`CountKey` -> :class:`Count`, grouped as arrays; within a breakdown
    the cells are in order of first appearance."""
    right = scored.correct & ~scored.undecidable
    attracted = np.flatnonzero(scored.attractors > 0)
    model, cond = _codes(scored.model), _codes(scored.condition)
    base = model[0] * cond[1] + cond[0]   # (model, condition) as one number
    out: dict[CountKey, Count] = {}
    later = [(by, getattr(scored, by), None) for by in breakdowns_of(scored) if by not in BREAKDOWNS]
    for by, values, rows in (("all", None, None), ("construction", scored.construction_label, None),
                             ("attractors", scored.attractors, None), ("testset", scored.testset, None),
                             (ATTRACTED, None, attracted), *later):
        sel = np.arange(len(scored)) if rows is None else rows
        code = base[sel]
        if values is not None:
            c, k = _codes(values)
            code = code * k + c[sel]
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        k = len(first)
        r = np.bincount(inverse, weights=right[sel], minlength=k).astype(int)
        t = np.bincount(inverse, weights=scored.undecidable[sel], minlength=k).astype(int)
        n = np.bincount(inverse, minlength=k) - t
        for j in np.argsort(first, kind="stable"):
            i = sel[first[j]]
            value = None if values is None else values[i]
            key = CountKey(scored.model[i], scored.condition[i], by, value.item() if hasattr(value, "item") else value)
            out[key] = Count(int(r[j]), int(n[j]), int(t[j]))
    return out


def _codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each value's number (in order of first appearance), and how many there are."""
    values = values.tolist()
    index = {v: i for i, v in enumerate(dict.fromkeys(values))}
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values)), max(len(index), 1)


def _group_cells(g: Group, rows: _Rows, outcome, undecided, conditions, by, rng, n_boot) -> list[Cell]:
    # item key -> (row, [1/0 for each model of the group that scored it])
    per_item: dict = {}
    for m in g.models:
        for k, (i, right) in outcome[m].items():
            per_item.setdefault(k, (i, []))[1].append(float(right))
    per_model = {m: outcome[m] for m in g.models}
    # (condition, cell value) -> undecidable (model, item) scores, reported beside the accuracy
    ties: dict = defaultdict(int)
    for m in g.models:
        for k, i in undecided.get(m, {}).items():
            ties[(rows.cond[i], rows.cell(i, by))] += 1
    cells = _cells(per_item, rows, g.group, g.kind, len(g.models), conditions, by, rng, n_boot, per_model)
    out = [Cell(**{**c.__dict__, "undecidable": ties.pop((c.condition, c.value), 0)}) for c in cells]
    for (cond, value), n in sorted(ties.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        # every item of the cell undecidable: no accuracy, still reported
        out.append(Cell(g.group, g.kind, len(g.models), cond, by, value, 0, None, None, None, None, n))
    return out


def _cells(per_item, rows: _Rows, group, kind, n_models, conditions, by, rng, n_boot,
           per_model=None) -> list[Cell]:
    """Cells of one breakdown: per_item maps item key -> (row, [scores])."""
    keys_of: dict = defaultdict(list)
    bare: dict = {}  # construction label -> the construction without its direction
    for k, (i, _) in per_item.items():
        value = rows.cell(i, by)
        keys_of[(rows.cond[i], value)].append(k)
        bare[value] = rows.bare[i] if by == "construction" else value
    out = []
    for cond in conditions:
        # in the order of the bare construction names (the bootstrap draws cell by cell in
        # this order, so the intervals stay those of the labels without a direction)
        values = sorted({v for c, v in keys_of if c == cond}, key=lambda v: (v is None, bare[v], v))
        for value in values:
            keys = keys_of[(cond, value)]
            item_means = [_mean(per_item[k][1]) for k in keys]
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


def _mean(values: list[float]) -> float:
    """np.mean's value; one model's single score is its own mean (np.mean of one value
    returns it unchanged: skipping the call spares a few microseconds per item and cell)."""
    return values[0] if len(values) == 1 else float(np.mean(values))


def _judged(scored: ScoredTable, rows: _Rows, humans: HumanIndex) -> dict:
    """item key -> (row, judgment) for the scored items with judgments (the last row of
    each item, as a dict of keys keeps it)."""
    last = {k: i for i, k in enumerate(rows.key)}
    out = {}
    for k, i in last.items():
        j = humans.lookup(scored.items[i])
        if j is not None:
            out[k] = (i, j)
    return out


def _human_cells(scored, rows: _Rows, humans: HumanIndex, conditions, breakdowns, rng, n_boot) -> HumanCells:
    judged = _judged(scored, rows, humans)
    cells = []
    for by in breakdowns:
        cells += _cells({k: (i, [j.share_correct]) for k, (i, j) in judged.items()}, rows, HUMANS, HUMANS, 1,
                        conditions, by, rng, n_boot)
    return HumanCells(len(humans), len(judged), tuple(cells))


def _human_agreement(scored: ScoredTable, humans: HumanIndex | None, models, conditions) -> list[HumanComparison]:
    out = []
    if humans is None:
        return out
    for m in models:
        for cond in conditions:
            subset = scored.subset((scored.model == m) & (scored.condition == cond))
            a = model_human_agreement(subset, humans, model=m, condition=cond)
            if a.n:
                out.append(a)
    return out


def _ceiling(scored: ScoredTable, rows: _Rows, humans: HumanIndex, conditions, rng) -> dict[str, Reliability]:
    """Per condition: the split-half reliability of the raters on the scored items they
    judged (Pearson, the correlation summary.md reports), whose square root is the
    ceiling of any model's correlation with the rater share. Conditions with fewer
    than three items of two or more raters are left out."""
    out = {}
    for cond in conditions:
        votes = {}
        for i, k in enumerate(rows.key):
            if rows.cond[i] == cond and k not in votes:
                j = humans.lookup(scored.items[i])
                if j is not None:
                    votes[k] = (j.votes_correct, j.votes_wrong)
        if not votes:
            continue
        c, w = np.array(list(votes.values()), dtype=float).T
        with np.errstate(divide="ignore", invalid="ignore"):  # a split with r = -1 or constant halves
            rel = split_half_reliability(c, w, rng, method="pearson")  # agree analyze's defaults
        if np.isfinite(rel.ceiling):
            out[cond] = rel
    return out
