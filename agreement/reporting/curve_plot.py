"""``learning_curve.png``: accuracy against training position, one row of panels per
series, one panel per condition (original, nonce), a line per number of attractors and
one for all items, 95% Wilson intervals as bands, chance at 50%. A line of fewer than
:data:`MIN_BAND_ITEMS` items is drawn thin and dashed, without its band: the interval of
a handful of items covers most of the panel and would hide the others'."""
from __future__ import annotations

import os
from typing import Sequence

from agreement.reporting.png import colours as colour_cycle, save_png, subplots

#: conditions drawn side by side (others, perturbations, only when neither is there)
_PANELS = ("original", "nonce")
#: decidable items (at the last point) below which a line gets no band
MIN_BAND_ITEMS = 10
_LABELS = {"tokens": "training tokens seen (log scale)", "steps": "optimizer steps (log scale)",
           "order": "model (in the order given)"}


def _x(row, axis: str) -> float:
    return float({"tokens": row.tokens_seen, "steps": row.step}.get(axis) or row.order)


def plot_curve(rows: Sequence, axes: dict[str, str], path: str | os.PathLike) -> None:
    """Draw ``rows`` (:class:`agreement.reporting.curve_report.CurveRow`, breakdowns ``all`` and
    ``attractors``) into ``path``; ``axes``: series -> ``tokens``/``steps``/``order``."""
    series = list(dict.fromkeys(r.series for r in rows)) or ["(no points)"]
    conditions = list(dict.fromkeys(r.condition for r in rows))
    panels = [c for c in _PANELS if c in conditions] or conditions[:2] or ["original"]
    colours = colour_cycle()
    fig, grid = subplots(len(series), len(panels), figsize=(5.5 * len(panels), 4.6 * len(series)),
                         squeeze=False, sharey=True)
    for i, name in enumerate(series):
        axis = axes.get(name, "order")
        for ax, cond in zip(grid[i], panels):
            mine = [r for r in rows if r.series == name and r.condition == cond]
            lines = [("all", "")] + sorted({("attractors", r.value) for r in mine if r.breakdown == "attractors"},
                                           key=lambda bv: int(bv[1]))
            for j, (by, value) in enumerate(lines):
                line = sorted((r for r in mine if r.breakdown == by and r.value == value), key=lambda r: r.order)
                if not line:
                    continue
                colour = "black" if by == "all" else colours[j % len(colours)]
                xs = [_x(r, axis) for r in line]
                nan = float("nan")
                ys = [nan if r.accuracy is None else r.accuracy for r in line]
                lo = [nan if r.ci_low is None else r.ci_low for r in line]
                hi = [nan if r.ci_high is None else r.ci_high for r in line]
                label = ("all items" if by == "all" else f"{value} attractor{'s' if value != '1' else ''}")
                band = line[-1].items >= MIN_BAND_ITEMS
                ax.plot(xs, ys, color=colour, marker="o", ms=3 if band else 2, ls="-" if band else "--",
                        lw=2 if by == "all" else 1.2 if band else 0.8,
                        label=f"{label} ({line[-1].items}{'' if band else ', no band'})")
                if band:
                    ax.fill_between(xs, lo, hi, color=colour, alpha=0.12 if by == "all" else 0.1, lw=0)
            ax.axhline(50, color="grey", lw=0.8, ls="--")
            ax.text(1.0, 50, " chance", transform=ax.get_yaxis_transform(), va="center", ha="left",
                    fontsize=7, color="grey")
            if axis != "order" and mine and all(_x(r, axis) > 0 for r in mine):
                ax.set_xscale("log")
            ax.set_ylim(0, 100)
            ax.set_title(f"{name}: {cond}" if len(series) > 1 else cond)
            ax.set_xlabel(_LABELS[axis])
            if mine:
                # below the panel: inside, it would hide the lines it names
                ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3,
                          title="items (last point)", title_fontsize=7, frameon=False)
        grid[i][0].set_ylabel("accuracy (%, decidable items)")
    save_png(fig, path)
