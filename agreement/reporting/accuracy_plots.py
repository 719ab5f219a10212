"""The two plots of every ``agree score``: accuracy by construction (grouped bars) and by
number of attractors (lines), one panel per condition (original, nonce), 95% intervals,
a line at chance, a legend that says how many items each group decided.

Both draw the one :class:`agreement.reporting.results.Results` through its JSON view
(:func:`agreement.reporting.summary.summary_dict`, with human and published rows), so a
plot never shows a figure the tables do not. They are drawn on the small Pillow canvas of
:mod:`agreement.reporting.raster` (what a score call waits for; the reason is there).
"""
from __future__ import annotations

import os

from agreement.reporting.raster import COLOURS, Canvas, px, text_width
from agreement.reporting.results import HUMANS, Results
from agreement.reporting.summary import summary_dict

#: conditions plotted side by side (perturbations have their own robustness plot)
_PANELS = ("original", "nonce")
MARGIN = 8          # pixels around the figure
TICK, PAD = 3.5, 3.5   # points: tick length (outwards) and the gap to its label, as matplotlib's
TICKS_PT, LABEL_PT, TITLE_PT, LEGEND_PT = 10, 10, 12, 7
ROW_PT = 18         # a bar and its share of the gap: 0.25 inch
PANEL_GAP = 24
MIN_HEIGHT = 160    # pixels: the least height of a bar panel
_LEGEND_ROW, _HANDLE = 1.6, 22    # a legend row in font sizes; the handle's width in pixels


def _labels(summary: dict) -> list[str]:
    labels = [g["group"] for g in summary["groups"]] + ([HUMANS] if summary.get("humans") else [])
    return labels + list((summary.get("reference") or {}).get("labels", []))


def _cells(summary: dict, by: str) -> dict:
    rows = [r for r in summary["accuracy"] if r["by"] == by]
    if summary.get("humans"):
        rows += [r for r in summary["humans"]["rows"] if r["by"] == by]
    if summary.get("reference"):  # published per-paradigm figures (formats.published)
        rows += [r for r in summary["reference"]["rows"] if r["by"] == by]
    return {(r["group"], r["condition"], r["value"]): r for r in rows}


def _panels(summary: dict) -> list[str]:
    return [c for c in _PANELS if c in summary["conditions"]] or summary["conditions"][:2]


def _legend_name(summary: dict, label: str) -> str:
    base = {g["group"]: g["baseline"] for g in summary["groups"]}
    name = f"{label} (baseline)" if base.get(label) else label
    # accuracy is over decidable items: say how many, and how many were ties
    rows = [r for r in summary["accuracy"] if r["by"] == "all" and r["group"] == label]
    if rows:
        n, u = sum(r["items"] for r in rows), sum(r.get("undecidable", 0) for r in rows)
        name += f" [{n} decidable" + (f", {u} undecidable]" if u else "]")
    return name


def _legend_size(names: list[str]) -> tuple[float, float]:
    width = max((text_width(n, LEGEND_PT) for n in names), default=0.0) + _HANDLE + 16
    return width, len(names) * px(LEGEND_PT) * _LEGEND_ROW + 8


def _legend(canvas: Canvas, x: float, y: float, names: list[str], bars: bool) -> None:
    """Framed entries from (x, y): a colour patch (bars) or a line with a dot (lines)."""
    w, h = _legend_size(names)
    canvas.rect(x, y, x + w, y + h, fill="white", outline="#cccccc")
    step = px(LEGEND_PT) * _LEGEND_ROW
    for j, name in enumerate(names):
        yc, colour = y + 4 + (j + 0.5) * step, COLOURS[j % len(COLOURS)]
        if bars:
            canvas.rect(x + 6, yc - px(LEGEND_PT) / 2, x + 6 + _HANDLE - 4, yc + px(LEGEND_PT) / 2, fill=colour)
        else:
            canvas.line([(x + 6, yc), (x + 2 + _HANDLE, yc)], fill=colour, width=1.5)
            canvas.dot(x + 4 + _HANDLE / 2, yc, 6, colour)
        canvas.text(x + 10 + _HANDLE, yc, name, LEGEND_PT, anchor="lm")


