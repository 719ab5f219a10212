"""The report files of ``agree score``: ``summary.json``, ``summary.md``, the PNG plots
and, with perturbed items, ``robustness.tsv``/``robustness.png``, all rendered from one
:class:`~agreement.reporting.results.Results` (:func:`agreement.reporting.results.build_results`)."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import numpy as np

from agreement.reporting import plots
from agreement.reporting.humans import HumanIndex
from agreement.reporting.results import Results, build_results
from agreement.reporting.robustness import plot_robustness, robustness_table, write_robustness_tsv
from agreement.reporting.summary import dumps, summary_dict
from agreement.reporting.summary_md import render_markdown
from formats.scored import ScoredTable


def write_report(directory, scored: ScoredTable, *, humans: HumanIndex | None,
                 rng: np.random.Generator, testsets: Sequence[str] = (), method: str | None = None,
                 notes: Sequence[str] = (), paradigm_humans: dict | None = None,
                 reference: dict | None = None, scoring: dict | None = None,
                 syntaxgym: list | None = None) -> Results:
    """Write ``summary.json``, ``summary.md`` and the PNG plots into ``directory``,
    all rendered from one :func:`~agreement.reporting.results.build_results`; with perturbed
    items (``aspect:severity``) also ``robustness.tsv`` and ``robustness.png``.
    ``paradigm_humans``/``reference``: per-paradigm figures from elsewhere
    (:mod:`formats.published`); ``syntaxgym``: the suites' prediction accuracies
    (:func:`agreement.scoring.syntaxgym.prediction_table`). Returns the results, with all of that."""
    directory = Path(directory)
    results = dataclasses.replace(
        build_results(scored, rng=rng, humans=humans), testsets=tuple(testsets), method=method,
        notes=tuple(notes), paradigm_humans=paradigm_humans, reference=reference, scoring=scoring,
        syntaxgym=syntaxgym)
    plots.plot_by_construction(results, directory / "accuracy_by_construction.png")
    plots.plot_by_attractors(results, directory / "accuracy_by_attractors.png")
    if humans is not None:
        plots.plot_model_vs_human(scored, humans, directory / "model_vs_human.png", results=results)
    if any(":" in p for p in scored.perturbation.tolist()):
        robustness = robustness_table(results)
        plot_robustness(robustness, directory / "robustness.png")
        write_robustness_tsv(robustness, directory / "robustness.tsv")
        results = dataclasses.replace(results, robustness=robustness)
    (directory / "summary.json").write_text(dumps(summary_dict(results)), encoding="utf-8")
    (directory / "summary.md").write_text(render_markdown(results), encoding="utf-8")
    return results
