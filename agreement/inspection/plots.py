"""The PNGs of ``agree inspect`` (drawn through :mod:`agreement.reporting.png`, which
leaves out the metadata that would make the same figure differ between runs)."""
from __future__ import annotations

import os
from collections import defaultdict
from typing import Sequence

import numpy as np

from agreement.inspection.ablation import Ablation
from agreement.inspection.cases import POSITIONS
from agreement.inspection.patching import PatchRow
from agreement.inspection.probes import ProbeRow
from agreement.inspection.trajectories import OFFSETS, TrajectoryRow
from agreement.reporting.png import save_png, subplots

COLOURS = {"Sing": "tab:blue", "Plur": "tab:red"}


def plot_ablation(ab: Ablation, path: str | os.PathLike, title: str) -> None:
    """Left: every unit's effect on the ranking items (by layer); right: the top set
    against the random sets on the evaluation half."""
    fig, (left, right) = subplots(1, 2, figsize=(12, 4), gridspec_kw={"width_ratios": [3, 1]})
    by_layer = defaultdict(list)
    for layer, unit, effect in ab.ranked:
        by_layer[layer].append((unit, effect))
    offset = 0
    for layer in sorted(by_layer):
        units = sorted(by_layer[layer])
        left.scatter([offset + u for u, _ in units], [e for _, e in units], s=6, label=f"layer {layer}")
        offset += len(units) + 10
    top = set(ab.top)
    starts, offset = {}, 0
    for layer in sorted(by_layer):
        starts[layer] = offset
        offset += len(by_layer[layer]) + 10
    for layer, unit, effect in ab.ranked:
        if (layer, unit) in top:
            left.annotate(f"{layer}:{unit}", (starts[layer] + unit, effect), fontsize=8,
                          xytext=(3, -10), textcoords="offset points")
    left.axhline(0, color="grey", lw=0.5)
    left.set_xlabel("unit (layers side by side)")
    left.set_ylabel("mean change of log P(correct) - log P(wrong)")
    left.set_title(f"one unit ablated ({ab.fill}); ranking items: {ab.rank_condition}, selection half")
    left.legend(fontsize=8)
    _sets_panel(right, ab)
    fig.suptitle(title)
    save_png(fig, path)


def _sets_panel(ax, ab: Ablation) -> None:
    cond = "attractors >= 1" if any(r.condition == "attractors >= 1" for r in ab.sets) else "all"
    rows = [r for r in ab.sets if r.condition == cond]
    clean = [r for r in rows if r.kind == "clean"]
    top = [r for r in rows if r.kind == "top"]
    rand = [r.accuracy for r in rows if r.kind == "random"]
    labels, values, lo, hi = [], [], [], []
    for name, r in (("clean", clean), (f"top {len(ab.top)}", top)):
        if r:
            labels.append(name)
            values.append(r[0].accuracy)
            lo.append(max(0.0, r[0].accuracy - r[0].accuracy_lo))
            hi.append(max(0.0, r[0].accuracy_hi - r[0].accuracy))
    if rand:
        labels.append(f"random {len(ab.top)}\n({len(rand)} draws)")
        m = float(np.mean(rand))
        values.append(m)
        lo.append(max(0.0, m - float(np.percentile(rand, 2.5))))
        hi.append(max(0.0, float(np.percentile(rand, 97.5)) - m))
    ax.bar(range(len(values)), values, yerr=[lo, hi], capsize=4, color=["grey", "tab:red", "tab:blue"][:len(values)])
    ax.set_xticks(range(len(values)), labels, fontsize=8)
    ax.axhline(0.5, color="black", lw=0.5, ls=":")
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy")
    ax.set_title(f"evaluation half, {cond}", fontsize=9)


def plot_trajectories(rows: Sequence[TrajectoryRow], path: str | os.PathLike, title: str,
                      order: Sequence[tuple[int, int]] = ()) -> None:
    """One row of panels per (site, layer, unit), units in ``order`` (the ablation ranking),
    each unit's sites together: the cue-anchored and the target-anchored means."""
    rank = {u: i for i, u in enumerate(order)}
    keys = sorted({(r.site, r.layer, r.unit) for r in rows},
                  key=lambda k: (rank.get((k[1], k[2]), len(rank)), k[1], k[2], k[0] != "hidden", k[0]))
    fig, axes = subplots(len(keys), 2, figsize=(10, 2.4 * len(keys)), squeeze=False, sharey="row")
    cells = {(r.site, r.layer, r.unit, r.number, r.attractor, r.anchor, r.offset): r for r in rows}
    for k, (site, layer, unit) in enumerate(keys):
        for j, anchor in enumerate(OFFSETS):
            ax = axes[k][j]
            for number in ("Sing", "Plur"):
                for attractor, style in (("none", "-"), ("some", "--")):
                    pts = [(o, cells[(site, layer, unit, number, attractor, anchor, o)].mean)
                           for o in OFFSETS[anchor] if (site, layer, unit, number, attractor, anchor, o) in cells]
                    if pts:
                        ax.plot(*zip(*pts), style, marker="o", ms=3, color=COLOURS[number],
                                label=f"{number.lower()} subject, attractor: {attractor}")
            ax.set_xticks(OFFSETS[anchor], [_offset_label(anchor, o) for o in OFFSETS[anchor]], fontsize=8)
            ax.axhline(0, color="grey", lw=0.5)
            ax.set_title(f"{site} layer {layer} unit {unit}", fontsize=9)
            if k == 0 and j == 0:
                ax.legend(fontsize=7)
    fig.suptitle(title)
    save_png(fig, path)


