"""summary.json of ``agree score``: the JSON view of the one :class:`~agreement.reporting.results.Results`
(percent, rounded to 4 places), which the markdown (:mod:`agreement.reporting.summary_md`) and the
bar and line plots (:mod:`agreement.reporting.plots`) print from, so every file shows the same rounded
figure; :mod:`agreement.reporting.score_report` writes the files.

Every figure is an accuracy in percent over the *decidable* items: an item a model
scores as a tie (both forms ``<unk>``, say) is undecidable, counted apart in every
row (``undecidable``) and per model, never as wrong. A *group* (several models of one
kind, e.g. five seeds) is reported as the mean over its models with the sample
standard deviation between them; its 95% interval is a bootstrap over items of the
per-item mean over the group's models. Unigram models (and the paper's ``freq``
column) are the baseline. Humans are one more row: mean share of raters choosing the
correct form, on the items that have judgments.
"""
from __future__ import annotations

import json
import math

from agreement.reporting.results import ModelRecord, Results
from agreement.reporting.robustness import perturbed, robustness_table
from formats.published import PublishedFigures


def _pct(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(100 * x, 4)


def _round(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


def summary_dict(results: Results) -> dict:
    """The results as summary.json's JSON-able dict (percent, rounded to 4 places)."""
    tests = [{"model_a": t.model_a, "model_b": t.model_b, "condition": t.condition, "n": t.rows,
              "accuracy_a": _pct(t.accuracy_a), "accuracy_b": _pct(t.accuracy_b), "only_a": t.only_a,
              "only_b": t.only_b, "p_value": t.mcnemar_p} for t in results.paired_tests]
    agreement = [{"model": a.model, "condition": a.condition, "n": a.n, "pearson": _round(a.pearson),
                  "spearman": _round(a.spearman), "majority_n": a.majority_n,
                  "majority_match": _pct(a.majority_match)} for a in results.human_agreement]
    h = results.humans
    human = None if h is None else {"judgments": h.judgments, "matched_items": h.matched_items,
                                    "rows": [c.as_dict() for c in h.cells]}
    out = {"conditions": list(results.conditions), "models": [_model(m) for m in results.models],
           "groups": [dict(g.__dict__, models=list(g.models)) for g in results.groups],
           "accuracy": [c.as_dict() for c in results.cells], "humans": human, "paired_tests": tests,
           "human_agreement": agreement, "bootstrap": {"resamples": results.n_boot, "level": 0.95}}
    if results.ceiling:
        out["noise_ceiling"] = {cond: {"method": r.method, "items": r.n_items, "excluded": r.excluded,
                                       "reliability": _round(r.reliability),
                                       "reliability_ci": [_round(x) for x in r.reliability_ci],
                                       "ceiling": _round(r.ceiling), "ceiling_ci": [_round(x) for x in r.ceiling_ci]}
                                for cond, r in results.ceiling.items()}
    if results.testsets is not None:
        out["testsets"] = list(results.testsets)
    # method, reader notes and per-paradigm figures from elsewhere (formats.published)
    extras = {"method": results.method, "notes": list(results.notes) or None,
              "humans": _paradigm_humans(results.paradigm_humans), "reference": _reference(results.reference),
              "scoring": {m: dict(c) for m, c in results.conventions.items()} or None,
              "syntaxgym": [p.as_dict() for p in results.predictions] or None}
    out.update({k: v for k, v in extras.items() if v is not None})
    if perturbed(results):
        out["robustness"] = robustness_table(results)
    return out


def _model(m: ModelRecord) -> dict:
    """A model's entry; ``methods`` (items by the method they got) only when the results have it."""
    return {k: v for k, v in m.__dict__.items() if not (k == "methods" and v is None)}


def _paradigm_humans(figures: PublishedFigures | None) -> dict | None:
    """BLiMP's per-paradigm human shares in the place of the humans' cells."""
    if figures is None:
        return None
    return {"judgments": figures.judgments, "matched_items": 0, "matched_paradigms": figures.matched_paradigms,
            "per_paradigm": True, "source": figures.source, "rows": [r.as_dict() for r in figures.rows]}


def _reference(figures: PublishedFigures | None) -> dict | None:
    if figures is None:
        return None
    return {"source": figures.source, "labels": list(figures.labels), "rows": [r.as_dict() for r in figures.rows]}


def dumps(summary: dict) -> str:
    """summary.json text: stable key order, NaN written as null."""
    return json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
