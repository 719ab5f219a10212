"""PNG plots of ``agree score`` results (matplotlib, Agg backend: no display needed).

Every plot takes the one :class:`agreement.reporting.results.Results`: the bar and line plots
draw its cells through its JSON view (:func:`agreement.reporting.summary.summary_dict`, with
published rows, the rounded figures the tables print); the per-item scatter takes the
scored rows and judgments, and its noise-ceiling panel the results' correlations and
ceiling; so a plot never recomputes a figure differently from the tables.
"""
from __future__ import annotations

import os
from collections import defaultdict
from typing import Sequence

from agreement.reporting.humans import HumanIndex
from agreement.reporting.results import HUMANS, Results
from agreement.reporting.png import save_png, subplots
from agreement.reporting.summary import summary_dict
from formats.scored import ScoredTable

#: Conditions plotted side by side (perturbations have their own robustness plot).
_PANELS = ("original", "nonce")


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


def plot_by_construction(results: Results, path: str | os.PathLike) -> None:
    """Horizontal grouped bars: accuracy per construction for every model group, the
    baseline and humans; one panel per condition (original, nonce); 95% CI whiskers."""
    summary = summary_dict(results)
    cells, labels, panels = _cells(summary, "construction"), _labels(summary), _panels(summary)
    constructions = sorted({v for (_, c, v) in cells if c in panels}, key=str)
    height = max(3.0, 0.25 * len(constructions) * max(len(labels), 1) + 1.5)
    fig, axes = subplots(1, len(panels), figsize=(6 * len(panels), height), sharey=True, squeeze=False)
    width = 0.8 / max(len(labels), 1)
    for ax, cond in zip(axes[0], panels):
        for j, label in enumerate(labels):
            ys, xs, err = [], [], [[], []]
            for i, v in enumerate(constructions):
                r = cells.get((label, cond, v))
                if r is None or r["accuracy"] is None:
                    continue
                ys.append(i + (j - (len(labels) - 1) / 2) * width)
                xs.append(r["accuracy"])
                err[0].append(max(r["accuracy"] - r["ci_low"], 0))
                err[1].append(max(r["ci_high"] - r["accuracy"], 0))
            ax.barh(ys, xs, height=width, xerr=err, label=_legend_name(summary, label),
                    error_kw={"elinewidth": 0.6, "capsize": 1.5})
        ax.set_yticks(range(len(constructions)), constructions, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.axvline(50, color="grey", lw=0.6, ls=":")
        ax.set_xlabel("accuracy (%, decidable items)")
        ax.set_title(cond)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    save_png(fig, path)


def plot_by_attractors(results: Results, path: str | os.PathLike) -> None:
    """Accuracy against the number of attractors, a line per group and humans; one panel
    per condition; 95% CI error bars."""
    summary = summary_dict(results)
    cells, labels, panels = _cells(summary, "attractors"), _labels(summary), _panels(summary)
    fig, axes = subplots(1, len(panels), figsize=(5 * len(panels), 3.8), sharey=True, squeeze=False)
    for ax, cond in zip(axes[0], panels):
        values = sorted({v for (_, c, v) in cells if c == cond})
        for label in labels:
            rs = [(v, cells[(label, cond, v)]) for v in values if (label, cond, v) in cells]
            rs = [(v, r) for v, r in rs if r["accuracy"] is not None]
            if not rs:
                continue
            ax.errorbar([v for v, _ in rs], [r["accuracy"] for _, r in rs],
                        yerr=[[max(r["accuracy"] - r["ci_low"], 0) for _, r in rs],
                              [max(r["ci_high"] - r["accuracy"], 0) for _, r in rs]],
                        marker="o", capsize=2, label=_legend_name(summary, label))
        ax.set_xticks(values)
        ax.set_ylim(0, 100)
        ax.axhline(50, color="grey", lw=0.6, ls=":")
        ax.set_xlabel("attractors")
        ax.set_title(cond)
    axes[0][0].set_ylabel("accuracy (%, decidable items)")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    save_png(fig, path)


def plot_model_vs_human(scored: ScoredTable, humans: HumanIndex, path: str | os.PathLike, *,
                        results: Results | None = None, max_models: int = 6) -> bool:
    """Per item: human share-correct (x) against the model's P(c)/(P(c)+P(w)) (y), one
    panel per model (the first ``max_models``), colour by condition. With ``results``
    holding a noise ceiling (rater counts given), a last panel shows each model's
    Pearson r with the rater share beside the ceiling (line) and its 95% interval
    (band), per condition. Returns False (and writes nothing) when no scored item has
    judgments."""
    points: dict = defaultdict(lambda: defaultdict(lambda: ([], [])))
    share = scored.p_correct_share.tolist()
    for i, (it, m, cond) in enumerate(zip(scored.items, scored.model.tolist(), scored.condition.tolist())):
        j = humans.lookup(it)
        if j is not None:
            xs, ys = points[m][cond]
            xs.append(j.share_correct)
            ys.append(share[i])
    kinds = dict(zip(scored.model.tolist(), scored.kind.tolist()))
    # Trained models first: the baseline's panel is the least interesting one.
    models = sorted(points, key=lambda m: kinds[m] == "unigram")[:max_models]
    if not models:
        return False
    ceiling = bool(results is not None and results.ceiling)
    fig, axes = subplots(1, len(models) + ceiling, figsize=(4 * (len(models) + ceiling), 4), squeeze=False)
    for ax, m in zip(axes[0], models):
        for cond in sorted(points[m]):
            xs, ys = points[m][cond]
            ax.scatter(xs, ys, s=6, alpha=0.5, label=cond)
        ax.plot([0, 1], [0, 1], color="grey", lw=0.6, ls=":")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("humans: share choosing the correct form")
        ax.set_title(m, fontsize=8)
        ax.legend(fontsize=7, loc="lower right")
    axes[0][0].set_ylabel("model: P(correct) / (P(correct) + P(wrong))")
    if ceiling:
        _ceiling_panel(axes[0][-1], results, models)
    save_png(fig, path)
    return True


def _ceiling_panel(ax, results: Results, models: Sequence[str]) -> None:
    """Pearson r of each model with the rater share, one cluster of bars per condition,
    and the condition's noise ceiling as a labelled line over its cluster with its 95%
    interval as a band."""
    r = {(a.model, a.condition): a.pearson for a in results.human_agreement}
    conds = [c for c in results.conditions if c in results.ceiling]
    width = 0.8 / max(len(models), 1)
    for j, m in enumerate(models):
        xs = [i + (j - (len(models) - 1) / 2) * width for i in range(len(conds))]
        ax.bar(xs, [r.get((m, c), float("nan")) for c in conds], width=width, label=m[:24])
    for i, c in enumerate(conds):
        rel = results.ceiling[c]
        ax.fill_between([i - 0.45, i + 0.45], *rel.ceiling_ci, color="grey", alpha=0.25, lw=0, zorder=0)
        ax.hlines(rel.ceiling, i - 0.45, i + 0.45, color="black", ls="--", lw=1)
        ax.annotate(f"noise ceiling {rel.ceiling:.2f}\n[{rel.ceiling_ci[0]:.2f}, {rel.ceiling_ci[1]:.2f}]",
                    (i, min(rel.ceiling_ci[1], 1.0)), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(conds)), conds)
    ax.set_ylim(min([0.0] + [v for v in r.values() if v == v]) - 0.05, 1.45)  # v == v: not NaN
    ax.set_yticks([t / 5 for t in range(-5, 6) if t / 5 >= ax.get_ylim()[0]])  # r runs to 1; the rest is labels
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_ylabel("Pearson r with the rater share")
    ax.set_title("correlation with humans and the noise ceiling", fontsize=8)
    ax.legend(fontsize=7, loc="upper right")  # above the ceilings (at most 1, plus their labels)
