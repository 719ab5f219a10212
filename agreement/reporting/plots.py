"""The ``agree score`` plot of models against humans (matplotlib, Agg backend: no display
needed): per item, the scored rows and judgments; its noise-ceiling panel, the results'
correlations and ceiling, so it never recomputes a figure differently from the tables.
The two plots every score call draws (by construction, by attractors) are in
:mod:`agreement.reporting.accuracy_plots`.
"""
from __future__ import annotations

import os
from collections import defaultdict
from typing import Sequence

from agreement.reporting.humans import HumanIndex
from agreement.reporting.results import Results
from agreement.reporting.png import save_png, subplots
from formats.scored import ScoredTable


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
