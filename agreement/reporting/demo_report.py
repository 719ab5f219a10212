"""``report.md`` of ``agree demo``: what the models got right, in tables and one sentence.

Every figure comes from the one results model (:func:`agreement.reporting.results.build_results`)
of the scored rows ``agree score`` produced (:class:`~formats.scored.ScoredTable`, with the
items themselves: their sentences and arc directions). Accuracy is the share of items where
P(correct form) > P(wrong form) over the decidable items (a tie is undecidable, counted
apart, per model), in percent, with 95% Wilson intervals. The closing sentence is generated from the figures:
it names the ordering of the models on nonce items with attractors, the items the
paper's argument rests on (Gulordava et al. 2018, section 5).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from agreement.errors import AgreeError
from agreement.reporting.results import ATTRACTED, Count, Results, build_results
from agreement.reporting.summary_md import md_table
from formats.items import Item
from formats.scored import ScoredTable

REPORT_FILE = "report.md"
ORIGINAL, NONCE = "original", "nonce"
#: attractor counts from this value up share one row
ATTRACTOR_CAP = 3
CHANCE = 50.0


@dataclass(frozen=True)
class ModelInfo:
    """A model as the report names it.

    name: the ``model`` column of the scored items.tsv; label: shown in tables
    ("LSTM"); kind: backend kind (``unigram`` marks the baseline); detail: one line
    on its size and training (e.g. validation perplexity)."""
    name: str
    label: str
    kind: str
    detail: str = ""


@dataclass(frozen=True)
class ReportInputs:
    """What the report reads and says besides the figures.

    table: the scored rows of ``agree score``, with their items (original and nonce
    variants); score_dir: the score output directory (its PNGs are linked); models: in
    table order; setting: lines describing the run (data
    sizes, seed); commands: the equivalent CLI commands; timings: a file of step
    times to link (kept out of the report so that the same seed gives the same
    report, byte for byte)."""
    table: ScoredTable
    score_dir: Path
    models: tuple[ModelInfo, ...]
    setting: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    timings: Path | None = None


def _count(results: Results, model: str, cond: str, by: str = "all", value=None) -> Count | None:
    """A model's count in one cell, None when it decided no item there."""
    c = results.count(model, cond, by, value)
    return c if c is not None and c.n else None


def _attractor_counts(results: Results, model: str, cond: str) -> dict[int, Count]:
    """Counts by number of attractors, :data:`ATTRACTOR_CAP` and more in one row."""
    out: dict[int, Count] = {}
    for v in results.values("attractors"):
        c = results.count(model, cond, "attractors", v)
        if c is not None and c.n:
            cap = min(v, ATTRACTOR_CAP)
            out[cap] = out[cap] + c if cap in out else c
    return out


def _pct(c: Count | None) -> str:
    return "-" if c is None else f"{c.pct:.1f}"


def _with_interval(c: Count | None) -> str:
    if c is None:
        return "-"
    lo, hi = c.interval()
    return f"{c.pct:.1f} [{lo:.1f}, {hi:.1f}]"


def _conditions(results: Results) -> list[str]:
    return [c for c in results.conditions
            if any(_count(results, m.name, c) for m in results.models)]


def finding(results: Results, models: Sequence[ModelInfo]) -> str:
    """One sentence stating what the figures show, built from them (nothing fixed).

    It ranks the models on nonce items with at least one attractor (original items
    when there are no nonce ones), says whether the best non-baseline model beats
    every other model by more than the overlap of their 95% intervals, and where
    the others stand against chance (50%)."""
    conds = _conditions(results)
    cond = NONCE if NONCE in conds else conds[0]
    by, what, across = ATTRACTED, f"{cond} sentences with at least one attractor", "across the attractors"
    if not any(_count(results, m.name, cond, by) for m in models):
        by, what, across = "all", f"all {cond} sentences", "over the words between"
    scores = [(m, c) for m in models if (c := _count(results, m.name, cond, by))]
    if not scores:
        return "No model was scored."
    n = max(c.n for _, c in scores)
    ranked = sorted(scores, key=lambda mc: -mc[1].pct)
    named = [f"the {m.label}{' baseline' if m.kind == 'unigram' else ''}" for m, _ in ranked]
    pcts = [f"{c.pct:.1f}%" for _, c in ranked]
    listing = f"{named[0]} chose the correct form in {pcts[0]}"
    if len(ranked) > 1:
        rest = [f"{w} in {p}" for w, p in zip(named[1:], pcts[1:])]
        listing += ", " + (", ".join(rest[:-1]) + " and " if len(rest) > 1 else "") + rest[-1]
    lead = f"On {what} ({n} items), {listing}."
    if len(ranked) == 1:
        return lead
    return f"{lead} {_verdict(ranked, across)}"


