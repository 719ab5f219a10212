"""Robustness curves: agreement accuracy against perturbation severity.

Input: the results of scored items (:class:`agreement.reporting.results.Results`, per-model
counts by condition) whose ``perturbation`` is a label written by ``agree perturb``:
``[BASE+]ASPECT[@CONDITION]:SEVERITY`` (``qwerty@nouns:0.2``, ``swap:0.3``,
``semantic:0.4``, ``nonce+qwerty:0.1``). Unperturbed items scored beside them
(``original``; ``nonce`` variants) give each curve its starting point, at the
aspect's identity severity (0 for noise, cosine 1 for ``semantic``).

Table columns (one row per curve point and model):

============ ================================================================
aspect       ``qwerty``, ``semantic`` ...
pos_group    the condition after ``@``: the POS group for word noise (``nouns``,
             ``random~nouns`` = random control matched to nouns, ``verbs/end``),
             the mode for articles/marks; ``""`` when none
base         what was perturbed: ``original`` or ``nonce``
severity     the severity (float); the identity severity for the starting point
model        the model name
perturbation the label the row aggregates (``original`` for the starting point)
n            decidable items scored (a tie is undecidable: not in n, as in summary.md)
accuracy     % of the n items whose correct form is strictly more probable
ci_low/high  95% Wilson score interval of the accuracy, in % (agreement.reporting.stats.wilson)
undecidable  items the model could not decide (both forms equally probable)
============ ================================================================
"""
from __future__ import annotations

import math
import os
from collections import defaultdict

from agreement.reporting.png import colours as colour_cycle, save_png, subplots
from agreement.reporting.results import Count, Results
from agreement.reporting.stats import wilson
from nonce.errors import NonceError
from nonce.perturb import get_aspect


def parse_perturbation(label: str) -> tuple[str, str, str, float] | None:
    """``(base, aspect, condition, severity)`` of a perturbation label, None for
    ``original``/``nonce``/anything without ``:SEVERITY``."""
    if not label or ":" not in label:
        return None
    base, _, rest = label.rpartition("+")
    head, _, severity = rest.rpartition(":")
    aspect, _, condition = head.partition("@")
    try:
        value = float(severity)
    except ValueError:
        return None
    return base or "original", aspect, condition, value


def identity_severity(aspect: str) -> float:
    """Severity at which an aspect leaves items unchanged (0, or 1 for cosine-valued ones)."""
    try:
        return float(get_aspect(aspect).identity_severity)
    except NonceError:  # an aspect this checkout does not know: noise-like
        return 0.0


def _row(aspect, group, base, severity, model, label, count: Count) -> dict:
    n, k = count.n, count.right
    lo, hi = wilson(k, n)
    return {"aspect": aspect, "pos_group": group, "base": base, "severity": float(severity),
            "model": model, "perturbation": label, "n": n, "accuracy": 100.0 * k / n if n else 0.0,
            "ci_low": 100.0 * lo, "ci_high": 100.0 * hi, "undecidable": count.ties}


def perturbed(results: Results) -> bool:
    """Whether any condition is a perturbation with a severity (``ASPECT:SEVERITY``): the
    report then has robustness rows, robustness.tsv and robustness.png."""
    return any(":" in c for c in results.conditions)


def robustness_table(results: Results) -> list[dict]:
    """One row per (aspect, pos_group, base, severity, model); see the module docstring."""
    points: dict[tuple, Count] = {}
    plain: dict[tuple[str, str], Count] = {}  # (base, model) -> unperturbed outcomes
    for (model, cond, by, _), count in results.counts.items():
        if by != "all":
            continue
        parsed = parse_perturbation(cond)
        if parsed is None:
            plain[(cond, model)] = count
        else:
            base, aspect, group, severity = parsed
            points[(aspect, group, base, severity, model, cond)] = count
    rows = [_row(*key, count) for key, count in points.items()]
    curves = dict.fromkeys((a, g, b, m) for a, g, b, _, m, _ in points)
    for aspect, group, base, model in curves:
        if (base, model) in plain:
            rows.append(_row(aspect, group, base, identity_severity(aspect), model, base,
                             plain[(base, model)]))
    rows.sort(key=lambda r: (r["aspect"], r["pos_group"], r["base"], r["model"], r["severity"]))
    return rows


def write_robustness_tsv(table: list[dict], path: str | os.PathLike) -> None:
    """The table as TSV (header = the row keys; floats with 4 decimals)."""
    keys = list(table[0]) if table else ["aspect", "pos_group", "base", "severity", "model",
                                          "perturbation", "n", "accuracy", "ci_low", "ci_high", "undecidable"]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(keys) + "\n")
        for r in table:
            fh.write("\t".join(f"{r[k]:.4f}" if isinstance(r[k], float) else str(r[k]) for k in keys) + "\n")


def _axis_label(aspect: str) -> str:
    try:
        return get_aspect(aspect).axis_label
    except NonceError:
        return "severity"


def plot_robustness(table: list[dict], png_path: str | os.PathLike) -> None:
    """Accuracy (%) against severity with 95% intervals: one panel per aspect (and
    base, when nonce items were perturbed too); colour = POS group / condition,
    line style = model; cosine-valued aspects run from 1 (left) down."""
    panels = sorted({(r["aspect"], r["base"]) for r in table})
    groups = sorted({r["pos_group"] for r in table})
    models = sorted({r["model"] for r in table})
    colours = colour_cycle()
    styles = ("-", "--", ":", "-.")
    ncols = min(3, max(1, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig, axes = subplots(nrows, ncols, figsize=(5.5 * ncols, 4 * nrows), squeeze=False)
    for ax, (aspect, base) in zip(axes.flat, panels):
        lines = defaultdict(list)
        for r in table:
            if (r["aspect"], r["base"]) == (aspect, base):
                lines[(r["pos_group"], r["model"])].append(r)
        for (group, model), rows in sorted(lines.items()):
            rows.sort(key=lambda r: r["severity"])
            err = [[r["accuracy"] - r["ci_low"] for r in rows], [r["ci_high"] - r["accuracy"] for r in rows]]
            ax.errorbar([r["severity"] for r in rows], [r["accuracy"] for r in rows], yerr=err,
                        color=colours[groups.index(group) % len(colours)],
                        ls=styles[models.index(model) % len(styles)], marker="o", ms=3, lw=1.2,
                        capsize=2, elinewidth=0.6, label=" ".join(p for p in (model, group) if p))
        if identity_severity(aspect) > 0:
            ax.invert_xaxis()  # similarity falls as the perturbation grows
        ax.axhline(50, color="grey", lw=0.6, ls=":")
        ax.set_ylim(0, 100)
        ax.set_title(aspect if base == "original" else f"{aspect} (on {base} items)")
        ax.set_xlabel(_axis_label(aspect))
        ax.set_ylabel("accuracy (%)")
        ax.legend(fontsize=7, loc="lower left")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if not panels:
        axes.flat[0].text(0.5, 0.5, "no perturbed items", ha="center", va="center")
    save_png(fig, png_path, tight=False)
