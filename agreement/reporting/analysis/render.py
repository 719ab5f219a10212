"""Writes an :class:`~agreement.reporting.analysis.run.Analysis`: ``analysis.json``,
``analysis.md`` and the PNGs (``ceiling.png``: every model's correlation with the
human share, with its interval, against the panel's noise ceiling band;
``forest.png``: the mixed model's fixed effects with their intervals)."""
from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

from agreement.reporting.analysis.mixed import attractor_effects
from agreement.reporting.analysis.run import Analysis
from agreement.reporting.png import save_png, subplots
from agreement.reporting.stats import N_BOOT
from formats.files import atomic_write_text


def _clean(v):
    """JSON-safe: dataclasses to dicts, NaN/inf to null."""
    if dataclasses.is_dataclass(v):
        return {f.name: _clean(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _paired(p) -> dict:
    """analysis.json's record of a paired comparison (its bootstrap fields)."""
    return {"model_a": p.model_a, "model_b": p.model_b, "rows": p.rows, "items": p.items,
            "accuracy_a": p.accuracy_a, "accuracy_b": p.accuracy_b, "diff": p.diff, "ci": p.ci,
            "p_boot": p.p_boot, "mcnemar_p": p.mcnemar_p}


def _graded(g) -> dict:
    """analysis.json's record of a model against the raters (the graded tier's fields)."""
    return {"model": g.model, "condition": g.condition, "n": g.n, "pearson": g.pearson,
            "pearson_ci": g.pearson_ci, "spearman": g.spearman, "spearman_ci": g.spearman_ci,
            "point_biserial": g.point_biserial, "point_biserial_p": g.point_biserial_p}


def to_json(result: Analysis) -> str:
    out = _clean(dataclasses.replace(result, results=None))
    del out["results"]   # the counts behind ``accuracy``, not a section of analysis.json
    out["paired"] = _clean([_paired(p) for p in result.paired])
    for h, record in zip(result.humans, out["humans"]):
        record["models"] = _clean([_graded(g) for g in h.models])
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _f(x: float, d: int = 3) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{d}f}"


def _ci(ci, d: int = 3) -> str:
    return f"[{_f(ci[0], d)}, {_f(ci[1], d)}]"


def _humans_md(result: Analysis) -> list[str]:
    out = ["## Graded comparison with humans", "",
           "Correlation of each model's P(correct)/(P(correct)+P(wrong)) with the share of raters "
           "choosing the correct form, 95% item-bootstrap intervals; the noise ceiling is "
           "sqrt(split-half reliability, Spearman-Brown corrected) of the rater panel.", "",
           "| condition | model | n | Pearson r | Spearman rho | point-biserial |", "|---|---|---|---|---|---|"]
    for h in result.humans:
        for g in h.models:
            out.append(f"| {h.condition} | {g.model} | {g.n} | {_f(g.pearson)} {_ci(g.pearson_ci)} | "
                       f"{_f(g.spearman)} {_ci(g.spearman_ci)} | {_f(g.point_biserial)} "
                       f"(p {g.point_biserial_p:.2g}) |")
    out += ["", "| condition | judged items | no raters | raters/item | human accuracy | correlation | "
            "split-half r | reliability | noise ceiling |", "|---|---|---|---|---|---|---|---|---|"]
    for h in result.humans:
        for r in h.reliability:
            out.append(f"| {h.condition} | {r.n_items} | {h.unjudged_items} (+{r.excluded} with one rater) | "
                       f"{_f(r.mean_raters, 1)} | {100 * h.human_accuracy:.1f} | {r.method} | "
                       f"{_f(r.split_half)} | {_f(r.reliability)} {_ci(r.reliability_ci)} | "
                       f"{_f(r.ceiling)} {_ci(r.ceiling_ci)} |")
    return out + [""]


def _mixed_md(result: Analysis) -> list[str]:
    fit = result.mixed
    out = ["## Mixed-effects logistic model", "",
           f"`{fit.formula}`, {fit.n_rows} rows, {fit.n_items} items, {fit.n_constructions} constructions; "
           "estimates: posterior means from statsmodels' BinomialBayesMixedGLM (mean-field variational "
           "Bayes, the one logistic GLMM in statsmodels with crossed random intercepts); fixed-effect "
           "95% intervals: estimate +/- 1.96 sd from the Laplace approximation at those estimates "
           "(inverse Hessian over fixed and random effects, as lme4's vcov), because mean-field VB's "
           "own sds leave out the fixed effects' correlation with the random effects and run narrow "
           "(in simulation they held 74-81% of true coefficients, these 92-98%; docs/method.md §9). "
           "Random-effect sds: VB's intervals. "
           "Log-odds scale; the intercept is at the mean of the other terms.", "",
           "| term | estimate | 95% interval | sign |", "|---|---|---|---|"]
    out += [f"| {c.term} | {_f(c.estimate)} | {_ci((c.lo, c.hi))} | {c.sign} |" for c in fit.fixed]
    out += [f"| sd of {c.term} intercepts | {_f(c.estimate)} | {_ci((c.lo, c.hi))} | |" for c in fit.random_sd]
    out += [f"\nLeft out: {'; '.join(fit.dropped)}." if fit.dropped else "", "", "Attractor effect per model "
            "(log-odds per attractor): " + "; ".join(f"{m} {_f(c.estimate)} {_ci((c.lo, c.hi))} ({c.sign})"
                                                   for m, c in attractor_effects(fit).items()), ""]
    return out


def _p_boot(p: float) -> str:
    # no replicate on the other side of 0: the bootstrap can only bound p
    return f"< {1 / N_BOOT:.1g}" if p == 0 else f"{p:.3g}"


def _paired_md(result: Analysis) -> list[str]:
    out = ["## Paired comparisons (items as the bootstrap unit)", "",
           "| A | B | rows | items | acc A | acc B | A - B | 95% interval | p (bootstrap) | p (McNemar, rows) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    out += [f"| {p.model_a} | {p.model_b} | {p.rows} | {p.items} | {100 * p.accuracy_a:.1f} | "
            f"{100 * p.accuracy_b:.1f} | {100 * p.diff:+.1f} | [{100 * p.ci[0]:+.1f}, {100 * p.ci[1]:+.1f}] | "
            f"{_p_boot(p.p_boot)} | {p.mcnemar_p:.3g} |" for p in result.paired]
    return out + [""]


def _rest_md(result: Analysis) -> list[str]:
    out = []
    if result.systematicity:
        out += ["## Systematicity over target lemmas (EW / MW, %)", "",
                "| model | construction | items | K | accuracy (originals) | swap accuracy | EW | MW |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {s.model} | {s.construction} | {s.items} | {s.k_min}-{s.k_max} | {100 * s.accuracy:.1f} | "
                f"{100 * s.swap_accuracy:.1f} | {100 * s.ew:.1f} | {100 * s.mw:.1f} |" for s in result.systematicity]
        out.append("")
    out += ["## Challenge subsets", ""]
    for c in result.challenge:
        if c.skipped:
            out.append(f"- {c.name}: skipped ({c.skipped})")
            continue
        out.append(f"- {c.name} ({c.rule}): {c.size} rows; " + "; ".join(
            f"{s.model} {100 * s.accuracy:.1f}% {_ci([100 * x for x in s.ci], 1)} (n={s.n})" for s in c.scores))
    return out + [""]


def to_markdown(result: Analysis) -> str:
    out = ["# agree analyze", "", f"{result.rows} scored rows from {', '.join(result.sources)}; "
           f"models: {', '.join(result.models)}.", ""]
    out += [f"- {n}" for n in result.notes] + ([""] if result.notes else [])
    if result.humans:
        out += _humans_md(result)
    if result.mixed is not None:
        out += _mixed_md(result)
    if result.paired:
        out += _paired_md(result)
    out += _rest_md(result)
    return "\n".join(out)


def plot_ceiling(result: Analysis, path: str | os.PathLike) -> None:
    """Spearman rho of each model with the human share (bars, CI whiskers), per
    condition, with the Spearman noise ceiling as a line and its interval as a band."""
    fig, axes = subplots(1, len(result.humans), figsize=(4.5 * len(result.humans), 3.8), squeeze=False)
    for ax, h in zip(axes[0], result.humans):
        rel = next(r for r in h.reliability if r.method == "spearman")
        xs = range(len(h.models))
        vals = [g.spearman for g in h.models]
        err = [[v - g.spearman_ci[0] for v, g in zip(vals, h.models)],
               [g.spearman_ci[1] - v for v, g in zip(vals, h.models)]]
        ax.bar(xs, vals, yerr=err, capsize=4, color="#4c72b0")
        if math.isfinite(rel.ceiling):
            ax.axhspan(rel.ceiling_ci[0], rel.ceiling_ci[1], color="grey", alpha=0.25)
            ax.axhline(rel.ceiling, color="black", ls="--", label=f"noise ceiling {rel.ceiling:.2f}")
            ax.legend(loc="lower right", fontsize=8)
        ax.set_xticks(list(xs), [g.model[:18] for g in h.models], rotation=20, fontsize=8)
        ax.set_ylim(min(0.0, min(vals + [0.0]) - 0.1), 1.0)
        ax.set_title(f"{h.condition} ({h.judged_items} items)")
        ax.set_ylabel("Spearman rho with human share")
    fig.tight_layout()
    save_png(fig, path)


def plot_forest(result: Analysis, path: str | os.PathLike) -> None:
    """The mixed model's fixed effects (intercept left out) with 95% intervals."""
    terms = [c for c in result.mixed.fixed if c.term != "intercept"]
    fig, ax = subplots(figsize=(6.5, 0.45 * len(terms) + 1.2))
    ys = list(range(len(terms)))[::-1]
    ax.errorbar([c.estimate for c in terms], ys, xerr=[[c.estimate - c.lo for c in terms],
                                                      [c.hi - c.estimate for c in terms]],
                fmt="o", capsize=3, color="#4c72b0")
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(ys, [c.term[:40] for c in terms], fontsize=8)
    ax.set_xlabel("log-odds of a correct choice (95% interval)")
    fig.tight_layout()
    save_png(fig, path)


def write_analysis(result: Analysis, directory: str | os.PathLike) -> list[str]:
    """Write the JSON, markdown and PNGs into ``directory``; returns the file names."""
    d = Path(directory)
    atomic_write_text(d / "analysis.json", to_json(result))
    atomic_write_text(d / "analysis.md", to_markdown(result))
    files = ["analysis.json", "analysis.md"]
    if result.humans and any(h.models for h in result.humans):
        plot_ceiling(result, d / "ceiling.png")
        files.append("ceiling.png")
    if result.mixed is not None:
        plot_forest(result, d / "forest.png")
        files.append("forest.png")
    return files
