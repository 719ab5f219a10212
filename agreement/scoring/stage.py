"""The scoring stage of ``agree score``: how to score (:class:`ScoreOptions`), the test sets
read once and prepared for the method (:func:`load_testsets`), and the scored files written
with one :class:`~agreement.scoring.score.Scoring` record returned (:func:`score_into`).
What is reported of it is :mod:`agreement.reporting`'s; the whole directory is
:func:`agreement.score_dir.score_to_dir`'s.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from agreement.errors import AgreeError
from agreement.scoring.executors import Executor, make_executor
from agreement.scoring.score import Scoring, score_testsets, split_for_method
from agreement.scoring.span import multiword_note
from agreement.scoring.surprisal import TOKENS_FILE, SurprisalWriter
from agreement.scoring.syntaxgym import PREDICTIONS_FILE, write_predictions
from formats.run import RunContext
from formats.scored import write_scored
from formats.testsets import TestSet, load_testset
from lm.load import ModelSpec
from lm.heavy import import_heavy
from treebanks.errors import literal

log = logging.getLogger(__name__)

#: metadata of a :class:`ScoreOptions` field: where and how fast the models run, not what
#: they compute (the manifest records it under ``execution``, not ``parameters``)
HOW = {"how": True}
#: metadata of a field recorded only when set (manifests from before it lack it)
WHEN_SET = {"when_set": True}


@dataclass(frozen=True)
class ScoreOptions:
    """How to score. The manifest records every field that changes the results
    (:meth:`parameters`), in this order.

    from_outputs: model columns of a paper .tab used instead of models; humans,
    reference: judgment and published-accuracy files; require_in_vocab: only items every
    model's vocabulary covers; carry_state: the hidden state carried across sentences;
    batch_size, device, dtype, engine, threads: model options (None: the backend's
    default; threads: each model's CPU threads, llama.cpp's and torch's); method:
    ``target`` or ``sentence``; fmt: the format of every test set (``auto``);
    surprisal/units: tokens.tsv; curve: the models are the points of learning curves
    (:mod:`agreement.scoring.curve`); lang: a test set's language where its files do not
    say it (CLAMS); convention: the text subword models read (:mod:`lm.pieces`);
    normalize, unigram: whole-sentence scores normalised (:mod:`agreement.scoring.normalize`;
    None: the sum, and neither recorded).
    How the models run, not recorded as parameters: torch_threads: torch's CPU threads
    while scoring when threads is None (None: torch's own setting); executor, workers,
    ray_address: where the models run (:mod:`agreement.scoring.executors`; the manifest
    records them under ``execution``); shard_size: items per shard (None:
    :data:`agreement.scoring.shards.SHARD_SIZE`)."""
    from_outputs: tuple[str, ...] = ()
    humans: str | None = None
    require_in_vocab: bool = False
    carry_state: bool = False
    batch_size: int | None = None
    device: str | None = None
    dtype: str | None = None
    engine: str | None = None
    threads: int | None = None
    method: str = "target"
    fmt: str = field(default="auto", metadata={"recorded": "format"})
    surprisal: bool = False
    units: str = "nats"
    reference: str | None = None
    curve: bool = field(default=False, metadata=WHEN_SET)
    lang: str | None = field(default=None, metadata=WHEN_SET)
    convention: str = "agree"
    normalize: str | None = field(default=None, metadata=WHEN_SET)
    unigram: str | None = field(default=None, metadata=WHEN_SET)
    torch_threads: int | None = field(default=None, metadata=HOW)
    executor: str = field(default="in-process", metadata=HOW)
    workers: int | None = field(default=None, metadata=HOW)
    ray_address: str | None = field(default=None, metadata=HOW)
    shard_size: int | None = field(default=None, metadata=HOW)

    def model_options(self) -> dict:
        """The options every model is loaded with (those set)."""
        return {k: v for k, v in (("batch_size", self.batch_size), ("device", self.device), ("dtype", self.dtype),
                                  ("engine", self.engine), ("threads", self.threads),
                                  ("convention", self.convention)) if v is not None}

    def parameters(self, seed: int) -> dict:
        """The fields that change the results as the manifest records them (``fmt`` as
        ``format``; ``curve`` and ``lang`` only when set), with the run's ``seed`` where
        manifests have always had it, after the model options."""
        out: dict = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("how") or (f.metadata.get("when_set") and not value):
                continue
            if f.name == "method":
                out["seed"] = seed
            out[f.metadata.get("recorded", f.name)] = value
        return out

    def make_executor(self) -> Executor:
        """The executor the options name (:func:`agreement.scoring.executors.make_executor`)."""
        return make_executor(self.executor, workers=self.workers, threads=self.threads, address=self.ray_address)


def load_testsets(run: RunContext, testsets: Sequence[str], options: ScoreOptions) -> tuple[TestSet, ...]:
    """Each TESTSET argument detected and read once (read from ``run.root``, named as
    given); with the target method the pairs it cannot score are set apart and counted.
    What the readers skipped is a warning (even with ``--quiet``), what they found and
    what the method set apart an info line; all of it stays in the test sets' ``notes``
    and ``info`` (:attr:`Scoring.notes`: summary.md and the manifest)."""
    sets = []
    for t in testsets:
        sets.append(_for_method(load_testset(run.path(t), options.fmt, label=str(t), lang=options.lang),
                                options.method))
        log.info(f"{sets[-1].label}: {sets[-1].kind} test set, {len(sets[-1].items)} items")
    for ts in sets:
        for note in ts.notes:   # pairs a reader skipped: a warning, shown even when info lines are not
            log.warning(f"Warning: {note}")
        for note in ts.info:
            log.info(note)
    if not any(ts.items for ts in sets):
        raise AgreeError(f"nothing to score: {', '.join(ts.label for ts in sets)} "
                         f"{'has' if len(sets) == 1 else 'have'} no items (an empty test set: "
                         f"did agree extract find no constructions?)")
    return tuple(sets)


def _for_method(ts: TestSet, method: str) -> TestSet:
    """The test set with the items ``method`` scores, and notes on the others and on the
    items scored by their own method."""
    notes = [n for n in [multiword_note(ts.label, ts.items, method)] if n]
    kept, skipped = split_for_method(ts.items, method)
    if skipped:
        notes.append(f"{ts.label}: {skipped} of {len(ts.items)} pairs skipped by the target method "
                     "(they differ in more than one word, or BLiMP marks them not one-prefix; "
                     "the sentence method scores them)")
        if not kept:
            raise AgreeError(f"{literal(ts.label)}: no pair can be scored with {{method}} target "
                             f"({skipped} skipped); use {{method}} sentence", fields=True)
    own = sum(it.scoring == "sentence" for it in kept) if method == "target" else 0
    if own:
        notes.append(f"{ts.label}: {own} of {len(kept)} items scored by whole sentence, as their scoring "
                     "column says (the target precedes its cue: the prefix does not decide), the others "
                     "by the target")
    return dataclasses.replace(ts, items=tuple(kept), info=ts.info + tuple(notes))


def score_into(directory: Path, testsets: Sequence[TestSet], specs: Sequence[ModelSpec], options: ScoreOptions,
               score_models: Callable | None = None) -> Scoring:
    """Score ``testsets`` with ``specs`` (and the .tab columns ``options`` names) and write
    the scored files into ``directory``: items.tsv, tokens.tsv with ``surprisal``,
    predictions.tsv for SyntaxGym suites. ``score_models``: as for
    :func:`agreement.scoring.score.score_testsets` (None: in this process)."""
    if options.carry_state:   # one stream, in order, in one process: not by shards
        score_models = None
    load = {**options.model_options(), "carry_state": options.carry_state}
    with _torch_threads(options.threads if options.threads is not None else options.torch_threads), \
            _surprisal(directory, options) as writer:
        scoring = score_testsets(testsets, specs, from_outputs=options.from_outputs,
                                 require_in_vocab=options.require_in_vocab, method=options.method,
                                 on_words=writer.add if writer else None, score_models=score_models,
                                 normalize=options.normalize or "sum", unigram=options.unigram, **load)
    write_scored(directory / "items.tsv", scoring.table)
    if scoring.predictions:
        write_predictions(directory / PREDICTIONS_FILE, scoring.predictions)
    return dataclasses.replace(scoring, tokens_rows=writer.rows if writer else None)


@contextlib.contextmanager
def _surprisal(directory: Path, options: ScoreOptions) -> Iterator[SurprisalWriter | None]:
    """tokens.tsv's writer with ``surprisal``, else None."""
    if not options.surprisal:
        yield None
        return
    with SurprisalWriter(directory / TOKENS_FILE, options.units) as writer:
        yield writer


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Torch's CPU threads while the models score (None: left as it is)."""
    if n is None:
        yield
        return
    torch = import_heavy("torch")   # lazy: heavy, and only neural models need it
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)
