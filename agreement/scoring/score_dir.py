"""What ``agree score`` writes, as a library verb (the CLI command and the demo call it).

:func:`score_to_dir` loads the test sets, scores them with every model and writes
``out``: items.tsv (one row per item and model), summary.json, summary.md, the
plots, tokens.tsv with ``surprisal``, learning_curve.tsv/.png with ``curve``, and
manifest.json.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from treebanks.errors import literal
from agreement.errors import AgreeError
from agreement.scoring.curve import plan_curve
from agreement.reporting.curve_report import write_curve
from agreement.scoring.executors import Executor, make_executor
from agreement.scoring.sharded import ShardedScoring
from agreement.reporting.humans import HumanIndex, check_coverage
from formats.humans import read_humans
from agreement.scoring.score import score_testsets, split_for_method
from lm.load import parse_model_specs, split_model_value
from agreement.scoring.span import multiword_note
from agreement.scoring.syntaxgym import PREDICTIONS_FILE, prediction_table, write_predictions
from agreement.reporting.score_report import write_report
from agreement.reporting.summary import summary_dict
from agreement.reporting.summary_md import main_table
from agreement.scoring.surprisal import TOKENS_FILE, SurprisalWriter
from formats.files import resolve_out
from formats.files import as_given, rooted
from formats.run import RunContext
from formats.testsets import load_testset, testset_inputs
from formats.published import (humans_summary, is_blimp_humans, read_blimp_humans, read_reference,
                               reference_summary)
from formats.scored import write_scored

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScoreRun:
    """What a score run wrote: summary (summary.json's content), rows (scored rows in
    items.tsv) and table (the accuracy table, TSV in %, that ``agree score`` prints)."""
    summary: dict
    rows: int
    table: str


@dataclass(frozen=True)
class ScoreOptions:
    """How to score (the manifest records every field but ``torch_threads``).

    method: ``target`` or ``sentence``; fmt: the format of every test set (``auto``);
    from_outputs: model columns of a paper .tab used instead of models; humans,
    reference: judgment and published-accuracy files; surprisal/units: tokens.tsv;
    batch_size, device, dtype, engine, threads: model options (None: the backend's
    default; threads: each model's CPU threads, llama.cpp's and torch's); torch_threads:
    torch's CPU threads while scoring when threads is None (None: torch's own setting;
    speed only, so not recorded); executor, workers, ray_address: where the models run
    (:mod:`agreement.scoring.executors`; the manifest records them under ``execution``);
    shard_size: items per shard (None: :data:`agreement.scoring.shards.SHARD_SIZE`); curve: the models
    are the points of learning curves (:mod:`agreement.scoring.curve`); convention: the text subword
    models read (:mod:`lm.pieces`)."""
    method: str = "target"
    fmt: str = "auto"
    from_outputs: tuple[str, ...] = ()
    humans: str | None = None
    reference: str | None = None
    surprisal: bool = False
    units: str = "nats"
    require_in_vocab: bool = False
    carry_state: bool = False
    batch_size: int | None = None
    device: str | None = None
    dtype: str | None = None
    engine: str | None = None
    threads: int | None = None
    torch_threads: int | None = None
    executor: str = "in-process"
    workers: int | None = None
    ray_address: str | None = None
    shard_size: int | None = None
    curve: bool = False
    lang: str | None = None  # a test set's language where its files do not say it (CLAMS)
    convention: str = "agree"

    def model_options(self) -> dict:
        return {k: v for k, v in (("batch_size", self.batch_size), ("device", self.device), ("dtype", self.dtype),
                                  ("engine", self.engine), ("threads", self.threads),
                                  ("convention", self.convention)) if v is not None}


def score_to_dir(run: RunContext, testsets: Sequence[str], models: Sequence[str],
                 options: ScoreOptions = ScoreOptions(), *, seed: int = 1111,
                 executor: Executor | None = None) -> ScoreRun:
    """Score ``testsets`` with ``models`` (``--model`` values, ``[GROUP=]SPEC``) into
    ``run.out`` (atomically, under the --out policy). ``seed``: the bootstrap's;
    relative paths are read and written inside ``run.root`` and recorded as given.
    Models score shard by shard through ``executor``
    (default: the one ``options`` names), each finished shard kept in ``OUT.partial``
    until ``out`` is written, so that the same call after an interruption scores only
    the rest (:mod:`agreement.scoring.sharded`)."""
    o, root = options, run.root
    plan = plan_curve(models, root) if o.curve else None   # run directories -> snapshots
    models = plan.models if plan is not None else models
    humans, reference = run.path(o.humans), run.path(o.reference)
    model_dirs = [d for m in models for d in split_model_value(m, root)[2]]
    executor = executor or make_executor(o.executor, workers=o.workers, threads=o.threads,
                                         address=o.ray_address)
    with run.output_dir([*testsets, o.humans, o.reference, *model_dirs]) as tmp:
        sets, notes = _load_sets(testsets, o.fmt, o.method, root, o.lang)
        index = _humans(humans, sets)
        specs = parse_model_specs(models, root)
        scoring: dict = {}
        sharded = ShardedScoring(resolve_out(run.path(run.out)), executor, _testset_paths(testsets, o.fmt, root),
                                 shard_size=o.shard_size)
        in_one_stream = o.carry_state and executor.name == "in-process"   # carry_state: no shards
        predictions: list = []  # SyntaxGym suites' own predictions (agreement.scoring.syntaxgym)
        with _torch_threads(o.threads if o.threads is not None else o.torch_threads):
            scored, tokens_rows = _score(tmp, sets, specs, o.surprisal, o.units, from_outputs=o.from_outputs,
                                         require_in_vocab=o.require_in_vocab, method=o.method,
                                         carry_state=o.carry_state, scoring=scoring, predictions=predictions,
                                         score_models=None if in_one_stream else sharded, **o.model_options())
        rows = write_scored(tmp / "items.tsv", scored)
        extra = _published(o.humans if index is None else None, o.reference, scored, root)
        if predictions:
            write_predictions(tmp / PREDICTIONS_FILE, predictions)
            extra["syntaxgym"] = prediction_table(predictions)
        results = write_report(tmp, scored, humans=index, rng=np.random.default_rng(seed), testsets=testsets,
                               method=o.method, notes=notes, scoring=scoring, **extra)
        summary = summary_dict(results)
        if plan is not None:
            write_curve(tmp, scored, specs, plan)
        given = [dataclasses.replace(s, directory=run.given(s.directory)) for s in specs]
        run.write_manifest(tmp, _inputs(testsets, o.fmt, given, o.humans, o.reference, root),
                           _parameters(testsets, given, o, seed),
                           counts={"items": {s.label: len(s.items) for s in sets}, "scored_rows": rows,
                               "models": {m["name"]: {"items": m["items"], "oov_items": m["oov_items"]}
                                          for m in summary["models"]},
                               "human_matched_items": (summary["humans"] or {}).get("matched_items"),
                               "skipped": notes, "tokens_rows": tokens_rows,
                               **({"prediction_rows": len(predictions)} if predictions else {})},
                           scoring=scoring, execution=sharded.describe())
    sharded.finish()
    return ScoreRun(summary, rows, main_table(results))


def _parameters(testsets, specs, o: ScoreOptions, seed: int) -> dict:
    return {"testsets": testsets, "models": [f"{s.group}={s.directory}" for s in specs],
            "from_outputs": o.from_outputs, "humans": o.humans, "require_in_vocab": o.require_in_vocab,
            "carry_state": o.carry_state, "batch_size": o.batch_size, "device": o.device, "dtype": o.dtype,
            "engine": o.engine, "threads": o.threads, "seed": seed, "method": o.method, "format": o.fmt,
            "surprisal": o.surprisal, "units": o.units, "reference": o.reference,
            **({"curve": True} if o.curve else {}), **({"lang": o.lang} if o.lang else {}),
            "convention": o.convention}


def _humans(humans: Path | None, sets) -> HumanIndex | None:
    """Per-item human judgments, or None (none given, or BLiMP's per-paradigm shares,
    joined after scoring by formats.published)."""
    if humans is None or is_blimp_humans(humans):
        return None
    index = HumanIndex(read_humans(humans))
    n = check_coverage(index, [it for ts in sets for it in ts.items], humans)
    log.info(f"{humans}: {len(index)} judged items, {n} test items matched")
    return index


def _load_sets(testsets, fmt: str, method: str, root=None, lang: str | None = None):
    """Load every TESTSET; with --method target drop the pairs it cannot score, and
    count them. Returns (sets, notes for stderr / summary.md / manifest)."""
    sets, notes, dropped_by_readers = [], [], set()
    for t in testsets:
        ts = load_testset(rooted(root, t), fmt, lang=lang)
        if root is not None:
            ts = dataclasses.replace(ts, label=str(t))
        dropped_by_readers.update(ts.notes)   # skipped pairs: a warning below, even with --quiet
        notes += list(ts.notes) + list(ts.info) + [n for n in [multiword_note(ts.label, ts.items, method)] if n]
        kept, skipped = split_for_method(ts.items, method)
        if skipped:
            notes.append(f"{ts.label}: {skipped} of {len(ts.items)} pairs skipped by --method target "
                         "(they differ in more than one word, or BLiMP marks them not one-prefix; "
                         "--method sentence scores them)")
            if not kept:
                raise AgreeError(f"{literal(ts.label)}: no pair can be scored with {{method}} target "
                                 f"({skipped} skipped); use {{method}} sentence", fields=True)
            ts = dataclasses.replace(ts, items=tuple(kept))
        log.info(f"{ts.label}: {ts.kind} test set, {len(ts.items)} items")
        sets.append(ts)
    for n in notes:
        if n in dropped_by_readers:
            log.warning(f"Warning: {n}")
        else:
            log.info(n)
    if not any(ts.items for ts in sets):
        raise AgreeError(f"nothing to score: {', '.join(ts.label for ts in sets)} "
                         f"{'has' if len(sets) == 1 else 'have'} no items (an empty test set: "
                         f"did agree extract find no constructions?)")
    return sets, notes


def _score(tmp: Path, sets, specs, surprisal: bool, units: str, **options):
    """score_testsets, writing tokens.tsv into ``tmp`` with --surprisal; returns
    (scored items, tokens.tsv rows or None)."""
    if not surprisal:
        return score_testsets(sets, specs, **options), None
    with SurprisalWriter(tmp / TOKENS_FILE, units) as writer:
        scored = score_testsets(sets, specs, on_words=writer.add, **options)
    return scored, writer.rows


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Torch's CPU threads while the models score (None: left as it is)."""
    if n is None:
        yield
        return
    import torch  # lazy: heavy, and only neural models need it

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _testset_paths(testsets, fmt: str, root=None) -> list:
    """Every file the test sets are read from."""
    return [p for t in testsets for p in testset_inputs(rooted(root, t), fmt)]


def _inputs(testsets, fmt: str, specs, humans, reference, root=None) -> list[str]:
    """Every input file or directory, once, named as given, for the manifest."""
    inputs = [as_given(p, root) for t in testsets
              for p in testset_inputs(rooted(root, t), fmt)]
    inputs += [s.directory for s in specs] + ([humans] if humans else [])
    inputs += [reference] if reference else []
    return list(dict.fromkeys(str(p) for p in inputs))


def _published(humans, reference, scored, root=None) -> dict:
    """BLiMP per-paradigm humans and published accuracies as summary parts (their
    sources named as given)."""
    out = {}
    if humans:
        out["paradigm_humans"] = humans_summary(read_blimp_humans(rooted(root, humans)), scored, humans)
    if reference:
        out["reference"] = reference_summary(read_reference(rooted(root, reference)), scored, reference)
    return out

