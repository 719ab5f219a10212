"""All analyses of ``agree analyze`` over one :class:`ScoredTable`, into one
:class:`Analysis` record that the markdown, JSON and plots render from: the one
:class:`~agreement.reporting.results.Results` of the rows (the per-model counts ``agree score``
reports, without its bootstrap cells), extended with analyze's sections."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agreement.reporting.analysis.challenge import ChallengeSubset, challenge_subsets
from agreement.reporting.analysis.mixed import MixedFit, fit_mixed
from agreement.reporting.paired import PairedComparison, paired_comparisons
from agreement.reporting.results import Results, build_results
from formats.scored import ScoredTable
from agreement.reporting.analysis.systematicity import Systematicity, systematicity
from agreement.reporting.humans import HumanCondition, human_conditions
from formats.humans import HumanJudgment

CONDITIONS = ("original", "nonce")


@dataclass
class Analysis:
    """Everything ``agree analyze`` found: ``results`` (the rows' :class:`Results`, whose
    counts give ``accuracy``) and analyze's sections; ``notes`` are the one-line reasons
    for what was skipped."""
    sources: tuple[str, ...]
    rows: int
    models: list[str]
    accuracy: dict[str, dict[str, float]] = field(default_factory=dict)
    humans: list[HumanCondition] = field(default_factory=list)
    mixed: MixedFit | None = None
    paired: list[PairedComparison] = field(default_factory=list)
    systematicity: list[Systematicity] = field(default_factory=list)
    challenge: list[ChallengeSubset] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    results: Results | None = None


def accuracy_table(results: Results) -> dict[str, dict[str, float]]:
    """model -> condition -> accuracy (fraction), for the conditions present (in order of
    first appearance), from the results' counts."""
    out: dict[str, dict[str, float]] = {}
    for (m, cond, by, _), c in results.counts.items():
        if by == "all" and c.n:
            out.setdefault(m, {})[cond] = c.right / c.n
    return out


def analyze(table: ScoredTable, rng: np.random.Generator, *, judgments: list[HumanJudgment] | None = None,
            challenge_models: tuple[str, ...] = (), mixed: bool = True, n_boot: int = 1000) -> Analysis:
    """Run every analysis that the data allows; skipped ones get a note saying why."""
    results = build_results(table)
    result = Analysis(table.sources, len(table), table.models(), accuracy_table(results), results=results)
    if table.left_out:
        result.notes.append(f"{table.left_out} undecidable rows (a tie or a NaN score) left out, "
                            "as agree score leaves them out of accuracy")
    if judgments is None:
        result.notes.append("graded comparison with humans skipped: no human judgments "
                            "(give a judgments file, or score with one)")
    else:
        result.humans = human_conditions(table, judgments, rng, n_boot, CONDITIONS)
        if not result.humans:
            result.notes.append("graded comparison with humans skipped: no scored original/nonce "
                                "item has judgments")
    main = table.subset(np.isin(table.condition, CONDITIONS))
    if len(main) < len(table):
        result.notes.append(f"mixed model and paired comparisons use the {len(main)} original/nonce rows "
                            f"({len(table) - len(main)} other rows left out)")
    if len(result.models) < 2:
        result.notes.append(f"paired comparison not done: a single model ({result.models[0]})")
    if mixed and len(main) and len(np.unique(main.correct)) < 2:   # a logistic fit needs both outcomes
        result.notes.append(f"mixed model skipped: all {len(main)} original/nonce rows are "
                            f"{'right' if main.correct.all() else 'wrong'}, and a logistic fit needs both")
    elif mixed and len(main):
        result.mixed = fit_mixed(main)
    elif not mixed:
        result.notes.append("mixed model skipped (not asked for)")
    result.paired = paired_comparisons(main, rng)
    result.systematicity = systematicity(table)
    if not result.systematicity:
        result.notes.append("EW/MW skipped: no swap rows (score the items of `agree swap-targets`)")
    result.challenge = challenge_subsets(table, rng, challenge_models)
    return result
