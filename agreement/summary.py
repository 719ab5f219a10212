"""The report of ``agree score``: ``summary.json``, ``summary.md`` and the stdout table.

Every figure is an accuracy in percent over items. A *group* (several models of one
kind, e.g. five seeds) is reported as the mean over its models with the sample
standard deviation between them; its 95% interval is a bootstrap over items of the
per-item mean over the group's models. Unigram models (and the paper's ``freq``
column) are the baseline. Humans are one more row: mean share of raters choosing the
correct form, on the items that have judgments.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Sequence

import numpy as np

from agreement.humans import HumanIndex, model_human_agreement
from agreement.papertab import FREQ_MODEL
from agreement.score import ScoredItem, condition, oov_counts
from agreement.stats import N_BOOT, bootstrap_ci, mean_sd, paired_tests

HUMANS = "humans"
_BREAKDOWNS = ("all", "construction", "attractors", "testset")


def _order_conditions(names) -> list[str]:
    fixed = [c for c in ("original", "nonce") if c in names]
    return fixed + sorted(n for n in names if n not in fixed)


def _cell(key: tuple, item, by: str):
    """The breakdown value of an item; ``key`` is ``ScoredItem.key`` (test set first)."""
    if by == "all":
        return None
    return {"construction": item.construction, "attractors": item.attractors, "testset": key[0]}[by]


def _pct(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(100 * x, 4)


def build_summary(scored: Sequence[ScoredItem], *, humans: HumanIndex | None = None,
                  rng: np.random.Generator, n_boot: int = N_BOOT) -> dict:
    """All tables as one JSON-able dict (see the module docstring for the figures)."""
    models: dict[str, dict] = {}
    for s in scored:
        models.setdefault(s.model, {"name": s.model, "group": s.group, "kind": s.kind})
    for name, c in oov_counts(scored).items():
        models[name].update(c)
        if models[name]["kind"] == "paper-output" or name == FREQ_MODEL:
            models[name]["oov_items"] = None  # released outputs: the vocabulary is unknown
    groups: dict[str, dict] = {}
    for m in models.values():
        g = groups.setdefault(m["group"], {"group": m["group"], "kind": m["kind"], "models": []})
        g["models"].append(m["name"])
        g["baseline"] = m["kind"] == "unigram"
    order = [g for g in groups.values() if g["baseline"]] + [g for g in groups.values() if not g["baseline"]]
    conditions = _order_conditions({condition(s.item) for s in scored})

    # model -> item key -> (item, right?)
    outcome: dict[str, dict] = defaultdict(dict)
    for s in scored:
        outcome[s.model][s.key] = (s.item, s.correct)
    breakdowns = _BREAKDOWNS if len({s.testset for s in scored}) > 1 else _BREAKDOWNS[:-1]
    rows = []
    for g in order:
        for by in breakdowns:
            rows += _group_rows(g, outcome, conditions, by, rng, n_boot)
    human = None
    if humans is not None:
        items = {s.key: s.item for s in scored}
        shares = {}
        for k, it in items.items():
            j = humans.lookup(it)
            if j is not None:
                shares[k] = j.share_correct
        human = {"judgments": len(humans), "matched_items": len(shares), "rows": []}
        for by in breakdowns:
            human["rows"] += _cells({k: (items[k], [v]) for k, v in shares.items()}, HUMANS, HUMANS, 1,
                                    conditions, by, rng, n_boot)
    tests = []
    for cond in conditions:
        per = {m: {k: r for k, (it, r) in outcome[m].items() if condition(it) == cond} for m in models}
        tests += [t.__dict__ for t in paired_tests(per, condition=cond)]
    agreement = []
    if humans is not None:
        for m in models:
            for cond in conditions:
                subset = [s for s in scored if s.model == m and condition(s.item) == cond]
                a = model_human_agreement(subset, humans, model=m, condition=cond)
                if a.n:
                    agreement.append(a.__dict__)
    for t in tests:
        t["accuracy_a"], t["accuracy_b"] = _pct(t["accuracy_a"]), _pct(t["accuracy_b"])
    for a in agreement:
        a["majority_match"] = _pct(a["majority_match"])
        a["pearson"], a["spearman"] = _round(a["pearson"]), _round(a["spearman"])
    return {"conditions": conditions, "models": list(models.values()), "groups": order,
            "accuracy": rows, "humans": human, "paired_tests": tests, "human_agreement": agreement,
            "bootstrap": {"resamples": n_boot, "level": 0.95}}


def _round(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


def _group_rows(g: dict, outcome, conditions, by, rng, n_boot) -> list[dict]:
    # item key -> (item, [1/0 for each model of the group that scored it])
    per_item: dict = {}
    for m in g["models"]:
        for k, (it, right) in outcome[m].items():
            per_item.setdefault(k, (it, []))[1].append(float(right))
    per_model = {m: outcome[m] for m in g["models"]}
    return _cells(per_item, g["group"], g["kind"], len(g["models"]), conditions, by, rng, n_boot,
                  per_model=per_model)


def _cells(per_item, group, kind, n_models, conditions, by, rng, n_boot, per_model=None):
    """Rows of one breakdown: per_item maps item key -> (item, [scores])."""
    cells: dict = defaultdict(list)
    for k, (it, vals) in per_item.items():
        cells[(condition(it), _cell(k, it, by))].append(k)
    out = []
    for cond in conditions:
        values = sorted({v for c, v in cells if c == cond}, key=lambda v: (v is None, v))
        for value in values:
            keys = cells[(cond, value)]
            item_means = [float(np.mean(per_item[k][1])) for k in keys]
            if per_model and len(per_model) > 1:
                accs = [np.mean([per_model[m][k][1] for k in keys if k in per_model[m]])
                        for m in per_model]
                mean, spread = mean_sd(accs)
            else:
                mean, spread = float(np.mean(item_means)), None
            lo, hi = bootstrap_ci(item_means, rng, n_boot=n_boot)
            out.append({"group": group, "kind": kind, "models": n_models, "condition": cond, "by": by,
                        "value": value, "items": len(keys), "accuracy": _pct(mean),
                        "sd": _pct(spread) if spread is not None else None,
                        "ci_low": _pct(lo), "ci_high": _pct(hi)})
    return out


# --------------------------------------------------------------------------- rendering

def _rows(summary: dict, by: str, *, humans: bool = True) -> list[dict]:
    rows = [r for r in summary["accuracy"] if r["by"] == by]
    if humans and summary.get("humans"):
        rows += [r for r in summary["humans"]["rows"] if r["by"] == by]
    return rows


def _fmt(r: dict | None, ci: bool = False) -> str:
    if r is None or r["accuracy"] is None:
        return "-"
    text = f"{r['accuracy']:.1f}"
    if r.get("sd") is not None:
        text += f" ± {r['sd']:.1f}"
    if ci and r["ci_low"] is not None:
        text += f" [{r['ci_low']:.1f}, {r['ci_high']:.1f}]"
    return text


def _labels(summary: dict) -> list[str]:
    labels = [g["group"] for g in summary["groups"]]
    return labels + ([HUMANS] if summary.get("humans") else [])


def main_table(summary: dict) -> str:
    """The stdout table (TSV): one row per group (baselines first) and humans, one
    accuracy column per condition; ``mean ± sd`` for groups of several models."""
    conds = summary["conditions"]
    index = {(r["group"], r["condition"]): r for r in _rows(summary, "all")}
    kinds = {g["group"]: (g["kind"] + (" (baseline)" if g["baseline"] else ""), len(g["models"]))
             for g in summary["groups"]}
    kinds[HUMANS] = ("humans", "-")
    lines = ["\t".join(["model", "kind", "models", *conds])]
    for label in _labels(summary):
        kind, n = kinds[label]
        lines.append("\t".join([label, kind, str(n), *(_fmt(index.get((label, c))) for c in conds)]))
    return "\n".join(lines) + "\n"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def render_markdown(summary: dict, *, testsets: Sequence[str] = (), robustness=None) -> str:
    """``summary.md``: the same figures as summary.json, as tables for people."""
    conds, labels = summary["conditions"], _labels(summary)
    out = ["# Agreement accuracy", ""]
    if testsets:
        out += ["Test sets: " + ", ".join(f"`{t}`" for t in testsets), ""]
    out += ["Accuracy in % (items where P(correct form) > P(wrong form); a tie is wrong). "
            "`a ± b`: mean and standard deviation over the models of a group. "
            f"[lo, hi]: 95% bootstrap interval over items ({summary['bootstrap']['resamples']} resamples). "
            "Baseline: unigram (the more frequent form wins). Humans: mean share of raters "
            "choosing the correct form.", ""]
    index = {(r["group"], r["condition"], r["value"]): r for r in _rows(summary, "all")}
    out += ["## Overall", ""]
    out += _md_table(["model", *conds],
                     [[label, *(_fmt(index.get((label, c, None)), ci=True) for c in conds)]
                      for label in labels])
    out += ["## Models", ""]
    out += _md_table(["model", "group", "kind", "items", "items with OOV words"],
                     [[m["name"], m["group"], m["kind"], str(m["items"]), _num(m["oov_items"], 0)]
                      for m in summary["models"]])
    for by, title in (("construction", "By construction"), ("attractors", "By number of attractors"),
                      ("testset", "By test set")):
        cells = {(r["group"], r["condition"], r["value"]): r for r in _rows(summary, by)}
        for cond in conds:
            values = sorted({v for (_, c, v) in cells if c == cond}, key=str)
            if by == "attractors":
                values = sorted(values)
            if not values:
                continue
            out += [f"## {title}: {cond}", ""]
            rows = []
            for v in values:
                n = max((cells[(g, cond, v)]["items"] for g in labels if (g, cond, v) in cells), default=0)
                rows.append([str(v), str(n), *(_fmt(cells.get((g, cond, v))) for g in labels)])
            out += _md_table([by, "items", *labels], rows)
    if summary["paired_tests"]:
        out += ["## Paired tests (exact McNemar on items both models scored)", ""]
        out += _md_table(["condition", "model A", "model B", "items", "A %", "B %", "only A right",
                          "only B right", "p"],
                         [[t["condition"], t["model_a"], t["model_b"], str(t["n"]), f"{t['accuracy_a']:.1f}",
                           f"{t['accuracy_b']:.1f}", str(t["only_a"]), str(t["only_b"]), f"{t['p_value']:.3g}"]
                          for t in summary["paired_tests"]])
    if summary.get("humans"):
        h = summary["humans"]
        out += ["## Models and humans, item by item", "",
                f"{h['judgments']} judged items in the human file; {h['matched_items']} of the scored items matched. "
                "r: Pearson correlation of the human share-correct with P(c)/(P(c)+P(w)); "
                "majority: how often the model picks the form most raters chose (rater ties left out).", ""]
        out += _md_table(["model", "condition", "items", "r", "Spearman", "majority items", "majority match %"],
                         [[a["model"], a["condition"], str(a["n"]), _num(a["pearson"]), _num(a["spearman"]),
                           str(a["majority_n"]), _num(a["majority_match"], 1)]
                          for a in summary["human_agreement"]])
    out += scoring_lines(summary.get("scoring") or {})
    if robustness:
        keys = list(robustness[0])
        out += ["## Robustness", ""]
        out += _md_table(keys, [[_num(r.get(k), 2) if isinstance(r.get(k), float) else str(r.get(k))
                                 for k in keys] for r in robustness])
    return "\n".join(out)


def collect_scoring(scorers) -> dict:
    """Model name -> its scorer's ``conventions()``: manifest.json's ``scoring`` entry."""
    return {s.name: s.conventions() for s in scorers}


def scoring_lines(scoring: dict) -> list[str]:
    """``summary.md``'s scoring section: one line per model with every convention."""
    if not scoring:
        return []
    return ["## Scoring conventions", "",
            *(f"- `{name}`: " + "; ".join(f"{k} {v}" for k, v in conv.items())
              for name, conv in scoring.items()), ""]


