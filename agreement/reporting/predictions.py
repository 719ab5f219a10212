"""SyntaxGym suites' own predictions in the report: the outcomes that scoring evaluated
(:class:`agreement.scoring.syntaxgym.PredictionOutcome`, item by item) as accuracies per
model, suite and prediction (summary.json's ``syntaxgym``) and summary.md's section."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from agreement.scoring.syntaxgym import PredictionOutcome


@dataclass(frozen=True)
class PredictionAccuracy:
    """How often one prediction of a suite holds under one model: ``prediction`` is its
    number, or ``all`` (the items where every prediction of the suite holds) with the
    formula ``every prediction``; ``accuracy`` in % of ``items``, rounded to 4 places."""
    model: str
    group: str
    testset: str
    suite: str
    prediction: str
    formula: str
    items: int
    holds: int
    accuracy: float

    def as_dict(self) -> dict:
        return asdict(self)


def prediction_table(outcomes: Sequence[PredictionOutcome]) -> tuple[PredictionAccuracy, ...]:
    """Accuracy per model, suite and prediction and, for a suite of several predictions,
    for all of them at once."""
    cells: dict[tuple, list] = {}
    every: dict[tuple, dict] = {}
    for o in outcomes:
        suite = (o.model, o.group, o.testset, o.suite)
        cells.setdefault(suite + (str(o.prediction), o.formula), []).append(o.holds)
        whole = every.setdefault(suite, {})
        whole[o.item] = whole.get(o.item, True) and o.holds
    for suite, per_item in every.items():
        if sum(k[:4] == suite for k in cells) > 1:
            cells[suite + ("all", "every prediction")] = list(per_item.values())
    return tuple(PredictionAccuracy(m, g, t, s, p, f, len(v), int(sum(v)), round(100.0 * sum(v) / len(v), 4))
                 for (m, g, t, s, p, f), v in cells.items())


def prediction_lines(table: Sequence[PredictionAccuracy]) -> list[str]:
    """summary.md's section: one row per suite, prediction and model."""
    if not table:
        return []
    out = ["## SyntaxGym predictions", "",
           "Each suite's own predictions, item by item, as SyntaxGym evaluates them: region surprisals "
           "in bits (the suite's metric over the region's words), the formula true or false per item. "
           "`all`: items for which every prediction of the suite holds.", "",
           "| suite | prediction | formula | model | items | holds | accuracy % |", "|---|---|---|---|---|---|---|"]
    for r in table:
        out.append(f"| {r.suite} | {r.prediction} | `{r.formula}` | {r.model} | {r.items} | "
                   f"{r.holds} | {r.accuracy:.1f} |")
    return out + [""]
