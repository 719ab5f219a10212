"""What ``agree score --curve`` writes besides a score run's files: ``learning_curve.tsv``,
``learning_curve.png`` and the "Learning curve" section of ``summary.md``.

``learning_curve.tsv`` (the one writer, :func:`write_curve_tsv`, and reader,
:func:`read_curve_tsv`), one row per series, snapshot, condition and breakdown cell:

=========== =====================================================================
series      the curve (run directory, or SERIES= of ``--model``)
snapshot    the model's name (as in items.tsv and summary.md)
order       1, 2, ... along the series
step        optimizer steps (empty: unknown)
tokens_seen training tokens read (empty: unknown)
valid_ppl   validation perplexity at that point, from its config.json (empty: unknown)
condition   ``original``, ``nonce`` (or a perturbation)
breakdown   ``all``, ``attractors`` or ``construction``
value       the number of attractors or the construction (empty for ``all``)
items       decidable items (a tie is undecidable: counted apart, never wrong)
right       items whose correct form is strictly more probable
undecidable ties
accuracy    right / items, in % (empty when no item is decidable)
ci_low/high its 95% Wilson score interval, in %
=========== =====================================================================

*Above chance for good* (:func:`emergence`; docs/learning_curves.md): a cell is above
chance at a snapshot when the lower bound of its 95% Wilson interval is above 50%; it is
above chance for good from the first snapshot at which it is above chance there and at
every later snapshot of the series.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Sequence

from agreement.curve import (BREAKDOWNS, CHANCE, COLUMNS, CURVE_PNG, CURVE_TSV, CurvePlan,
                             Point, series_axis)
from agreement.curve_plot import plot_curve
from agreement.results import build_results
from agreement.summary import md_table
from formats.errors import AgreeError
from formats.scored import ScoredItem


@dataclass(frozen=True)
class CurveRow:
    """One row of learning_curve.tsv (module docstring); percentages, None = empty."""
    series: str
    snapshot: str
    order: int
    step: int | None
    tokens_seen: int | None
    valid_ppl: float | None
    condition: str
    breakdown: str
    value: str
    items: int
    right: int
    undecidable: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None

    @property
    def above_chance(self) -> bool:
        return self.ci_low is not None and self.ci_low > CHANCE


@dataclass(frozen=True)
class Emergence:
    """When one cell of one series rises above chance for good: ``first`` is that
    snapshot's row (None: not by the last snapshot); ``last``: the last snapshot's row."""
    series: str
    condition: str
    breakdown: str
    value: str
    first: CurveRow | None
    last: CurveRow


def curve_rows(scored: Sequence[ScoredItem], named: Sequence[tuple[str, Point]]) -> list[CurveRow]:
    """The rows of every point (``named``: (model name, point) in the plan's order), then
    by condition, breakdown and value; from the per-model counts of
    :func:`agreement.results.build_results` (Wilson intervals)."""
    names = {name for name, _ in named}
    results = build_results([s for s in scored if s.model in names])
    rows = []
    for name, point in named:
        pos = point.position
        for cond in results.conditions:
            for by in BREAKDOWNS:
                values = [None] if by == "all" else sorted(
                    {v for (m, c, b, v) in results.counts if m == name and c == cond and b == by}, key=str)
                if by == "attractors":
                    values.sort()
                for value in values:
                    count = results.count(name, cond, by, value)
                    if count is None:
                        continue
                    interval = count.interval()
                    rows.append(CurveRow(point.series, name, point.order, pos.step, pos.tokens,
                                         pos.valid_ppl, cond, by, "" if value is None else str(value),
                                         count.n, count.right, count.ties, _round(count.pct),
                                         *(_round(x) for x in (interval or (None, None)))))
    return rows


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def emergence(rows: Sequence[CurveRow]) -> list[Emergence]:
    """Per series and cell, the first snapshot from which it stays above chance (a cell
    missing at a snapshot, no decidable item, is not above chance there); ordered by
    series, then by how early (never last), then as the table lists cells."""
    cells: dict[tuple, list[CurveRow]] = {}
    orders: dict[str, int] = {}
    for r in rows:
        cells.setdefault((r.series, r.condition, r.breakdown, r.value), []).append(r)
        orders[r.series] = max(orders.get(r.series, 0), r.order)
    out = []
    for (series, cond, by, value), rs in cells.items():
        by_order = {r.order: r for r in rs}
        first = None
        for order in range(orders[series], 0, -1):     # walk back from the last snapshot
            r = by_order.get(order)
            if r is None or not r.above_chance:
                break
            first = r
        out.append(Emergence(series, cond, by, value, first, rs[-1]))
    rank = {s: i for i, s in enumerate(dict.fromkeys(r.series for r in rows))}
    out.sort(key=lambda e: (rank[e.series], e.first is None, e.first.order if e.first else 0))
    return out


# --------------------------------------------------------------------------- files

def write_curve_tsv(rows: Sequence[CurveRow], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            fh.write("\t".join(_cell(getattr(r, c)) for c in COLUMNS) + "\n")


def _cell(v) -> str:
    if v is None:
        return ""
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def read_curve_tsv(path: str | Path) -> list[CurveRow]:
    """The rows of a learning_curve.tsv (:class:`AgreeError` naming the line when one is bad)."""
    types = {f.name: f.type for f in fields(CurveRow)}
    rows = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise AgreeError(f"{path}:1: not a learning_curve.tsv (expected columns {', '.join(COLUMNS)})")
        for n, line in enumerate(reader, start=2):
            try:
                rows.append(CurveRow(**{c: _parse(v, types[c]) for c, v in zip(COLUMNS, line, strict=True)}))
            except ValueError as e:
                raise AgreeError(f"{path}:{n}: {e}") from None
    return rows


def _parse(text: str, kind: str):
    if kind == "str":
        return text
    if text == "":
        return None
    return int(text) if "int" in kind else float(text)


# --------------------------------------------------------------------------- the report

def write_curve(directory: str | Path, scored: Sequence[ScoredItem], specs: Sequence, plan: CurvePlan) -> list[CurveRow]:
    """learning_curve.tsv and .png in ``directory``, and the curve's section inserted
    into its summary.md (before the overall table); ``specs``: the scored models
    (:class:`lm.load.ModelSpec`), matched to the plan's points by directory."""
    directory = Path(directory)
    name_of = {os.path.abspath(s.directory): s.name for s in specs}
    rows = curve_rows(scored, [(name_of[os.path.abspath(p.path)], p) for p in plan.points])
    write_curve_tsv(rows, directory / CURVE_TSV)
    series = {}
    for p in plan.points:
        series.setdefault(p.series, []).append(p)
    axes = {s: series_axis(points)[0] for s, points in series.items()}
    plot_curve(rows, axes, directory / CURVE_PNG)
    md = directory / "summary.md"
    text = md.read_text(encoding="utf-8")
    at = text.find("\n## ")
    section = "\n".join(curve_markdown(rows, axes))       # ends in a blank line
    md.write_text(text + "\n" + section if at < 0 else text[:at + 1] + section + text[at:], encoding="utf-8")
    return rows


def curve_markdown(rows: Sequence[CurveRow], axes: dict[str, str]) -> list[str]:
    """summary.md's "Learning curve" section: per series, the points, then for every
    cell the snapshot from which it is above chance for good, in the order reached."""
    out = ["## Learning curve", "",
           "Accuracy in % over the decidable items at each snapshot, with its 95% Wilson interval "
           f"(`{CURVE_TSV}`, `{CURVE_PNG}`). *Above chance for good from* a snapshot: the lower "
           "bound of the interval is above 50% there and at every later snapshot "
           "(docs/learning_curves.md).", ""]
    found = emergence(rows)
    for series in dict.fromkeys(r.series for r in rows):
        mine = [r for r in rows if r.series == series]
        points = list({r.order: r for r in mine}.values())
        span = f"{_where(points[0], axes[series])} to {_where(points[-1], axes[series])}"
        out += [f"### {series}: {len(points)} snapshots, {span}", ""]
        cells = [e for e in found if e.series == series]
        out += md_table(["condition", "breakdown", "items (last)", "above chance for good from",
                          "accuracy then", "accuracy at the last snapshot"],
                         [[e.condition, _cell_name(e), str(e.last.items),
                           _where(e.first, axes[series]) if e.first else "not by the last snapshot",
                           _acc(e.first), _acc(e.last)] for e in cells])
        reached = [e for e in cells if e.first is not None and e.breakdown != "construction"]
        order = " < ".join(" = ".join(f"{e.condition}{_suffix(e)}" for e in grp)
                           for grp in _groups(reached))
        never = [f"{e.condition}{_suffix(e)}" for e in cells if e.first is None and e.breakdown != "construction"]
        out += [f"Order reached (overall and by attractors): {order or 'none'}"
                + (f"; not above chance for good by the last snapshot: {', '.join(never)}" if never else "")
                + ".", ""]
    return out


def _groups(reached: Sequence[Emergence]) -> list[list[Emergence]]:
    groups: list[list[Emergence]] = []
    for e in reached:
        if groups and groups[-1][0].first.order == e.first.order:
            groups[-1].append(e)
        else:
            groups.append([e])
    return groups


def _where(r: CurveRow, axis: str) -> str:
    tokens = f", {_tokens(r.tokens_seen)} tokens" if r.tokens_seen is not None else ""
    step = f"step {r.step}" if r.step is not None else f"point {r.order}"
    return f"{r.snapshot} ({step}{tokens})" if axis != "order" else f"{r.snapshot} (point {r.order})"


def _tokens(n: int) -> str:
    for scale, unit in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return str(n)


def _cell_name(e: Emergence) -> str:
    if e.breakdown == "all":
        return "all"
    return f"{e.value} attractor{'s' if e.value != '1' else ''}" if e.breakdown == "attractors" else e.value


def _suffix(e: Emergence) -> str:
    return "" if e.breakdown == "all" else f" ({_cell_name(e)})"


def _acc(r: CurveRow | None) -> str:
    if r is None or r.accuracy is None:
        return "-"
    return f"{r.accuracy:.1f} [{r.ci_low:.1f}, {r.ci_high:.1f}]"