def _num(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def dumps(summary: dict) -> str:
    """summary.json text: stable key order, NaN written as null."""
    return json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_report(directory, scored: Sequence[ScoredItem], *, humans: HumanIndex | None,
                 rng: np.random.Generator, testsets: Sequence[str] = (), quiet: bool = True,
                 scoring: dict | None = None) -> dict:
    """Write ``summary.json``, ``summary.md`` and the PNG plots into ``directory``;
    with perturbed items (``aspect:severity``) also the robustness table and plot when
    ``agreement.robustness`` is installed. Returns the summary dict."""
    from pathlib import Path

    from agreement import plots
    from agreement.options import log

    directory = Path(directory)
    summary = build_summary(scored, humans=humans, rng=rng)
    summary["testsets"] = list(testsets)
    if scoring:
        summary["scoring"] = scoring
    plots.plot_by_construction(summary, directory / "accuracy_by_construction.png")
    plots.plot_by_attractors(summary, directory / "accuracy_by_attractors.png")
    if humans is not None:
        plots.plot_model_vs_human(scored, humans, directory / "model_vs_human.png")
    robustness = None
    if any(":" in s.item.perturbation for s in scored):
        try:
            from agreement.robustness import plot_robustness, robustness_table
        except ImportError:
            log("perturbed items found but agreement.robustness is not installed: "
                "no robustness table", quiet)
        else:
            robustness = robustness_table(list(scored))
            plot_robustness(robustness, directory / "robustness.png")
            try:
                from agreement.robustness import write_robustness_tsv
            except ImportError:
                pass
            else:
                write_robustness_tsv(robustness, directory / "robustness.tsv")
            summary["robustness"] = robustness
    (directory / "summary.json").write_text(dumps(summary), encoding="utf-8")
    (directory / "summary.md").write_text(
        render_markdown(summary, testsets=testsets, robustness=robustness), encoding="utf-8")
    return summary