def _integer_ticks(ax) -> None:
    from matplotlib.ticker import MaxNLocator  # lazy: matplotlib is loaded by subplots() first

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _offset_label(anchor: str, offset: int) -> str:
    return anchor if offset == 0 else f"{anchor}{offset:+d}"


def plot_probes(rows: Sequence[ProbeRow], path: str | os.PathLike, title: str) -> None:
    """Accuracy by layer, one line per position class, shuffled-label control dashed
    (nothing drawn without rows: a figure of no panels is no figure)."""
    sites = sorted({r.site for r in rows})
    if not sites:
        return
    fig, axes = subplots(1, len(sites), figsize=(6 * len(sites), 4), squeeze=False)
    for ax, site in zip(axes[0], sites):
        for pos in POSITIONS:
            mine = sorted((r for r in rows if r.site == site and r.position == pos), key=lambda r: r.layer)
            if not mine:
                continue
            x = [r.layer for r in mine]
            line = ax.plot(x, [r.accuracy for r in mine], marker="o", ms=3, label=pos)[0]
            ax.fill_between(x, [r.accuracy_lo for r in mine], [r.accuracy_hi for r in mine],
                            color=line.get_color(), alpha=0.15)
            ax.plot(x, [r.shuffled for r in mine], ls="--", lw=0.8, color=line.get_color())
        maj = [r.majority for r in rows if r.site == site]
        if maj:
            ax.axhline(float(np.mean(maj)), color="black", lw=0.6, ls=":", label="majority (mean)")
        ax.set_ylim(0.3, 1.02)
        _integer_ticks(ax)
        ax.set_xlabel("layer")
        ax.set_ylabel("probe accuracy (subject number)")
        ax.set_title(f"{site} (dashed: shuffled labels)", fontsize=9)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    save_png(fig, path)


def plot_patching(rows: Sequence[PatchRow], path: str | os.PathLike, title: str) -> None:
    """Per layer, the share of choices flipped (whole-layer sites); a layer x head heatmap."""
    rows = [r for r in rows if r.condition == "all"]
    layered = sorted({r.site for r in rows if r.head is None})
    heads = [r for r in rows if r.head is not None]
    n = len(layered) + (1 if heads else 0)
    fig, axes = subplots(1, n, figsize=(6 * n, 4), squeeze=False)
    for ax, site in zip(axes[0], layered):
        mine = sorted((r for r in rows if r.site == site and r.head is None and r.layer >= 0), key=lambda r: r.layer)
        x = [r.layer for r in mine]
        ax.errorbar(x, [r.share for r in mine], yerr=[[max(0.0, r.share - r.share_lo) for r in mine],
                                                      [max(0.0, r.share_hi - r.share) for r in mine]],
                    marker="o", ms=3, capsize=2)
        whole = [r for r in rows if r.site == site and r.layer == -1]
        if whole:
            ax.axhline(whole[0].share, color="grey", ls=":", label="every layer at once")
            ax.legend(fontsize=8)
        ax.set_ylim(-0.02, 1.02)
        _integer_ticks(ax)
        ax.set_xlabel("layer patched at the cue")
        ax.set_ylabel("share of choices flipped")
        ax.set_title(f"{site} (items right both ways: {mine[0].both_right if mine else 0})", fontsize=9)
    if heads:
        ax = axes[0][-1]
        L, H = max(r.layer for r in heads) + 1, max(r.head for r in heads) + 1
        grid = np.full((L, H), np.nan)
        for r in heads:
            grid[r.layer, r.head] = r.share
        im = ax.imshow(grid, aspect="auto", origin="lower", vmin=0, vmax=max(0.05, float(np.nanmax(grid))),
                       cmap="viridis")
        fig.colorbar(im, ax=ax, label="share of choices flipped")
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_title("one attention head patched at the cue", fontsize=9)
    fig.suptitle(title)
    save_png(fig, path)
