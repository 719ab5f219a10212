"""The scoring stage of ``agree score``: the test sets read once and prepared for the
method (:func:`load_testsets`), and the scored files written with one
:class:`~agreement.scoring.score.Scoring` record returned (:func:`score_into`). Each reads
the records of :mod:`agreement.scoring.settings` it needs, no more.
What is reported of it is :mod:`agreement.reporting`'s; the whole directory is
:func:`agreement.score_dir.score_to_dir`'s.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
from pathlib import Path
from typing import Callable, Iterator, Sequence

from agreement.errors import AgreeError
from agreement.scoring.score import Scoring, score_testsets, split_for_method
from agreement.scoring.settings import ModelLoading, Reporting, WhatToScore
from agreement.scoring.span import multiword_note
from agreement.scoring.surprisal import TOKENS_FILE, SurprisalWriter
from agreement.scoring.syntaxgym import PREDICTIONS_FILE, write_predictions
from formats.run import RunContext
from formats.scored import write_scored
from formats.testsets import TestSet, load_testset
from lm.load import ModelSpec
from lm.heavy_import import import_heavy
from treebanks.errors import literal

log = logging.getLogger(__name__)

def load_testsets(run: RunContext, testsets: Sequence[str], what: WhatToScore) -> tuple[TestSet, ...]:
    """Each TESTSET argument detected and read once (read from ``run.root``, named as
    given); with the target method the pairs it cannot score are set apart and counted.
    What the readers skipped is a warning (even with ``--quiet``), what they found and
    what the method set apart an info line; all of it stays in the test sets' ``notes``
    and ``info`` (:attr:`Scoring.notes`: summary.md and the manifest)."""
    sets = []
    for t in testsets:
        sets.append(_for_method(load_testset(run.path(t), what.fmt, label=str(t), lang=what.lang), what.method))
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


def score_into(directory: Path, testsets: Sequence[TestSet], specs: Sequence[ModelSpec], what: WhatToScore,
               loading: ModelLoading, reporting: Reporting, score_models: Callable | None = None,
               torch_threads: int | None = None) -> Scoring:
    """Score ``testsets`` with ``specs`` (and the .tab columns ``what`` names) and write
    the scored files into ``directory``: items.tsv, tokens.tsv with ``reporting``'s
    ``surprisal``, predictions.tsv for SyntaxGym suites. ``score_models``: as for
    :func:`agreement.scoring.score.score_testsets` (None: in this process);
    ``torch_threads``: torch's CPU threads while scoring where ``loading`` gives none."""
    if loading.carry_state:   # one stream, in order, in one process: not by shards
        score_models = None
    with _torch_threads(loading.threads if loading.threads is not None else torch_threads), \
            _surprisal(directory, reporting) as writer:
        scoring = score_testsets(testsets, specs, what, loading, on_words=writer.add if writer else None,
                                 score_models=score_models)
    write_scored(directory / "items.tsv", scoring.table)
    if scoring.predictions:
        write_predictions(directory / PREDICTIONS_FILE, scoring.predictions)
    return dataclasses.replace(scoring, tokens_rows=writer.rows if writer else None)


@contextlib.contextmanager
def _surprisal(directory: Path, reporting: Reporting) -> Iterator[SurprisalWriter | None]:
    """tokens.tsv's writer with ``surprisal``, else None."""
    if not reporting.surprisal:
        yield None
        return
    with SurprisalWriter(directory / TOKENS_FILE, reporting.units) as writer:
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
