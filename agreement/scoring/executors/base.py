"""The one interface every executor implements (see :mod:`agreement.scoring.executors`)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Sequence

from agreement.scoring.shard_store import ModelJob, ShardResult, ShardTask, VocabResult
from formats.items import Item


class Executor(ABC):
    """Runs a model's work somewhere. Use as a context manager (closed at its end).

    name     ``in-process`` or ``ray``
    workers  how many copies of a model score shards at once
    threads  CPU threads each copy uses (None: the library's defaults)
    """
    name: str = ""
    workers: int = 1
    threads: int | None = None

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Acquire what the executor needs (a cluster), on first use: a run whose shards
        are all finished starts nothing. Raises a domain error when it cannot."""

    def close(self) -> None:
        """Release everything (models, workers, a cluster started for the run)."""

    @abstractmethod
    def vocab(self, job: ModelJob, items: Sequence[Item], method: str) -> VocabResult:
        """The model's OOV and pieces-differ flags for every item."""

    @abstractmethod
    def score(self, job: ModelJob, tasks: Sequence[ShardTask],
              on_done: Callable[[ShardTask, ShardResult], None]) -> None:
        """Score every shard; ``on_done(task, result)`` is called here, in this process, as
        each one completes (in any order)."""

    def pause(self, job: ModelJob) -> None:
        """The model is not needed now but will be again (its workers may be freed)."""

    def release(self, job: ModelJob) -> None:
        """The model is not needed again."""

    def describe(self) -> dict:
        """What the manifest records of the executor."""
        return {"executor": self.name, "workers": self.workers, "threads_per_worker": self.threads}
