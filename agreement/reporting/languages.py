"""Accuracy per language (issue 34's "scored, every language"): each language's scored
rows by model, condition and relation x feature, with intervals; one markdown table per
language, one TSV of every figure, and one plot of every language.

A language's rows are one :class:`~formats.scored.ScoredTable` per model label (the
unigram baseline on all items, a neural model on a sample of them; the baseline
restricted to the sample is a label of its own, :func:`on_rows_of`). Intervals: 95%
Wilson over the original items (each an independent sentence); over nonce variants, a
percentile bootstrap that resamples original items with all their variants
(:func:`agreement.reporting.stats.cluster_bootstrap_ci`): the nine variants of one
sentence share its structure and are not nine independent trials.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from agreement.reporting.png import colours, save_png, subplots
from agreement.reporting.stats import cluster_bootstrap_ci, wilson
from agreement.reporting.summary_md import md_table
from formats.scored import ScoredTable

CONDITIONS = ("original", "nonce")
#: the cell of a language's every row
ALL = "all"
#: the columns of languages.tsv (:func:`write_figures`)
COLUMNS = ("lang", "cell", "model", "condition", "right", "decidable", "undecidable", "accuracy", "ci_low",
           "ci_high")


@dataclass(frozen=True)
class Figure:
    """One model's accuracy in one cell of one language: ``cell`` is ``all`` or a
    relation item's construction (``subj-verb Number``); ``right`` of ``n`` decidable
    rows, ``ties`` undecidable ones; ``low``/``high``: the 95% interval in %."""
    lang: str
    cell: str
    model: str
    condition: str
    right: int
    n: int
    ties: int
    low: float | None
    high: float | None

    @property
    def pct(self) -> float | None:
        return 100.0 * self.right / self.n if self.n else None


def on_rows_of(table: ScoredTable, other: ScoredTable) -> ScoredTable:
    """The rows of ``table`` whose item and variant ``other`` also scored (a baseline on a
    sampled model's items)."""
    keys = lambda t: np.array([f"{i}\x1f{v}" for i, v in zip(t.item_id.tolist(), t.variant.tolist())])  # noqa: E731
    return table.subset(np.isin(keys(table), keys(other)))


def language_figures(lang: str, tables: Mapping[str, ScoredTable], rng: np.random.Generator) -> list[Figure]:
    """Every figure of one language: per model label (in the order given), condition and
    cell (``all`` first, then the constructions in sorted order)."""
    out = []
    for model, t in tables.items():
        cond, label = t.condition, cell_labels(t)
        for c in CONDITIONS:
            for cell in [ALL, *sorted(set(label[cond == c].tolist()))]:
                mask = (cond == c) & ((label == cell) if cell != ALL else True)
                out.append(_figure(lang, cell, model, c, t.subset(mask), rng))
    return out


def cell_labels(t: ScoredTable) -> np.ndarray:
    """Per row: ``relation feature`` for a relation item (a release's construction also
    names the language, which a language's own table need not repeat), else the
    construction with its direction."""
    label = t.construction_label.copy()
    rel = t.relation != ""
    label[rel] = np.char.add(np.char.add(t.relation[rel].astype(str), " "), t.feature[rel].astype(str)).astype(object)
    return label


def _figure(lang: str, cell: str, model: str, condition: str, t: ScoredTable, rng) -> Figure:
    decided = ~t.undecidable
    right, n = int((t.correct & decided).sum()), int(decided.sum())
    if not n:
        return Figure(lang, cell, model, condition, 0, 0, len(t), None, None)
    if condition == "original":
        lo, hi = wilson(right, n)
    else:   # variants of one sentence resampled together
        _, item = np.unique(t.item_id[decided].astype(str), return_inverse=True)
        lo, hi = cluster_bootstrap_ci(t.correct[decided].astype(float), item, rng)
    return Figure(lang, cell, model, condition, right, n, len(t) - n, round(100 * lo, 2), round(100 * hi, 2))


def write_figures(path: str | os.PathLike, figures: Sequence[Figure]) -> int:
    """languages.tsv: one row per figure (:data:`COLUMNS`; accuracy and bounds in %)."""
    num = lambda x: "" if x is None else f"{x:.2f}"  # noqa: E731
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(COLUMNS) + "\n")
        for f in figures:
            fh.write("\t".join([f.lang, f.cell, f.model, f.condition, str(f.right), str(f.n), str(f.ties),
                                num(f.pct), num(f.low), num(f.high)]) + "\n")
    return len(figures)


