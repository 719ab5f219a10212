"""``report.md`` of ``agree demo``: what the models got right, in tables and one sentence.

Every figure is computed from the scored ``items.tsv`` that ``agree score`` writes
(columns documented in formats/scored.py: one row per item, variant and model, with
``correct`` 1/0), joined with the test set's ``items.tsv`` for the sentences and the
arc direction. Accuracy is the share of items where P(correct form) > P(wrong form)
over the decidable items (a tie is undecidable, counted apart), in percent. The closing sentence is generated from the figures:
it names the ordering of the models on nonce items with attractors, the items the
paper's argument rests on (Gulordava et al. 2018, section 5).
"""
from __future__ import annotations

import csv
import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from agreement.errors import AgreeError
from formats.items import Item, read_items

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

    scored: the scored items.tsv of ``agree score``; testset: the items.tsv scored
    (original and nonce variants); score_dir: the score output directory (its PNGs
    are linked); models: in table order; setting: lines describing the run (data
    sizes, seed); commands: the equivalent CLI commands; timings: a file of step
    times to link (kept out of the report so that the same seed gives the same
    report, byte for byte)."""
    scored: Path
    testset: Path
    score_dir: Path
    models: tuple[ModelInfo, ...]
    setting: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    timings: Path | None = None


@dataclass
class Tally:
    right: int = 0
    n: int = 0

    def add(self, ok: bool) -> None:
        self.right += ok
        self.n += 1

    @property
    def pct(self) -> float | None:
        return 100.0 * self.right / self.n if self.n else None

    def ci(self) -> tuple[float, float] | None:
        """95% Wilson interval in percent (good at small n and near 0 or 100)."""
        if not self.n:
            return None
        z, p, n = 1.959964, self.right / self.n, self.n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return 100 * (centre - half), 100 * (centre + half)


@dataclass
class Figures:
    """Tallies keyed by (model, condition, breakdown value)."""
    overall: dict = field(default_factory=lambda: defaultdict(Tally))
    attracted: dict = field(default_factory=lambda: defaultdict(Tally))   # attractors >= 1
    by_attractors: dict = field(default_factory=lambda: defaultdict(Tally))
    by_construction: dict = field(default_factory=lambda: defaultdict(Tally))
    items: dict = field(default_factory=dict)   # (item_id, variant) -> Item
    undecidable: dict = field(default_factory=lambda: defaultdict(int))  # (model, condition) -> ties


def _condition(perturbation: str, variant: int) -> str:
    if perturbation in ("", "original"):
        return ORIGINAL if variant == 0 else NONCE
    return perturbation


def tally(scored: str | os.PathLike, testset: str | os.PathLike) -> Figures:
    """Read the scored rows and the test items into :class:`Figures`."""
    figs = Figures()
    figs.items = {(it.item_id, it.variant): it for it in read_items(testset)}
    scored = Path(scored)
    if not scored.is_file():
        raise AgreeError(f"{scored}: no scored items (run agree score first)")
    with open(scored, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = {"item_id", "variant", "model", "correct", "attractors", "construction"} - set(reader.fieldnames or ())
        if missing:
            raise AgreeError(f"{scored}: not a scored items.tsv (missing {', '.join(sorted(missing))})")
        for row in reader:
            variant = int(row["variant"])
            cond = _condition(row.get("perturbation", ""), variant)
            model, ok = row["model"], row["correct"] == "1"
            if row.get("undecidable") == "1":  # a tie: neither right nor wrong, counted apart
                figs.undecidable[(model, cond)] += 1
                continue
            att = int(row["attractors"])
            item = figs.items.get((row["item_id"], variant))
            construction = row["construction"]
            if item is not None:
                construction = f"{item.direction} {item.construction}"
            figs.overall[(model, cond, None)].add(ok)
            if att > 0:
                figs.attracted[(model, cond, None)].add(ok)
            figs.by_attractors[(model, cond, min(att, ATTRACTOR_CAP))].add(ok)
            figs.by_construction[(model, cond, construction)].add(ok)
    if not figs.overall:
        raise AgreeError(f"{scored}: no scored rows")
    return figs


def _pct(t: Tally | None) -> str:
    return "-" if t is None or t.pct is None else f"{t.pct:.1f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def _conditions(figs: Figures) -> list[str]:
    found = {c for (_, c, _) in figs.overall}
    return [c for c in (ORIGINAL, NONCE) if c in found] + sorted(found - {ORIGINAL, NONCE})


def finding(figs: Figures, models: Sequence[ModelInfo]) -> str:
    """One sentence stating what the figures show, built from them (nothing fixed).

    It ranks the models on nonce items with at least one attractor (original items
    when there are no nonce ones), says whether the best non-baseline model beats
    every other model by more than the overlap of their 95% intervals, and where
    the others stand against chance (50%)."""
    conds = _conditions(figs)
    cond = NONCE if NONCE in conds else conds[0]
    pool, what = figs.attracted, f"{cond} sentences with at least one attractor"
    across = "across the attractors"
    if not any(pool.get((m.name, cond, None)) for m in models):
        pool, what, across = figs.overall, f"all {cond} sentences", "over the words between"
    scores = [(m, pool[(m.name, cond, None)]) for m in models if pool.get((m.name, cond, None))]
    if not scores:
        return "No model was scored."
    n = max(t.n for _, t in scores)
    ranked = sorted(scores, key=lambda mt: -mt[1].pct)
    named = [f"the {m.label}{' baseline' if m.kind == 'unigram' else ''}" for m, _ in ranked]
    pcts = [f"{t.pct:.1f}%" for _, t in ranked]
    listing = f"{named[0]} chose the correct form in {pcts[0]}"
    if len(ranked) > 1:
        rest = [f"{w} in {p}" for w, p in zip(named[1:], pcts[1:])]
        listing += ", " + (", ".join(rest[:-1]) + " and " if len(rest) > 1 else "") + rest[-1]
    lead = f"On {what} ({n} items), {listing}."
    top, rest = ranked[0], ranked[1:]
    if not rest:
        return lead
    clear = all(top[1].ci()[0] > t.ci()[1] for _, t in rest)
    others = [(m, t) for m, t in rest if m.kind != "unigram"]
    if top[0].kind == "unigram":
        verdict = ("No model beats the unigram baseline, which ignores the context: at this training "
                   "size the models have not learned to track the subject's number.")
    elif clear:
        verdict = (f"The {top[0].label} is above every other model, with non-overlapping 95% intervals: "
                   f"it tracks the subject's number {across}")
        below = [m.label for m, t in others if t.ci()[1] < CHANCE]
        near = [m.label for m, t in others if t.ci()[0] <= CHANCE <= t.ci()[1]]
        if below:
            verdict += (f", while the {' and the '.join(below)} falls below chance (50%), as if the verb "
                        f"agreed with the nearer noun")
        elif near:
            verdict += f", while the {' and the '.join(near)} stays at chance (50%)"
        verdict += "."
    else:
        verdict = (f"The {top[0].label} is ahead, but its 95% interval overlaps the {rest[0][0].label}'s: "
                   f"this run does not separate them.")
    return f"{lead} {verdict}"


def render(inputs: ReportInputs, figs: Figures, report_dir: Path) -> str:
    models = list(inputs.models)
    conds = _conditions(figs)
    out = ["# agree demo: long-distance agreement in a generated language", ""]
    out += ["**Finding.** " + finding(figs, models), ""]
    if inputs.setting:
        out += ["## What ran", "", *(f"- {s}" for s in inputs.setting), ""]
    out += ["## Models", ""]
    out += _table(["model", "kind", "details"], [[m.label, m.kind, m.detail or "-"] for m in models])

    out += ["## Accuracy", "",
            "Accuracy in % (share of items where the model gives the correct form a higher "
            "probability than the wrong one), over the decidable items (a tie is undecidable, "
            "counted apart); 95% Wilson intervals in "
            "brackets. \"attr. >= 1\": items with at least one attractor (a noun of the other "
            "number between subject and verb).", ""]
    header = ["model"]
    for c in conds:
        header += [c, f"{c}, attr. >= 1"]
    rows = []
    for m in models:
        row = [m.label]
        for c in conds:
            for pool in (figs.overall, figs.attracted):
                t = pool.get((m.name, c, None))
                row.append("-" if t is None else f"{t.pct:.1f} [{t.ci()[0]:.1f}, {t.ci()[1]:.1f}]")
        rows.append(row)
    counts = ["items"] + [str((pool.get((models[0].name, c, None)) or Tally()).n)
                          for c in conds for pool in (figs.overall, figs.attracted)]
    ties = ["undecidable"] + [str(figs.undecidable.get((models[0].name, c), 0)) if pool is figs.overall else ""
                              for c in conds for pool in (figs.overall, figs.attracted)]
    out += _table(header, rows + [counts] + ([ties] if figs.undecidable else []))

    for title, pool, fmt in (("By number of attractors", figs.by_attractors,
                              lambda v: f"{v}+" if v == ATTRACTOR_CAP else str(v)),
                             ("By construction", figs.by_construction, lambda v: f"`{v}`")):
        out += [f"## {title}", ""]
        values = sorted({v for (_, _, v) in pool}, key=lambda v: (isinstance(v, str), v))
        header = ["", "items"] + [f"{m.label} {c}" for c in conds for m in models]
        rows = []
        for v in values:
            n = "/".join(str((pool.get((models[0].name, c, v)) or Tally()).n) for c in conds)
            rows.append([fmt(v), n] + [_pct(pool.get((m.name, c, v))) for c in conds for m in models])
        out += _table(header, rows)
        if title.startswith("By construction"):
            out += ["`L`: the verb (target) heads the cue (subject -> verb); `R`: the cue heads the "
                    "target (coordinated verbs). Items: " + " / ".join(conds) + ".", ""]

    example = _example(figs, models)
    if example:
        out += ["## An item", "", *example, ""]
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
    return "\n".join(out)


def _example(figs: Figures, models: Sequence[ModelInfo]) -> list[str]:
    """A nonce item with an attractor (else any item), as the models saw it."""
    def pick(pred):
        return next((it for key, it in sorted(figs.items.items()) if pred(it)), None)
    item: Item | None = (pick(lambda it: it.variant > 0 and it.attractors > 0 and it.direction == "L")
                         or pick(lambda it: it.attractors > 0) or pick(lambda it: True))
    if item is None:
        return []
    cue, target = item.cue_index, item.target_index
    words = [f"**{w}**" if i == cue else w for i, w in enumerate(item.prefix)]
    kind = "nonce variant" if item.variant else "original sentence"
    return [f"A {kind} ({item.attractors} attractor{'s' if item.attractors != 1 else ''}; "
            f"construction `{item.direction} {item.construction}`), cue in bold:", "",
            f"> {' '.join(words)} [ {item.correct} / {item.wrong} ] ...", "",
            f"The correct form is *{item.correct}* (it agrees with *{item.tokens[cue]}*), the wrong "
            f"one *{item.wrong}*."]


def write_report(inputs: ReportInputs, report_path: str | os.PathLike) -> Figures:
    """Compute the figures and write ``report.md`` to ``report_path``; returns the
    figures (:func:`finding` and :func:`accuracy` read them)."""
    report_path = Path(report_path)
    figs = tally(inputs.scored, inputs.testset)
    text = render(inputs, figs, report_path.parent)
    report_path.write_text(text + "\n", encoding="utf-8")
    return figs


def accuracy(figs: Figures, model: str, condition: str, attracted: bool = False) -> float | None:
    """Accuracy (%) of one model in one condition, all items or those with attractors."""
    t = (figs.attracted if attracted else figs.overall).get((model, condition, None))
    return None if t is None else t.pct
