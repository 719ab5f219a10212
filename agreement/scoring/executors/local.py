"""The in-process executor: every shard scored here, in order, by a model loaded once."""
from __future__ import annotations

from typing import Callable, Sequence

from agreement.scoring.executors.base import Executor
from agreement.scoring.executors.worker import ModelWorker
from agreement.scoring.shard_store import ModelJob, ShardResult, ShardTask, VocabResult
from formats.items import Item


class InProcessExecutor(Executor):
    """Scores in this process. ``threads``: the model's CPU threads (None: each
    library's default; the caller sets torch's for this process). A model stays loaded
    from its first use until :meth:`release` (or :meth:`close`)."""

    name = "in-process"

    def __init__(self, threads: int | None = None):
        self.workers, self.threads = 1, threads
        self._loaded: dict[str, ModelWorker] = {}

    def _worker(self, job: ModelJob) -> ModelWorker:
        if job.key not in self._loaded:
            self._loaded[job.key] = ModelWorker(job, set_threads=False)
        return self._loaded[job.key]

    def vocab(self, job: ModelJob, items: Sequence[Item], method: str) -> VocabResult:
        return self._worker(job).vocab(items, method)

    def score(self, job: ModelJob, tasks: Sequence[ShardTask],
              on_done: Callable[[ShardTask, ShardResult], None]) -> None:
        worker = self._worker(job)
        for task in tasks:
            on_done(task, worker.score(task))

    def release(self, job: ModelJob) -> None:
        worker = self._loaded.pop(job.key, None)
        if worker is not None:
            worker.close()

    def close(self) -> None:
        for key in list(self._loaded):
            self._loaded.pop(key).close()
