"""What ``agree score`` writes, as a library verb (the CLI command and the demo call it):
the scoring stage (:mod:`agreement.scoring.stage`), then its report
(:mod:`agreement.reporting.score_report`), into one output directory with its manifest.

:func:`score_to_dir` writes ``out``: items.tsv (one row per item and model),
summary.json, summary.md, the plots, tokens.tsv with ``surprisal``, predictions.tsv for
SyntaxGym suites, learning_curve.tsv/.png with ``curve``, and manifest.json.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from agreement.reporting.humans import HumanIndex, check_coverage
from agreement.reporting.results import Results
from agreement.reporting.score_report import write_report
from agreement.reporting.summary_md import main_table
from agreement.scoring.curve import plan_curve
from agreement.scoring.executors import Executor, make_executor
from agreement.scoring.score import Scoring
from agreement.scoring.score_sharded import ShardedScoring
from agreement.scoring.settings import Execution, ModelLoading, Reporting, WhatToScore, recorded_parameters
from agreement.scoring.stage import load_testsets, score_into
from formats.files import resolve_out
from formats.humans import read_humans
from formats.published import (humans_figures, is_blimp_humans, read_blimp_humans, read_reference,
                               reference_figures)
from formats.run import RunContext
from formats.scored import ScoredTable
from formats.testsets import TestSet
from lm.load import parse_model_specs, split_model_value

log = logging.getLogger(__name__)

__all__ = ["Execution", "ModelLoading", "Reporting", "ScoreRun", "WhatToScore", "score_to_dir"]


@dataclass(frozen=True)
class ScoreRun:
    """What a score run wrote: ``results`` (the one results model its report renders),
    ``scoring`` (the scored rows and how they were scored) and ``table`` (the accuracy
    table, TSV in %, that ``agree score`` prints)."""
    results: Results
    scoring: Scoring
    table: str

    @property
    def rows(self) -> int:
        """Scored rows written to items.tsv."""
        return len(self.scoring.table)


def score_to_dir(run: RunContext, testsets: Sequence[str], models: Sequence[str], *,
                 what: WhatToScore = WhatToScore(), loading: ModelLoading = ModelLoading(),
                 execution: Execution = Execution(), reporting: Reporting = Reporting(),
                 executor: Executor | None = None) -> ScoreRun:
    """Score ``testsets`` with ``models`` (``[GROUP=]SPEC`` values) into ``run.out``
    (atomically, under the --out policy; relative paths read and written inside
    ``run.root`` and recorded as given; ``run.seed``: the bootstrap's). ``what``: what is
    scored and how; ``loading``: how every model loads; ``execution``: where the models
    run; ``reporting``: what is written beside the scores (:mod:`agreement.scoring.settings`).
    Models score shard by shard through ``executor`` (default: the one ``execution``
    names), each finished shard kept in ``OUT.partial`` until ``out`` is written, so that
    the same call after an interruption or a failure scores only the rest
    (:mod:`agreement.scoring.score_sharded`)."""
    plan = plan_curve(models, run.root) if what.curve else None   # run directories -> snapshots
    models = plan.models if plan is not None else models
    model_paths = [p for m in models for p in split_model_value(m, run.root)[2]]
    executor = executor or make_executor(execution.executor, workers=execution.workers, threads=loading.threads,
                                         address=execution.ray_address)
    sharded = ShardedScoring(resolve_out(run.path(run.out)), executor, shard_size=execution.shard_size)
    with sharded, run.output_dir([*testsets, reporting.humans, reporting.reference, *model_paths]) as tmp:
        sets = load_testsets(run, testsets, what)
        judged = _read_judgments(run, reporting, sets)   # read (and checked) before any scoring
        scoring = score_into(tmp, sets, parse_model_specs(models, run.root), what, loading, reporting, sharded,
                             execution.torch_threads)
        results = write_report(tmp, scoring, rng=np.random.default_rng(run.seed), humans=judged.humans,
                               curve=plan, **judged.published(scoring.table))
        parameters = {"testsets": list(scoring.labels),
                      "models": [f"{s.group}={run.given(s.directory)}" for s in scoring.models],
                      **recorded_parameters(what, loading, reporting, run.seed)}
        run.write_manifest(tmp, _inputs(run, scoring, judged.sources), parameters,
                           counts=_counts(scoring, results), scoring=scoring.conventions,
                           execution=sharded.describe())
    return ScoreRun(results, scoring, main_table(results))


@dataclass(frozen=True)
class _Judgments:
    """A run's human and published files as read: per-item judgments, BLiMP's per-paradigm
    human shares (paradigm -> (share, pairs rated)), published per-paradigm accuracies
    (label -> paradigm -> accuracy), each None when not given; ``sources``: the humans and
    reference files as given."""
    humans: HumanIndex | None
    shares: Mapping[str, tuple[float, int]] | None
    reference: Mapping[str, Mapping[str, float]] | None
    sources: tuple[str | None, str | None]

    def published(self, scored: ScoredTable) -> dict:
        """The per-paradigm figures joined to the constructions scored (write_report's arguments)."""
        humans, reference = self.sources
        return {"paradigm_humans": humans_figures(self.shares, scored, humans) if self.shares else None,
                "reference": reference_figures(self.reference, scored, reference) if self.reference else None}


def _read_judgments(run: RunContext, reporting: Reporting, sets: Sequence[TestSet]) -> _Judgments:
    """The human and published files, read before scoring (a file that cannot be read stops
    the run before any model is loaded)."""
    humans, index, shares = run.path(reporting.humans), None, None
    if humans is not None and is_blimp_humans(humans):
        shares = read_blimp_humans(humans)   # per paradigm: joined after scoring
    elif humans is not None:
        index = HumanIndex(read_humans(humans))
        n = check_coverage(index, [it for ts in sets for it in ts.items], humans)
        log.info(f"{humans}: {len(index)} judged items, {n} test items matched")
    reference = read_reference(run.path(reporting.reference)) if reporting.reference else None
    return _Judgments(index, shares, reference, (reporting.humans, reporting.reference))


def _inputs(run: RunContext, scoring: Scoring, judgments: Sequence[str | None]) -> list[str]:
    """Every input file or directory, once, named as given, for the manifest (``judgments``:
    the humans and reference files, as given)."""
    inputs = [run.given(f) for ts in scoring.testsets for f in ts.files]
    inputs += [run.given(s.directory) for s in scoring.models]
    inputs += [p for p in judgments if p]
    return list(dict.fromkeys(str(p) for p in inputs))


def _counts(scoring: Scoring, results: Results) -> dict:
    h = results.humans
    return {"items": {ts.label: len(ts.items) for ts in scoring.testsets}, "scored_rows": len(scoring.table),
            "models": {m.name: {"items": m.items, "oov_items": m.oov_items,
                                **({"methods": dict(m.methods)} if m.methods else {})} for m in results.models},
            "human_matched_items": h.matched_items if h else 0 if results.paradigm_humans else None,
            "skipped": list(scoring.notes), "tokens_rows": scoring.tokens_rows,
            **({"prediction_rows": len(scoring.predictions)} if scoring.predictions else {})}
