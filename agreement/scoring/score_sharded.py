"""Scoring items by shards through an executor, keeping each finished shard
(:mod:`agreement.scoring.shard_store`) so that a rerun of the same command scores only the rest.

:func:`score_sharded` is :func:`agreement.scoring.score.score_in_process`'s twin: the same
records in the same order (model-major, items in test-set order), the same checks
(a model that knows none of the target forms; ``require_in_vocab``), the same
conventions for the manifest; only where the models run differs.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from treebanks.errors import literal
from agreement.errors import AgreeError
from agreement.scoring.executors.base import Executor
from agreement.scoring.score import ModelScores, item_methods
from agreement.scoring.shard_store import (SHARD_SIZE, ModelJob, ShardResult, ShardStore, ShardTask, VocabResult,
                              items_digest, model_job, shard_tasks, testset_checksums, vocab_key)
from formats.items import Item
from treebanks.progress import progress
from formats.scored import ScoredTable, empty
from lm.backends import ModelLoading
from lm.base import space_after_of
from lm.errors import FieldError
from lm.load import resolve_engine

log = logging.getLogger(__name__)


@dataclass
class ShardRun:
    """How a sharded run went, for the manifest and stderr: ``shards`` in all,
    ``kept`` from an earlier run, ``scored`` now."""
    shards: int = 0
    kept: int = 0
    scored: int = 0


def model_jobs(specs, executor: Executor, loading: ModelLoading) -> list[ModelJob]:
    """One :class:`ModelJob` per model: the executor's threads as the model's, a GGUF
    file's engine chosen once here (so every worker runs the same one). Every load option
    may change a model's scores: all of them are part of its shards' checksums."""
    jobs = []
    for spec in specs:
        options = loading
        if executor.threads is not None:
            options = dataclasses.replace(options, threads=executor.threads)
        engine = resolve_engine(spec, options.engine, dtype=options.dtype, device=options.device)
        if engine is not None:
            options = dataclasses.replace(options, engine=engine)
        jobs.append(model_job(spec, options, executor.threads, dataclasses.asdict(options)))
    return jobs


def run_record(jobs: Sequence[ModelJob], testset_paths: Sequence, method: str) -> dict:
    """What ``run.json`` keeps: each model's key, files and options; the test sets' files."""
    return {"method": method, "testsets": testset_checksums(testset_paths),
            "models": {j.spec.name: {"key": j.key, "directory": str(j.spec.directory), **j.files}
                       for j in jobs}}


def score_sharded(items: Sequence[Item], labels: Sequence[str], jobs: Sequence[ModelJob], *,
                  executor: Executor, store: ShardStore, require_in_vocab: bool = False,
                  method: str = "target", on_words: Callable | None = None,
                  run: ShardRun | None = None, shard_size: int | None = None) -> ModelScores:
    """Score ``items`` (test-set ``labels`` aligned) with every model of ``jobs`` through
    ``executor``, keeping finished shards in ``store``. ``on_words`` as for
    :func:`agreement.scoring.score.score_items`; ``run`` receives the counts."""
    run = run if run is not None else ShardRun()
    items, labels = list(items), list(labels)
    for line in store.prune_others(jobs):
        log.info(line)
    digest = items_digest(items)
    vocabs: dict[str, VocabResult] = {}
    keep = list(range(len(items)))
    if require_in_vocab and jobs:          # every vocabulary before any scoring
        for job in jobs:
            vocabs[job.key] = _vocab(job, items, digest, method, executor, store)
            executor.pause(job)
        keep = [i for i in range(len(items)) if not any(vocabs[j.key].oov[i] for j in jobs)]
        if not keep:
            raise AgreeError("{require_in_vocab}: no item is fully in the vocabulary of every model "
                             f"({len(items)} items, models: {literal(', '.join(j.spec.name for j in jobs))})",
                             fields=True)
    kept_items, kept_labels = [items[i] for i in keep], [labels[i] for i in keep]
    out: list[ScoredTable] = []
    conventions: dict[str, dict] = {}
    for job in jobs:
        v = vocabs.get(job.key) or _vocab(job, items, digest, method, executor, store)
        tasks = shard_tasks(job, kept_items, method, on_words is not None,
                            **({"size": shard_size} if shard_size else {}))
        why = store.prune_model(job, {"vocab-" + vocab_key(job, digest, method)} | {t.key for t in tasks})
        if why:
            log.info(why)
        missing = [t for t in tasks if not store.has(job, t.key)]
        run.shards, run.kept, run.scored = (run.shards + len(tasks), run.kept + len(tasks) - len(missing),
                                            run.scored + len(missing))
        if store.resumed:   # a fresh run has nothing kept to speak of
            log.info(f"{job.spec.name}: {len(tasks) - len(missing)} of {len(tasks)} shards finished earlier "
                     f"(kept), {len(missing)} to score")
        _score_missing(job, missing, len(kept_items), executor, store)
        executor.release(job)
        counts, notes = _records(job, tasks, v, [v.oov[i] for i in keep], [v.pieces_differ[i] for i in keep],
                          kept_labels, store, method, on_words, out)
        conventions[job.spec.name] = {**{k: (x + counts[k] if k in counts else x)
                                         for k, x in v.conventions.items()}, **notes}
    return ModelScores(ScoredTable.concat(out), conventions)


def _vocab(job: ModelJob, items, digest: str, method: str, executor: Executor, store: ShardStore) -> VocabResult:
    key = vocab_key(job, digest, method)
    v = store.load_vocab(job, key)
    if v is None:
        v = executor.vocab(job, items, method)
        store.save_vocab(job, key, v)
    return v


def _score_missing(job: ModelJob, missing: Sequence[ShardTask], total: int, executor: Executor,
                   store: ShardStore) -> None:
    """Score the missing shards, each written to ``store`` as it completes."""
    done = total - sum(len(t.items) for t in missing)
    bar = progress(log, total=total, initial=done, desc=f"scoring {job.spec.name}", unit="item")

    def on_done(task: ShardTask, result: ShardResult) -> None:
        store.save_shard(job, task, result)
        bar.update(len(task.items))

    try:
        executor.score(job, missing, on_done)
    finally:
        bar.close()


def _records(job: ModelJob, tasks: Sequence[ShardTask], v: VocabResult, oov, differ, labels,
             store: ShardStore, method: str, on_words, out: list) -> dict:
    """Append the model's scored rows (a table per shard, in order) to ``out``, hand each shard's
    words to ``on_words``; returns the scorer's counts summed over shards and what it
    noted while scoring (conventions that appeared or changed)."""
    name, group = job.spec.name, job.spec.group or v.kind or job.spec.name
    counts: dict = {}
    notes: dict = {}
    for task in tasks:
        r = store.load_shard(job, task)
        s = task.start
        n = len(task.items)
        logp = np.asarray(r.logp, dtype=float).reshape(n, 2)
        out.append(ScoredTable.of_items(task.items, model=name, group=group, kind=v.kind,
                                        logp_correct=logp[:, 0], logp_wrong=logp[:, 1], oov=oov[s:s + n],
                                        testset=labels[s:s + n], method=item_methods(task.items, method),
                                        pieces_differ=differ[s:s + n]))
        if on_words is not None:
            on_words(_Pieces(name, r.pieces or []), task.items, labels[s:s + len(task.items)], r.good, r.bad)
        for k, x in r.counts.items():
            counts[k] = counts.get(k, 0) + x
        for k, x in r.notes.items():   # the first shard's, as one process notes them first
            notes.setdefault(k, x)
    return counts, notes


class _Pieces:
    """A scored shard's answer to what tokens.tsv asks of a scorer: its name and the pieces
    each word of a sentence owns (as the worker's scorer read that sentence)."""

    def __init__(self, name: str, pieces: list):
        self.name = name
        self._pieces = {(tuple(words), tuple(spaces)): p for words, spaces, p in pieces}

    def sentence_pieces(self, sentence) -> list[list[str]]:
        return self._pieces[(tuple(sentence), tuple(space_after_of(sentence) or ()))]


class ShardedScoring:
    """``score_models`` for :func:`agreement.scoring.score.score_testsets`: the models score
    through ``executor`` (started and closed around the call), finished shards kept in
    the work directory beside ``target`` (the resolved output directory). Used as a
    context manager around the writing of that directory: when it is written the work
    directory goes; when anything fails (scoring, or a step after it) the finished shards
    are kept, and said to be, so that the same call scores only the rest."""

    def __init__(self, target, executor: Executor, *, shard_size: int | None = None):
        self.target, self.executor, self.shard_size = target, executor, shard_size
        self.run = ShardRun()
        self.store: ShardStore | None = None

    def __call__(self, testsets, specs, loading: ModelLoading, *, require_in_vocab: bool, method: str,
                 on_words) -> ModelScores:
        if not specs:
            return ModelScores(empty(), {})
        if loading.carry_state:
            raise FieldError("{carry_state} reads every item as one stream, in order, in one process: "
                             "it cannot be sharded over workers (leave out {executor} ray)")
        with self.executor:                  # started by its first model that needs scoring
            jobs = model_jobs(specs, self.executor, loading)
            files = [f for ts in testsets for f in ts.files]   # run.json names the one that changed
            self.store = ShardStore.open(self.target, run_record(jobs, files, method))
            return score_sharded([it for ts in testsets for it in ts.items],
                                 [ts.label for ts in testsets for _ in ts.items], jobs,
                                 executor=self.executor, store=self.store, require_in_vocab=require_in_vocab,
                                 method=method, on_words=on_words, run=self.run, shard_size=self.shard_size)

    def __enter__(self) -> "ShardedScoring":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self.store is None:
            return
        n = self.store.shard_count() if exc_type is not None else 0
        if n:
            log.info(f"kept {n} finished shard(s) in {self.store.directory}: run the same command again "
                     "to score only the rest")
        else:                                # written, or nothing worth keeping
            self.store.remove()

    def describe(self) -> dict:
        """The manifest's record of how the run was executed."""
        return {**self.executor.describe(), "shards": self.run.shards,
                "shard_size": self.shard_size or SHARD_SIZE}
