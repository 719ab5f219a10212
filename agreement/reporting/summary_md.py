"""summary.md and the stdout table of ``agree score``, rendered from the one
:class:`~agreement.reporting.results.Results` (through its JSON view, :func:`agreement.reporting.summary.summary_dict`,
so that the tables print the rounded figures summary.json holds); :func:`md_table` is every
report's one markdown table helper."""
from __future__ import annotations

from typing import Sequence

from agreement.reporting.predictions import prediction_lines
from agreement.reporting.results import HUMANS, Results
from agreement.reporting.summary import summary_dict

#: share of undecidable items above which summary.md prints a warning
UNDECIDABLE_WARN = 0.1
#: breakdowns whose markdown tables give each cell's interval (the older ones do not)
INTERVAL_BREAKDOWNS = ("relation", "feature", "method")


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


def main_table(results: Results) -> str:
    """The stdout table (TSV): one row per group (baselines first) and humans, one
    accuracy column per condition; ``mean ± sd`` for groups of several models."""
    summary = summary_dict(results)
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


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A markdown table as lines, with a blank line after it (every report's one helper)."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def render_markdown(results: Results) -> str:
    """``summary.md``: the same figures as summary.json, as tables for people."""
    summary, testsets = summary_dict(results), results.testsets or ()
    robustness = summary.get("robustness")
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
    out += _overall_md(summary) + _breakdowns_md(summary) + _paired_md(summary) + _humans_md(summary)
    out += prediction_lines(results.predictions)
    out += scoring_lines(summary.get("scoring") or {})
    if robustness:
        keys = list(robustness[0])
        out += ["## Robustness", ""]
        out += md_table(keys, [[_num(r.get(k), 2) if isinstance(r.get(k), float) else str(r.get(k))
                                for k in keys] for r in robustness])
    return "\n".join(out)


def _overall_md(summary: dict) -> list[str]:
    """The overall table and the table of models (items, undecidable, OOV, piece counts)."""
    conds, labels = summary["conditions"], _labels(summary)
    index = {(r["group"], r["condition"], r["value"]): r for r in _rows(summary, "all")}
    out = ["## Overall", ""]
    out += md_table(["model", *conds], [[label, *(_fmt(index.get((label, c, None)), ci=True) for c in conds)]
                                        for label in labels])
    out += ["## Models", ""]
    out += md_table(["model", "group", "kind", "items", "decidable", "undecidable", "items with OOV words"],
                    [[m["name"], m["group"], m["kind"], str(m["items"]),
                      str(m["items"] - m.get("undecidable_items", 0)), str(m.get("undecidable_items", 0)),
                      _num(m["oov_items"], 0)]
                     for m in summary["models"]])
    mismatch = [m for m in summary["models"] if m.get("piece_mismatch_items")]
    if mismatch:  # subword models: such items compare products of unequal numbers of pieces
        out += ["Items whose two forms differ in piece count (still scored): " + ", ".join(
            f"{m['name']} {m['piece_mismatch_items']} of {m['items']}" for m in mismatch) + ".", ""]
    methods = [m for m in summary["models"] if m.get("methods")]
    if methods:  # relation items, or a run that scored items by more than one method
        out += ["Items by the method they got: " + "; ".join(
            f"{m['name']} " + ", ".join(f"{k} {n}" for k, n in m["methods"].items()) for m in methods) + ".", ""]
    return out


def _breakdowns_md(summary: dict) -> list[str]:
    """A table per breakdown (construction, attractors, test set; relation, feature and
    method when the results have them, with intervals) and condition."""
    conds, labels, out = summary["conditions"], _labels(summary), []
    for by, title in (("construction", "By construction"), ("attractors", "By number of attractors"),
                      ("testset", "By test set"), ("relation", "By relation"), ("feature", "By feature"),
                      ("method", "By scoring method")):
        cells = {(r["group"], r["condition"], r["value"]): r for r in _rows(summary, by)}
        for cond in conds:
            values = sorted({v for (_, c, v) in cells if c == cond}, key=str)
            if by == "attractors":
                values = sorted(values)
            if not values:
                continue
            out += [f"## {title}: {cond}", ""]
            ci = by in INTERVAL_BREAKDOWNS
            out += md_table([by, "items", *labels], [_breakdown_row(cells, labels, cond, v, ci) for v in values])
    return out


def _paired_md(summary: dict) -> list[str]:
    if not summary["paired_tests"]:
        return []
    return ["## Paired tests (exact McNemar on items both models scored)", "", *md_table(
        ["condition", "model A", "model B", "items", "A %", "B %", "only A right", "only B right", "p"],
        [[t["condition"], t["model_a"], t["model_b"], str(t["n"]), f"{t['accuracy_a']:.1f}",
          f"{t['accuracy_b']:.1f}", str(t["only_a"]), str(t["only_b"]), f"{t['p_value']:.3g}"]
         for t in summary["paired_tests"]])]


def _humans_md(summary: dict) -> list[str]:
    """Models against the raters item by item, and the panel's noise ceiling."""
    h = summary.get("humans")
    if not h or h.get("per_paradigm"):
        return []
    out = ["## Models and humans, item by item", "",
           f"{h['judgments']} judged items in the human file; {h['matched_items']} of the scored items matched. "
           "r: Pearson correlation of the human share-correct with P(c)/(P(c)+P(w)); "
           "majority: how often the model picks the form most raters chose (rater ties left out).", ""]
    out += md_table(["model", "condition", "items", "r", "Spearman", "majority items", "majority match %"],
                    [[a["model"], a["condition"], str(a["n"]), _num(a["pearson"]), _num(a["spearman"]),
                      str(a["majority_n"]), _num(a["majority_match"], 1)]
                     for a in summary["human_agreement"]])
    if summary.get("noise_ceiling"):
        out += ["Noise ceiling of r (sqrt of the raters' split-half reliability, Spearman-Brown "
                "corrected; 95% interval): " + "; ".join(
                    f"{cond} {_num(c['ceiling'])} [{_num(c['ceiling_ci'][0])}, {_num(c['ceiling_ci'][1])}] "
                    f"({c['items']} items)" for cond, c in summary["noise_ceiling"].items()) + ".", ""]
    return out


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
        if any((m.get("methods") or {}).get("sentence") for m in summary["models"]):
            out += ["Items whose own `scoring` is `sentence` (the target precedes its cue, so the prefix "
                    "does not decide) are scored by whole sentence, as the sentence method scores: the sum "
                    "of the natural-log probabilities of all its words after the model's sentence-start "
                    "symbol, no end symbol. items.tsv's `method` says which each row got.", ""]
    out += [f"Note: {n}" for n in summary.get("notes", [])] + ([""] if summary.get("notes") else [])
    out += _text_lines(summary.get("scoring") or {})
    h = summary.get("humans") or {}
    if h.get("per_paradigm"):
        out += [f"Humans: per-paradigm share of raters agreeing with the label, from `{h['source']}` "
                f"({h['matched_paradigms']} paradigms matched; no interval).", ""]
    if summary.get("reference"):
        out += [f"Columns marked (published): accuracies published in `{summary['reference']['source']}`, "
                "not computed here; their `all` row is the mean over the matched paradigms.", ""]
    return out


def _text_lines(scoring: dict) -> list[str]:
    """What the subword models read (their convention), and their counted skips."""
    out = []
    read = {(c["convention"], c.get("text", "")) for c in scoring.values() if c.get("convention")}
    for name, text in sorted(read):
        out.append(f"Text read by subword models: convention `{name}`: {text}.")
    for model, c in scoring.items():
        for key, why in (("skipped_over_context", "longer than the model's context"),
                         ("skipped_unencodable", "that its tokenizer cannot encode (or empty)")):
            if c.get(key):
                out.append(f"Note: {model}: {c[key]} sequence(s) {why} skipped; their items are "
                           "undecidable.")
    return out + ([""] if out else [])


def _breakdown_row(cells: dict, labels: list[str], cond: str, v, ci: bool = False) -> list[str]:
    """One breakdown row: value, decidable items (+ undecidable ones), a cell per group
    (with its interval: ``ci``)."""
    here = [cells[(g, cond, v)] for g in labels if (g, cond, v) in cells]
    n = max((r["items"] for r in here), default=0)
    u = max((r.get("undecidable", 0) for r in here), default=0)
    return [str(v), str(n) + (f" (+{u} undecidable)" if u else ""),
            *(_fmt(cells.get((g, cond, v)), ci=ci) for g in labels)]


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