def _fmt(f: Figure | None, ci: bool = True) -> str:
    if f is None or f.pct is None:
        return "-"
    return f"{f.pct:.1f}" + (f" [{f.low:.0f}, {f.high:.0f}]" if ci else "")


def language_table(figures: Sequence[Figure], models: Sequence[str]) -> list[str]:
    """One language's markdown table: a row per cell (``all`` first), per model its
    original and nonce accuracy with intervals, and the pairs each model scored."""
    at = {(f.cell, f.model, f.condition): f for f in figures}
    cells = list(dict.fromkeys(f.cell for f in figures))
    header = ["cell"] + [f"{m} {c}" for m in models for c in CONDITIONS] + [f"pairs: {m}" for m in models]
    rows = []
    for cell in cells:
        row = [cell] + [_fmt(at.get((cell, m, c))) for m in models for c in CONDITIONS]
        row += [" / ".join(str(_pairs(at.get((cell, m, c)))) for c in CONDITIONS) for m in models]
        rows.append(row)
    return md_table(header, rows)


def _pairs(f: Figure | None) -> int:
    return 0 if f is None else f.n + f.ties


def plot_languages(figures: Sequence[Figure], path: str | os.PathLike, *, model: str, baseline: str,
                   names: Mapping[str, str] | None = None) -> list[str]:
    """One row per language, sorted by ``model``'s accuracy on original items (best at
    the top): ``model`` and ``baseline`` on original and on nonce items, each with its
    95% interval; returns the languages in the order drawn."""
    at = {(f.lang, f.model, f.condition): f for f in figures if f.cell == ALL}
    langs = sorted({f.lang for f in figures if (f.lang, model, "original") in at
                    and at[(f.lang, model, "original")].pct is not None},
                   key=lambda g: (-at[(g, model, "original")].pct, g))
    series = [(model, "original", "o", 0), (model, "nonce", "s", 1), (baseline, "original", "o", 2),
              (baseline, "nonce", "s", 3)]
    colour = colours()
    fig, ax = subplots(figsize=(7.5, 0.24 * len(langs) + 1.6))
    for k, (m, cond, marker, c) in enumerate(series):
        pts = [(i, at.get((g, m, cond))) for i, g in enumerate(langs)]
        pts = [(i, f) for i, f in pts if f is not None and f.pct is not None]
        if not pts:
            continue
        ys = [i + (k - 1.5) * 0.17 for i, _ in pts]
        xs = [f.pct for _, f in pts]
        err = [[max(f.pct - f.low, 0) for _, f in pts], [max(f.high - f.pct, 0) for _, f in pts]]
        ax.errorbar(xs, ys, xerr=err, fmt=marker, ms=3.5 if m == model else 2.5, color=colour[c % len(colour)],
                    elinewidth=0.7, capsize=0, label=f"{m}, {cond}", alpha=1.0 if m == model else 0.75)
    label = (lambda g: f"{(names or {}).get(g, g)} ({g})") if names else (lambda g: g)
    ax.set_yticks(range(len(langs)), [label(g) for g in langs], fontsize=7)
    ax.set_ylim(len(langs) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.axvline(50, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("accuracy (%, decidable pairs; 95% intervals)")
    ax.legend(fontsize=7, loc="lower left")
    ax.grid(axis="x", lw=0.3, alpha=0.5)
    save_png(fig, path)
    return langs
