"""What runs where a model is loaded, whichever executor placed it there: load the
model once, say what it knows of the items, score shards.

:class:`ModelWorker` is the in-process executor's and every Ray actor's (wrapped in
:class:`GuardedWorker`, which hands domain errors back as values so that the driver
raises them as they are: one ``Error:`` line, not a remote traceback).
"""
from __future__ import annotations

import os
import socket
import sys
from typing import Sequence

from agreement.errors import DomainError
from agreement.scoring.score import load_scorers, oov_flags, piece_flags, score_chunk, sentence_pair
from agreement.scoring.shard_store import ModelJob, ShardResult, ShardTask, VocabResult
from formats.items import Item
from lm.base import space_after_of


class ModelWorker:
    """One model, loaded once (``job``: :class:`agreement.scoring.shard_store.ModelJob`). With
    ``set_threads`` (a worker process of its own), torch's CPU threads are set to
    ``job.threads`` when given."""

    def __init__(self, job: ModelJob, set_threads: bool = True):
        self.job = job
        self.scorer = load_scorers([job.spec], job.options)[0]
        if set_threads and job.threads is not None and "torch" in sys.modules:  # a torch model
            sys.modules["torch"].set_num_threads(job.threads)

    def vocab(self, items: Sequence[Item], method: str) -> VocabResult:
        """OOV and pieces-differ flags of every item (raises when the model knows none of
        the target forms), with the scorer's kind and conventions."""
        oov = oov_flags(items, self.scorer, method)
        return VocabResult(oov, piece_flags(items, self.scorer), self.scorer.kind, self.scorer.conventions())

    def score(self, task: ShardTask) -> ShardResult:
        """Score one shard; counts the scorer keeps (int conventions that grow) are
        returned as this shard's share."""
        before = self.scorer.conventions()
        words: list = []
        on_words = (lambda _s, _b, _l, good, bad: words.extend([good, bad])) if task.words else None
        logp = score_chunk(self.scorer, task.items, task.method, on_words, [""] * len(task.items))
        after = self.scorer.conventions()
        counts = {k: v - before[k] for k, v in after.items()
                  if isinstance(v, int) and not isinstance(v, bool) and isinstance(before.get(k), int)
                  and v != before[k]}
        # what the scorer first noted while scoring (e.g. the example of what it read)
        notes = {k: v for k, v in after.items() if k not in counts and before.get(k) != v
                 and not (isinstance(v, int) and not isinstance(v, bool))}
        result = ShardResult(logp, counts=counts, notes=notes)
        if task.words:
            result.good, result.bad = [list(words[0]), list(words[1])]
            # the pieces each word owns in its sentence, as the model read it (tokens.tsv)
            result.pieces = [[list(sentence), list(space_after_of(sentence) or ()),
                              [list(p) for p in self.scorer.sentence_pieces(sentence)]]
                             for it in task.items for sentence in sentence_pair(it)]
        return result

    def close(self) -> None:
        self.scorer.close()


class GuardedWorker:
    """A :class:`ModelWorker` whose faults come back as values: each method returns
    ``(None, value)`` or ``(error, None)``, a domain error or OSError raised where the
    model runs (a path this machine cannot read, a broken model file ...). ``cwd``: the
    driver's working directory, entered when it exists here, so that model paths given
    relative to it mean the same file."""

    def __init__(self, job: ModelJob, cwd: str | None = None):
        if cwd and os.path.isdir(cwd):
            os.chdir(cwd)
        self.error, self.worker = None, None
        try:
            self.worker = ModelWorker(job)
        except (DomainError, OSError) as e:
            self.error = e

    def ready(self):
        """(error, None), or (None, (host, pid)) once the model is loaded."""
        return (self.error, None) if self.error else (None, (socket.gethostname(), os.getpid()))

    def vocab(self, items, method):
        return self._call(lambda: self.worker.vocab(items, method))

    def score(self, task: ShardTask):
        return self._call(lambda: self.worker.score(task))

    def _call(self, fn):
        if self.error:
            return self.error, None
        try:
            return None, fn()
        except (DomainError, OSError) as e:
            return e, None
