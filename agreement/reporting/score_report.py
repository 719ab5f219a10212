"""The report files of ``agree score``: ``summary.json``, ``summary.md``, the PNG plots,
with perturbed items ``robustness.tsv``/``robustness.png``, with ``--curve`` the learning
curve's files, all rendered from one :class:`~agreement.reporting.results.Results` of
what scoring produced (:class:`agreement.scoring.score.Scoring`)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from agreement.reporting import plots
from agreement.reporting.accuracy_plots import plot_by_attractors, plot_by_construction
from agreement.reporting.curve_report import write_curve
from agreement.reporting.humans import HumanIndex
from agreement.reporting.predictions import prediction_table
from agreement.reporting.results import Results, build_results
from agreement.reporting.robustness import perturbed, plot_robustness, robustness_table, write_robustness_tsv
from agreement.reporting.summary import dumps, summary_dict
from agreement.reporting.summary_md import render_markdown
from agreement.scoring.curve import CurvePlan
from agreement.scoring.score import Scoring
from formats.published import PublishedFigures


def write_report(directory, scoring: Scoring, *, rng: np.random.Generator, humans: HumanIndex | None = None,
                 paradigm_humans: PublishedFigures | None = None, reference: PublishedFigures | None = None,
                 curve: CurvePlan | None = None) -> Results:
    """Write the report of ``scoring`` into ``directory`` and return its results.
    ``humans``: per-item judgments (group cells, correlations, the noise ceiling);
    ``paradigm_humans``/``reference``: per-paradigm figures from elsewhere
    (:mod:`formats.published`); ``rng``: the bootstrap's; ``curve``: the learning curves
    the models are the points of."""
    directory = Path(directory)
    results = dataclasses.replace(
        build_results(scoring.table, rng=rng, humans=humans), testsets=scoring.labels, method=scoring.method,
        notes=scoring.notes, paradigm_humans=paradigm_humans, reference=reference,
        conventions=scoring.conventions, predictions=prediction_table(scoring.predictions))
    plot_by_construction(results, directory / "accuracy_by_construction.png")
    plot_by_attractors(results, directory / "accuracy_by_attractors.png")
    if humans is not None:
        plots.plot_model_vs_human(scoring.table, humans, directory / "model_vs_human.png", results=results)
    if perturbed(results):
        robustness = robustness_table(results)
        plot_robustness(robustness, directory / "robustness.png")
        write_robustness_tsv(robustness, directory / "robustness.tsv")
    (directory / "summary.json").write_text(dumps(summary_dict(results)), encoding="utf-8")
    (directory / "summary.md").write_text(render_markdown(results), encoding="utf-8")
    if curve is not None:
        write_curve(directory, scoring.table, scoring.models, curve)
    return results
