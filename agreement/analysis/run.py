"""All analyses of ``agree analyze`` over one :class:`ScoredTable`, into one
:class:`Analysis` record that the markdown, JSON and plots render from."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agreement.analysis.ceiling import (GradedComparison, Reliability, graded_comparison,
                                        split_half_reliability)
from agreement.analysis.challenge import ChallengeSubset, challenge_subsets
from agreement.analysis.mixed import MixedFit, fit_mixed
from agreement.paired import PairedComparison, paired_comparisons
from formats.scored import ScoredTable
from agreement.analysis.systematicity import Systematicity, systematicity
from formats.humans import HumanJudgment

CONDITIONS = ("original", "nonce")


@dataclass(frozen=True)
class HumanCondition:
    """Humans on one condition: the panel's reliability (both correlation kinds),
    every model's graded comparison, and how many scored items had no raters."""
    condition: str
    judged_items: int
    unjudged_items: int
    human_accuracy: float
    reliability: tuple[Reliability, ...]
    models: tuple[GradedComparison, ...]


@dataclass
class Analysis:
    """Everything ``agree analyze`` found; ``notes`` are the one-line reasons for
    what was skipped."""
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


def human_conditions(table: ScoredTable, judgments: list[HumanJudgment],
                     rng: np.random.Generator, n_boot: int) -> list[HumanCondition]:
    """Reliability and graded comparisons per condition (original, nonce)."""
    votes = {(j.item_id, j.variant): (j.votes_correct, j.votes_wrong) for j in judgments}
    out = []
    for cond in CONDITIONS:
        rows = table.subset(table.condition == cond)
        if not len(rows):
            continue
        ids = list(dict.fromkeys(zip(rows.item_id.tolist(), rows.variant.tolist())))
        judged = [k for k in ids if k in votes and sum(votes[k]) > 0]
        if not judged:
            continue
        c = np.array([votes[k][0] for k in judged])
        w = np.array([votes[k][1] for k in judged])
        share = dict(zip(judged, (c / (c + w)).tolist()))
        rel = tuple(split_half_reliability(c, w, rng, method=m, n_boot=n_boot)
                    for m in ("pearson", "spearman"))
        comps = []
        p = rows.p_correct_share
        for m in rows.models():
            sel = np.flatnonzero(rows.model == m)
            keys = list(zip(rows.item_id[sel].tolist(), rows.variant[sel].tolist()))
            hit = [(i, share[k]) for i, k in zip(sel, keys) if k in share]
            if not hit:
                continue
            idx, hs = np.array([i for i, _ in hit]), np.array([s for _, s in hit])
            comps.append(graded_comparison(m, cond, p[idx], hs, rows.correct[idx], rng, n_boot=n_boot))
        out.append(HumanCondition(cond, len(judged), len(ids) - len(judged), float(np.mean(c / (c + w))),
                                  rel, tuple(comps)))
    return out


def accuracy_table(table: ScoredTable) -> dict[str, dict[str, float]]:
    """model -> condition -> accuracy (fraction), for the conditions present."""
    out: dict[str, dict[str, float]] = {}
    for m in table.models():
        sel = table.model == m
        out[m] = {c: float(table.correct[sel & (table.condition == c)].mean())
                  for c in dict.fromkeys(table.condition[sel].tolist())}
    return out


def analyze(table: ScoredTable, rng: np.random.Generator, *, judgments: list[HumanJudgment] | None = None,
            challenge_models: tuple[str, ...] = (), mixed: bool = True, n_boot: int = 1000) -> Analysis:
    """Run every analysis that the data allows; skipped ones get a note saying why."""
    result = Analysis(table.sources, len(table), table.models(), accuracy_table(table))
    if table.left_out:
        result.notes.append(f"{table.left_out} undecidable rows (a tie or a NaN score) left out, "
                            "as agree score leaves them out of accuracy")
    if judgments is None:
        result.notes.append("graded comparison with humans skipped: no human judgments "
                            "(give --humans FILE, or score with --humans)")
    else:
        result.humans = human_conditions(table, judgments, rng, n_boot)
        if not result.humans:
            result.notes.append("graded comparison with humans skipped: no scored original/nonce "
                                "item has judgments")
    main = table.subset(np.isin(table.condition, CONDITIONS))
    if len(main) < len(table):
        result.notes.append(f"mixed model and paired comparisons use the {len(main)} original/nonce rows "
                            f"({len(table) - len(main)} other rows left out)")
    if len(result.models) < 2:
        result.notes.append(f"paired comparison not done: a single model ({result.models[0]})")
    if mixed and len(main):
        result.mixed = fit_mixed(main)
    elif not mixed:
        result.notes.append("mixed model skipped (--no-mixed)")
    result.paired = paired_comparisons(main, rng)
    result.systematicity = systematicity(table)
    if not result.systematicity:
        result.notes.append("EW/MW skipped: no swap rows (score the items of `agree swap-targets`)")
    result.challenge = challenge_subsets(table, rng, challenge_models)
    return result