def _verdict(ranked: list[tuple[ModelInfo, Count]], across: str) -> str:
    """Whether the best model is clearly ahead, and where the others stand against chance."""
    top, rest = ranked[0], ranked[1:]
    if top[0].kind == "unigram":
        return ("No model beats the unigram baseline, which ignores the context: at this training "
                "size the models have not learned to track the subject's number.")
    if not all(top[1].interval()[0] > c.interval()[1] for _, c in rest):
        return (f"The {top[0].label} is ahead, but its 95% interval overlaps the {rest[0][0].label}'s: "
                f"this run does not separate them.")
    others = [(m, c) for m, c in rest if m.kind != "unigram"]
    verdict = (f"The {top[0].label} is above every other model, with non-overlapping 95% intervals: "
               f"it tracks the subject's number {across}")
    below = [m.label for m, c in others if c.interval()[1] < CHANCE]
    near = [m.label for m, c in others if c.interval()[0] <= CHANCE <= c.interval()[1]]
    if below:
        verdict += (f", while the {' and the '.join(below)} falls below chance (50%), as if the verb "
                    f"agreed with the nearer noun")
    elif near:
        verdict += f", while the {' and the '.join(near)} stays at chance (50%)"
    return verdict + "."


def render(inputs: ReportInputs, results: Results, items: Mapping[tuple, Item], report_dir: Path) -> str:
    """The text of ``report.md``."""
    models = list(inputs.models)
    out = ["# agree demo: long-distance agreement in a generated language", ""]
    out += ["**Finding.** " + finding(results, models), ""]
    if inputs.setting:
        out += ["## What ran", "", *(f"- {s}" for s in inputs.setting), ""]
    out += ["## Models", ""]
    out += md_table(["model", "kind", "details"], [[m.label, m.kind, m.detail or "-"] for m in models])
    out += _accuracy_md(results, models)
    out += _breakdown_md(results, models, "attractors")
    out += _breakdown_md(results, models, "construction")
    example = _example(items)
    if example:
        out += ["## An item", "", *example, ""]
    return "\n".join(out + _links_md(inputs, report_dir))


def _accuracy_md(results: Results, models: Sequence[ModelInfo]) -> list[str]:
    """Overall and with-attractor accuracy per model and condition, with intervals and
    counts; each model's undecidable items beside its accuracies when any model has some."""
    conds = _conditions(results)
    out = ["## Accuracy", "",
           "Accuracy in % (share of items where the model gives the correct form a higher "
           "probability than the wrong one), over the decidable items (a tie is undecidable, "
           "counted apart); 95% Wilson intervals in "
           "brackets. \"attr. >= 1\": items with at least one attractor (a noun of the other "
           "number between subject and verb).", ""]
    cells = [(c, by) for c in conds for by in ("all", ATTRACTED)]
    ties = {m.name: [(results.count(m.name, c) or Count()).ties for c in conds] for m in models}
    any_ties = any(any(t) for t in ties.values())
    header = ["model"] + [c if by == "all" else f"{c}, attr. >= 1" for c, by in cells]
    header += ["undecidable (" + " / ".join(conds) + ")"] if any_ties else []
    rows = [[m.label] + [_with_interval(_count(results, m.name, c, by)) for c, by in cells]
            + ([" / ".join(map(str, ties[m.name]))] if any_ties else []) for m in models]
    # decidable and undecidable together: every model was asked about the same items
    counts = ["items"] + [str(_items(results, models[0].name, c, by)) for c, by in cells] + ([""] if any_ties else [])
    return out + md_table(header, rows + [counts])


def _items(results: Results, model: str, cond: str, by: str) -> int:
    c = results.count(model, cond, by) or Count()
    return c.n + c.ties