def _whisker(canvas: Canvas, a: tuple[float, float], b: tuple[float, float], cap: float, width: float,
             fill: str = "black") -> None:
    """An error bar from ``a`` to ``b`` with a cap ``cap`` pixels across at each end."""
    canvas.line([a, b], fill=fill, width=width)
    for x, y in (a, b):
        ends = [(x, y - cap / 2), (x, y + cap / 2)] if a[1] == b[1] else [(x - cap / 2, y), (x + cap / 2, y)]
        canvas.line(ends, fill=fill, width=width)


def _frame(canvas: Canvas, box: tuple[float, float, float, float], title: str) -> None:
    x0, y0, x1, y1 = box
    canvas.rect(x0, y0, x1, y1, outline="black", width=0.8)
    canvas.text((x0 + x1) / 2, y0 - px(6), title, TITLE_PT, anchor="md")


def _x_ticks(canvas: Canvas, ticks, at, y: float, xlabel: str, middle: float) -> None:
    for v in ticks:
        canvas.line([(at(v), y), (at(v), y + px(TICK))], width=0.8)
        canvas.text(at(v), y + px(TICK + PAD), f"{v:g}", TICKS_PT, anchor="ma")
    canvas.text(middle, y + px(TICK + PAD) + px(TICKS_PT) * 1.3 + px(4), xlabel, LABEL_PT, anchor="ma")


def _below(top: float, height: float) -> float:
    """The figure's height under a panel row: ticks, their labels, the axis label, margin."""
    return top + height + px(TICK + PAD) + 2 * px(TICKS_PT) * 1.3 + px(4) + MARGIN


def plot_by_construction(results: Results, path: str | os.PathLike) -> None:
    """Horizontal grouped bars: accuracy per construction for every model group, the
    baseline and humans; one panel per condition (original, nonce); 95% CI whiskers."""
    summary = summary_dict(results)
    cells, labels, panels = _cells(summary, "construction"), _labels(summary), _panels(summary)
    constructions = sorted({v for (_, c, v) in cells if c in panels}, key=str)
    names = [_legend_name(summary, label) for label in labels]
    n, width = max(len(labels), 1), 360.0
    # 0.25 inch a bar, and never a panel too low to read (a test set of one construction)
    height = max(px(ROW_PT) * n * len(constructions), MIN_HEIGHT)
    row = height / max(len(constructions), 1)
    left = MARGIN + max((text_width(str(c), 8) for c in constructions), default=0) + px(TICK + PAD)
    top = MARGIN + px(TITLE_PT) * 1.3 + px(6)
    legend_x = left + len(panels) * (width + PANEL_GAP) - PANEL_GAP + px(6)
    legend_w, legend_h = _legend_size(names)
    canvas = Canvas(legend_x + legend_w + MARGIN, max(_below(top, height), top + legend_h + MARGIN))
    bar = 0.8 * row / n
    for k, cond in enumerate(panels):
        x0 = left + k * (width + PANEL_GAP)

        def at(v: float, x0: float = x0) -> float:
            return x0 + max(0.0, min(v, 100.0)) / 100 * width

        for i, v in enumerate(constructions):
            for j, label in enumerate(labels):
                r = cells.get((label, cond, v))
                if r is None or r["accuracy"] is None:
                    continue
                yc = top + (i + 0.5) * row + (j - (n - 1) / 2) * bar
                canvas.rect(at(0), yc - bar / 2, at(r["accuracy"]), yc + bar / 2, fill=COLOURS[j % len(COLOURS)])
                lo, hi = min(r["ci_low"], r["accuracy"]), max(r["ci_high"], r["accuracy"])
                _whisker(canvas, (at(lo), yc), (at(hi), yc), px(3), 0.6)
        canvas.line([(at(50), top), (at(50), top + height)], fill="grey", width=0.6, dotted=True)   # over the bars
        _frame(canvas, (x0, top, x0 + width, top + height), cond)
        _x_ticks(canvas, range(0, 101, 20), at, top + height, "accuracy (%, decidable items)", x0 + width / 2)
        if k == 0:
            for i, v in enumerate(constructions):
                yc = top + (i + 0.5) * row
                canvas.line([(x0 - px(TICK), yc), (x0, yc)], width=0.8)
                canvas.text(x0 - px(TICK + PAD), yc, str(v), 8, anchor="rm")
    _legend(canvas, legend_x, top, names, bars=True)
    canvas.save(path)


