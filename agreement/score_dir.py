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
from agreement.scoring.executors import Executor
from agreement.scoring.score import Scoring
from agreement.scoring.sharded import ShardedScoring
from agreement.scoring.stage import ScoreOptions, load_testsets, score_into
from formats.files import resolve_out
from formats.humans import read_humans
from formats.published import (humans_figures, is_blimp_humans, read_blimp_humans, read_reference,
                               reference_figures)
from formats.run import RunContext
from formats.scored import ScoredTable
from formats.testsets import TestSet
from lm.load import parse_model_specs, split_model_value

log = logging.getLogger(__name__)

__all__ = ["ScoreOptions", "ScoreRun", "score_to_dir"]


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


def score_to_dir(run: RunContext, testsets: Sequence[str], models: Sequence[str],
                 options: ScoreOptions = ScoreOptions(), *, executor: Executor | None = None) -> ScoreRun:
    """Score ``testsets`` with ``models`` (``[GROUP=]SPEC`` values) into ``run.out``
    (atomically, under the --out policy; relative paths read and written inside
    ``run.root`` and recorded as given; ``run.seed``: the bootstrap's). Models score shard
    by shard through ``executor`` (default: the one ``options`` names), each finished
    shard kept in ``OUT.partial`` until ``out`` is written, so that the same call after
    an interruption or a failure scores only the rest (:mod:`agreement.scoring.sharded`)."""
    plan = plan_curve(models, run.root) if options.curve else None   # run directories -> snapshots
    models = plan.models if plan is not None else models
    model_paths = [p for m in models for p in split_model_value(m, run.root)[2]]
    sharded = ShardedScoring(resolve_out(run.path(run.out)), executor or options.make_executor(),
                             shard_size=options.shard_size)
    with sharded, run.output_dir([*testsets, options.humans, options.reference, *model_paths]) as tmp:
        sets = load_testsets(run, testsets, options)
        judged = _read_judgments(run, options, sets)   # read (and checked) before any scoring
        scoring = score_into(tmp, sets, parse_model_specs(models, run.root), options, sharded)
        results = write_report(tmp, scoring, rng=np.random.default_rng(run.seed), humans=judged.humans,
                               curve=plan, **judged.published(scoring.table))
        run.write_manifest(tmp, _inputs(run, scoring, options), _parameters(run, scoring, options),
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


def _read_judgments(run: RunContext, options: ScoreOptions, sets: Sequence[TestSet]) -> _Judgments:
    """The human and published files, read before scoring (a file that cannot be read stops
    the run before any model is loaded)."""
    humans, index, shares = run.path(options.humans), None, None
    if humans is not None and is_blimp_humans(humans):
        shares = read_blimp_humans(humans)   # per paradigm: joined after scoring
    elif humans is not None:
        index = HumanIndex(read_humans(humans))
        n = check_coverage(index, [it for ts in sets for it in ts.items], humans)
        log.info(f"{humans}: {len(index)} judged items, {n} test items matched")
    reference = read_reference(run.path(options.reference)) if options.reference else None
    return _Judgments(index, shares, reference, (options.humans, options.reference))


def _inputs(run: RunContext, scoring: Scoring, options: ScoreOptions) -> list[str]:
    """Every input file or directory, once, named as given, for the manifest."""
    inputs = [run.given(f) for ts in scoring.testsets for f in ts.files]
    inputs += [run.given(s.directory) for s in scoring.models]
    inputs += [p for p in (options.humans, options.reference) if p]
    return list(dict.fromkeys(str(p) for p in inputs))


def _parameters(run: RunContext, scoring: Scoring, options: ScoreOptions) -> dict:
    return {"testsets": list(scoring.labels),
            "models": [f"{s.group}={run.given(s.directory)}" for s in scoring.models],
            **options.parameters(run.seed)}


def _counts(scoring: Scoring, results: Results) -> dict:
    h = results.humans
    return {"items": {ts.label: len(ts.items) for ts in scoring.testsets}, "scored_rows": len(scoring.table),
            "models": {m.name: {"items": m.items, "oov_items": m.oov_items,
                                **({"methods": dict(m.methods)} if m.methods else {})} for m in results.models},
            "human_matched_items": h.matched_items if h else 0 if results.paradigm_humans else None,
            "skipped": list(scoring.notes), "tokens_rows": scoring.tokens_rows,
            **({"prediction_rows": len(scoring.predictions)} if scoring.predictions else {})}
