"""The report of ``agree score``: ``summary.json``, ``summary.md`` and the stdout table.

Every figure is an accuracy in percent over the *decidable* items: an item a model
scores as a tie (both forms ``<unk>``, say) is undecidable, counted apart in every
row (``undecidable``) and per model, never as wrong; ``summary.md`` warns when more
than :data:`UNDECIDABLE_WARN` of a model's items are undecidable. A *group* (several models of one
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
from formats.papertab import FREQ_MODEL
from formats.scored import ScoredItem, condition
from agreement.score import oov_counts
from agreement.stats import N_BOOT, bootstrap_ci, mean_sd, paired_tests

HUMANS = "humans"
_BREAKDOWNS = ("all", "construction", "attractors", "testset")
#: share of undecidable items above which summary.md prints a warning
UNDECIDABLE_WARN = 0.1


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
        models[name]["piece_mismatch_items"] = 0
        models[name]["undecidable_items"] = 0
        if models[name]["kind"] == "paper-output" or name == FREQ_MODEL:
            models[name]["oov_items"] = None  # released outputs: the vocabulary is unknown
    for s in scored:
        models[s.model]["piece_mismatch_items"] += int(s.pieces_differ)
    groups: dict[str, dict] = {}
    for m in models.values():
        g = groups.setdefault(m["group"], {"group": m["group"], "kind": m["kind"], "models": []})
        g["models"].append(m["name"])
        g["baseline"] = m["kind"] == "unigram"
    order = [g for g in groups.values() if g["baseline"]] + [g for g in groups.values() if not g["baseline"]]
    conditions = _order_conditions({condition(s.item) for s in scored})

    outcome, undecided = _outcomes(scored, models)
    breakdowns = _BREAKDOWNS if len({s.testset for s in scored}) > 1 else _BREAKDOWNS[:-1]
    rows = []
    for g in order:
        for by in breakdowns:
            rows += _group_rows(g, outcome, conditions, by, rng, n_boot, undecided)
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


def _outcomes(scored: Sequence[ScoredItem], models: dict) -> tuple[dict, dict]:
    """model -> item key -> (item, right?) for the decidable items, and model -> item
    key -> item for the undecidable ones (ties), counted in ``models``."""
    outcome: dict[str, dict] = defaultdict(dict)
    undecided: dict[str, dict] = defaultdict(dict)
    for s in scored:
        if s.undecidable:
            undecided[s.model][s.key] = s.item
            models[s.model]["undecidable_items"] += 1
        else:
            outcome[s.model][s.key] = (s.item, s.correct)
    return outcome, undecided


def _round(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


def _group_rows(g: dict, outcome, conditions, by, rng, n_boot, undecided=None) -> list[dict]:
    # item key -> (item, [1/0 for each model of the group that scored it])
    per_item: dict = {}
    for m in g["models"]:
        for k, (it, right) in outcome[m].items():
            per_item.setdefault(k, (it, []))[1].append(float(right))
    per_model = {m: outcome[m] for m in g["models"]}
    # (condition, cell value) -> undecidable (model, item) scores, reported beside the accuracy
    ties: dict = defaultdict(int)
    for m in g["models"]:
        for k, it in (undecided or {}).get(m, {}).items():
            ties[(condition(it), _cell(k, it, by))] += 1
    rows = _cells(per_item, g["group"], g["kind"], len(g["models"]), conditions, by, rng, n_boot,
                  per_model=per_model)
    for r in rows:
        r["undecidable"] = ties.pop((r["condition"], r["value"]), 0)
    for (cond, value), n in sorted(ties.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        # every item of the cell undecidable: no accuracy, still reported
        rows.append({"group": g["group"], "kind": g["kind"], "models": len(g["models"]), "condition": cond,
                     "by": by, "value": value, "items": 0, "accuracy": None, "sd": None,
                     "ci_low": None, "ci_high": None, "undecidable": n})
    return rows


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
                accs = [np.mean(v) for m in per_model
                        if (v := [per_model[m][k][1] for k in keys if k in per_model[m]])]
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
    if summary.get("reference"):  # published figures (formats.published), not computed here
        rows += [r for r in summary["reference"]["rows"] if r["by"] == by]
    return rows


def _fmt(r: dict | None, ci: bool = False) -> str:
    if r is None or r["accuracy"] is None:
        return "-"
    text = f"{r['accuracy']:.1f}"
    if r.get("sd") is not None:
        text += f" ± {r['sd']:.1f}"
    # published and per-paradigm human rows carry no interval (ci_low = ci_high, 0 items)
    no_interval = r.get("items") == 0 and r["ci_low"] == r["ci_high"]
    if ci and r["ci_low"] is not None and not no_interval:
        text += f" [{r['ci_low']:.1f}, {r['ci_high']:.1f}]"
    return text


def _labels(summary: dict) -> list[str]:
    labels = [g["group"] for g in summary["groups"]]
    labels += [HUMANS] if summary.get("humans") else []
    return labels + list((summary.get("reference") or {}).get("labels", []))


def main_table(summary: dict) -> str:
    """The stdout table (TSV): one row per group (baselines first) and humans, one
    accuracy column per condition; ``mean ± sd`` for groups of several models."""
    conds = summary["conditions"]
    index = {(r["group"], r["condition"]): r for r in _rows(summary, "all")}
    kinds = {g["group"]: (g["kind"] + (" (baseline)" if g["baseline"] else ""), len(g["models"]))
             for g in summary["groups"]}
    kinds[HUMANS] = ("humans", "-")
    kinds.update({label: ("published", "-") for label in (summary.get("reference") or {}).get("labels", [])})
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
    out += _method_lines(summary)
    out += _undecidable_warnings(summary)
    out += ["Accuracy in % over the decidable items (items where P(correct form) > P(wrong form); "
            "a tie is undecidable, counted apart, never wrong). "
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
    out += _md_table(["model", "group", "kind", "items", "decidable", "undecidable", "items with OOV words"],
                     [[m["name"], m["group"], m["kind"], str(m["items"]),
                       str(m["items"] - m.get("undecidable_items", 0)), str(m.get("undecidable_items", 0)),
                       _num(m["oov_items"], 0)]
                      for m in summary["models"]])
    mismatch = [m for m in summary["models"] if m.get("piece_mismatch_items")]
    if mismatch:  # subword models: such items compare products of unequal numbers of pieces
        out += ["Items whose two forms differ in piece count (still scored): " + ", ".join(
            f"{m['name']} {m['piece_mismatch_items']} of {m['items']}" for m in mismatch) + ".", ""]
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
            out += _md_table([by, "items", *labels], [_breakdown_row(cells, labels, cond, v) for v in values])
    if summary["paired_tests"]:
        out += ["## Paired tests (exact McNemar on items both models scored)", ""]
        out += _md_table(["condition", "model A", "model B", "items", "A %", "B %", "only A right",
                          "only B right", "p"],
                         [[t["condition"], t["model_a"], t["model_b"], str(t["n"]), f"{t['accuracy_a']:.1f}",
                           f"{t['accuracy_b']:.1f}", str(t["only_a"]), str(t["only_b"]), f"{t['p_value']:.3g}"]
                          for t in summary["paired_tests"]])
    if summary.get("humans") and not summary["humans"].get("per_paradigm"):
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


def _method_lines(summary: dict) -> list[str]:
    """The scoring method, skipped pairs and the sources of per-paradigm figures."""
    out = []
    method = summary.get("method")
    if method == "sentence":
        out += ["Method: sentence: natural-log P(correct sentence) > P(wrong sentence), the sum "
                "over all its words after each model's sentence-start symbol, no end symbol "
                "(BLiMP, lm-evaluation-harness `acc`).", ""]
    elif method == "target":
        out += ["Method: target: natural-log P(correct form | prefix) > P(wrong form | prefix).", ""]
    out += [f"Note: {n}" for n in summary.get("notes", [])] + ([""] if summary.get("notes") else [])
    h = summary.get("humans") or {}
    if h.get("per_paradigm"):
        out += [f"Humans: per-paradigm share of raters agreeing with the label, from `{h['source']}` "
                f"({h['matched_paradigms']} paradigms matched; no interval).", ""]
    if summary.get("reference"):
        out += [f"Columns marked (published): accuracies published in `{summary['reference']['source']}`, "
                "not computed here; their `all` row is the mean over the matched paradigms.", ""]
    return out


def _breakdown_row(cells: dict, labels: list[str], cond: str, v) -> list[str]:
    """One breakdown row: value, decidable items (+ undecidable ones), a cell per group."""
    here = [cells[(g, cond, v)] for g in labels if (g, cond, v) in cells]
    n = max((r["items"] for r in here), default=0)
    u = max((r.get("undecidable", 0) for r in here), default=0)
    return [str(v), str(n) + (f" (+{u} undecidable)" if u else ""), *(_fmt(cells.get((g, cond, v))) for g in labels)]


def _undecidable_warnings(summary: dict) -> list[str]:
    """One warning line per model with more than UNDECIDABLE_WARN of its items undecidable."""
    out = []
    for m in summary["models"]:
        n, u = m["items"], m.get("undecidable_items", 0)
        if n and u / n > UNDECIDABLE_WARN:
            out.append(f"**Warning:** {m['name']}: {u} of {n} items ({100 * u / n:.0f}%) are undecidable "
                       "(both forms scored alike, e.g. both out of its vocabulary); its accuracy covers "
                       f"the other {n - u} only.")
    return out + ([""] if out else [])


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
                 method: str | None = None, notes: Sequence[str] = (),
                 paradigm_humans: dict | None = None, reference: dict | None = None,
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
    # method, reader notes and per-paradigm figures from elsewhere (formats.published)
    if method is not None:
        summary["method"] = method
    if notes:
        summary["notes"] = list(notes)
    if paradigm_humans is not None:
        summary["humans"] = paradigm_humans
    if reference is not None:
        summary["reference"] = reference
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