def plot_by_attractors(results: Results, path: str | os.PathLike) -> None:
    """Accuracy against the number of attractors, a line per group and humans; one panel
    per condition; 95% CI error bars."""
    summary = summary_dict(results)
    cells, labels, panels = _cells(summary, "attractors"), _labels(summary), _panels(summary)
    names = [_legend_name(summary, label) for label in labels]
    width, height = 330.0, 250.0
    left = MARGIN + px(LABEL_PT) * 1.3 + px(4) + text_width("100", TICKS_PT) + px(TICK + PAD)
    top = MARGIN + px(TITLE_PT) * 1.3 + px(6)
    legend_x = left + len(panels) * (width + PANEL_GAP) - PANEL_GAP + px(6)
    legend_w, legend_h = _legend_size(names)
    canvas = Canvas(legend_x + legend_w + MARGIN, max(_below(top, height), top + legend_h + MARGIN))

    def y_at(v: float) -> float:
        return top + (100 - max(0.0, min(v, 100.0))) / 100 * height

    for k, cond in enumerate(panels):
        x0 = left + k * (width + PANEL_GAP)
        values = sorted({v for (_, c, v) in cells if c == cond})
        lo, hi = (values[0], values[-1]) if values else (0, 1)
        pad = 0.05 * (hi - lo) if hi > lo else 0.5

        def at(v: float, x0: float = x0, lo: float = lo - pad, span: float = hi - lo + 2 * pad) -> float:
            return x0 + (v - lo) / span * width

        canvas.line([(x0, y_at(50)), (x0 + width, y_at(50))], fill="grey", width=0.6, dotted=True)
        for j, label in enumerate(labels):
            rs = [(v, cells[(label, cond, v)]) for v in values if (label, cond, v) in cells]
            rs = [(v, r) for v, r in rs if r["accuracy"] is not None]
            colour = COLOURS[j % len(COLOURS)]
            if len(rs) > 1:
                canvas.line([(at(v), y_at(r["accuracy"])) for v, r in rs], fill=colour, width=1.5)
            for v, r in rs:
                lo_, hi_ = min(r["ci_low"], r["accuracy"]), max(r["ci_high"], r["accuracy"])
                _whisker(canvas, (at(v), y_at(lo_)), (at(v), y_at(hi_)), px(4), 1.0, colour)
                canvas.dot(at(v), y_at(r["accuracy"]), 6, colour)
        _frame(canvas, (x0, top, x0 + width, top + height), cond)
        _x_ticks(canvas, values, at, top + height, "attractors", x0 + width / 2)
        for v in range(0, 101, 20):
            canvas.line([(x0 - px(TICK), y_at(v)), (x0, y_at(v))], width=0.8)
            if k == 0:
                canvas.text(x0 - px(TICK + PAD), y_at(v), str(v), TICKS_PT, anchor="rm")
    canvas.vertical_text(MARGIN + px(LABEL_PT) * 0.65, top + height / 2, "accuracy (%, decidable items)", LABEL_PT)
    _legend(canvas, legend_x, top, names, bars=False)
    canvas.save(path)