def _breakdown_md(results: Results, models: Sequence[ModelInfo], by: str) -> list[str]:
    """Accuracy per number of attractors (capped) or per construction, every model and condition."""
    conds = _conditions(results)
    if by == "attractors":
        title, fmt = "By number of attractors", (lambda v: f"{v}+" if v == ATTRACTOR_CAP else str(v))
        cells = {(m.name, c): _attractor_counts(results, m.name, c) for m in results.models for c in conds}
    else:
        title, fmt = "By construction", (lambda v: f"`{v}`")
        cells = {(m.name, c): {v: x for v in results.values(by) if (x := _count(results, m.name, c, by, v))}
                 for m in results.models for c in conds}
    values = sorted({v for pool in cells.values() for v in pool}, key=lambda v: (isinstance(v, str), v))
    get = lambda m, c, v: cells.get((m, c), {}).get(v)  # noqa: E731
    rows = [[fmt(v), "/".join(str((get(models[0].name, c, v) or Count()).n) for c in conds)]
            + [_pct(get(m.name, c, v)) for c in conds for m in models] for v in values]
    out = [f"## {title}", ""]
    out += md_table(["", "items"] + [f"{m.label} {c}" for c in conds for m in models], rows)
    if by == "construction":
        out += ["`L`: the verb (target) heads the cue (subject -> verb); `R`: the cue heads the "
                "target (coordinated verbs). Items: " + " / ".join(conds) + ".", ""]
    return out


def _links_md(inputs: ReportInputs, report_dir: Path) -> list[str]:
    """The plots and summary of ``agree score``, the commands, the timings file."""
    out = []
    pngs = sorted(inputs.score_dir.glob("*.png"))
    if pngs:
        out += ["## Plots (from `agree score`)", ""]
        for p in pngs:
            rel = os.path.relpath(p, report_dir)
            out += [f"![{p.stem.replace('_', ' ')}]({rel})", ""]
    summary_md = inputs.score_dir / "summary.md"
    if summary_md.is_file():
        out += [f"Bootstrap intervals and paired tests between the models: "
                f"[{os.path.relpath(summary_md, report_dir)}]({os.path.relpath(summary_md, report_dir)}).", ""]
    if inputs.commands:
        out += ["## The same, one command at a time", "", "```", *inputs.commands, "```", ""]
    if inputs.timings is not None:
        rel = os.path.relpath(inputs.timings, report_dir)
        out += [f"Wall time of each step: [{rel}]({rel}).", ""]
    return out


def _example(items: Mapping[tuple, Item]) -> list[str]:
    """A nonce item with an attractor (else any item), as the models saw it."""
    def pick(pred):
        return next((it for key, it in sorted(items.items()) if pred(it)), None)
    item: Item | None = (pick(lambda it: it.variant > 0 and it.attractors > 0 and it.direction == "L")
                         or pick(lambda it: it.attractors > 0) or pick(lambda it: True))
    if item is None:
        return []
    cue = item.cue_index
    words = [f"**{w}**" if i == cue else w for i, w in enumerate(item.prefix)]
    kind = "nonce variant" if item.variant else "original sentence"
    return [f"A {kind} ({item.attractors} attractor{'s' if item.attractors != 1 else ''}; "
            f"construction `{item.direction} {item.construction}`), cue in bold:", "",
            f"> {' '.join(words)} [ {item.correct} / {item.wrong} ] ...", "",
            f"The correct form is *{item.correct}* (it agrees with *{item.tokens[cue]}*), the wrong "
            f"one *{item.wrong}*."]


def demo_results(inputs: ReportInputs) -> tuple[Results, dict[tuple, Item]]:
    """The results of the scored rows, and their items by (item_id, variant) (for the example)."""
    table = inputs.table
    if not len(table) or table.items is None:
        raise AgreeError(f"{inputs.score_dir}: no scored rows with their items")
    return build_results(table), {(it.item_id, it.variant): it for it in table.items.tolist()}


def write_demo_report(inputs: ReportInputs, report_path: str | os.PathLike) -> Results:
    """Compute the figures and write ``report.md`` to ``report_path``; returns the
    results (:func:`finding` and :func:`accuracy` read them)."""
    report_path = Path(report_path)
    results, items = demo_results(inputs)
    text = render(inputs, results, items, report_path.parent)
    report_path.write_text(text + "\n", encoding="utf-8")
    return results


def accuracy(results: Results, model: str, condition: str, attracted: bool = False) -> float | None:
    """Accuracy (%) of one model in one condition, all items or those with attractors."""
    c = _count(results, model, condition, ATTRACTED if attracted else "all")
    return None if c is None else c.pct
