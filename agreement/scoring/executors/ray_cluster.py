"""The Ray executor: ``workers`` actors per model, each loading the model once and
scoring shards handed out as the actors free up.

Ray's own conventions: an address (``ray_address``, else ``RAY_ADDRESS``) joins that
cluster; without one a local cluster starts on this machine for the run and stops
after it. Each actor reserves ``threads`` CPUs (the model's threads) and, where the
cluster has GPUs and the model's device allows one, one GPU. A killed actor is
restarted by Ray (the model loaded again) and its shards are retried
(``max_restarts``/``max_task_retries``); a shard whose actor dies more often than that
ends the run with the finished shards kept, for a rerun to resume.

The cluster is joined or started by :class:`agreement.cluster.RayCluster` (ray is imported
only when this executor starts: it is an optional extra, and heavy).
"""
from __future__ import annotations

import os
from typing import Callable, Sequence

from agreement.cluster import RayCluster, first_line
from agreement.errors import AgreeError, DomainError
from agreement.scoring.executors.base import Executor
from agreement.scoring.executors.worker import GuardedWorker
from agreement.scoring.shard_store import ModelJob, ShardResult, ShardTask, VocabResult
from formats.items import Item
from lm.errors import FieldError

#: restarts of a killed actor, and retries of the shards it held
MAX_RESTARTS = 3
#: shards queued per actor: one scoring, one waiting (the actor never idles on the driver)
IN_FLIGHT = 2


class RayExecutor(Executor):
    """``workers`` Ray actors per model at ``threads`` CPUs each; ``address``: the
    cluster to join (None: ``RAY_ADDRESS``, else a local cluster for the run)."""

    name = "ray"
    #: the actor class (a subclass in tests makes a worker die at a chosen shard)
    worker_class = GuardedWorker

    def __init__(self, workers: int = 2, threads: int = 1, address: str | None = None,
                 max_restarts: int = MAX_RESTARTS):
        if workers < 1:
            raise FieldError(f"{{workers}} must be at least 1 (got {workers})")
        self.workers, self.threads = workers, threads
        self.address = address
        self.max_restarts = max_restarts
        self.cluster = RayCluster(workers, threads, address)
        self._pools: dict[str, list] = {}
        self.gpus_per_worker = 0

    # ---- the cluster (agreement.cluster) -------------------------------------------
    @property
    def ray(self):
        """The ray module, once the cluster has started."""
        return self.cluster.ray

    def start(self) -> None:
        self.cluster.start()

    def close(self) -> None:
        for key in list(self._pools):
            self._kill(key)
        self.cluster.close()

    def describe(self) -> dict:
        return {**super().describe(), "gpus_per_worker": self.gpus_per_worker}

    # ---- the workers -------------------------------------------------------------
    def _gpus(self, job: ModelJob) -> list[int]:
        """[1] when each actor gets a GPU: the cluster has one and the device allows it."""
        device = str(job.options.device or "auto")
        has = self.ray.cluster_resources().get("GPU", 0) >= 1
        return [1] if has and device != "cpu" else []

    def _pool(self, job: ModelJob) -> list:
        """The model's actors, started and loaded (raises the first load error)."""
        if job.key in self._pools:
            return self._pools[job.key]
        self.start()
        gpus = self._gpus(job)
        total = self.ray.cluster_resources().get("GPU", 0)
        if gpus and total < self.workers:
            raise FieldError(f"{{workers}} {self.workers}: each worker needs a GPU and the Ray "
                             f"cluster has {int(total)} (or give {{device}} cpu)")
        self.gpus_per_worker = max(self.gpus_per_worker, len(gpus))
        actor = self.ray.remote(self.worker_class).options(
            num_cpus=self.threads, num_gpus=len(gpus), max_restarts=self.max_restarts,
            max_task_retries=self.max_restarts)
        cwd = os.getcwd()
        self._pools[job.key] = actors = [actor.remote(job, cwd) for _ in range(self.workers)]
        for ref in [a.ready.remote() for a in actors]:
            self._value(ref, job)           # each model loaded, or its load error raised here
        return actors

    def _value(self, ref, job: ModelJob):
        """A GuardedWorker call's value; its error (or the actor's death) raised here."""
        from ray.exceptions import RayActorError, RayTaskError  # lazy: ray is optional

        try:
            error, value = self.ray.get(ref)
        except RayActorError as e:
            self._kill(job.key)
            raise AgreeError(f"a Ray worker for {job.spec.name} died {self.max_restarts + 1} times "
                             f"({first_line(e)}); the finished shards are kept: run the same "
                             "command again to score the rest") from None
        except RayTaskError as e:
            if isinstance(e.cause, (DomainError, OSError)):
                raise e.cause from None
            raise
        if error is not None:
            self._kill(job.key)
            raise error
        return value

    def _kill(self, key: str) -> None:
        for a in self._pools.pop(key, []):
            self.ray.kill(a, no_restart=True)

    # ---- the work ----------------------------------------------------------------
    def vocab(self, job: ModelJob, items: Sequence[Item], method: str) -> VocabResult:
        actors = self._pool(job)
        return self._value(actors[0].vocab.remote(list(items), method), job)

    def score(self, job: ModelJob, tasks: Sequence[ShardTask],
              on_done: Callable[[ShardTask, ShardResult], None]) -> None:
        if not tasks:
            return
        actors = self._pool(job)
        queue, pending = list(tasks), {}
        slots = [a for _ in range(IN_FLIGHT) for a in actors]
        while queue or pending:
            while queue and slots:
                task, actor = queue.pop(0), slots.pop(0)
                pending[actor.score.remote(task)] = (task, actor)
            (ref,), _ = self.ray.wait(list(pending), num_returns=1)
            task, actor = pending.pop(ref)
            on_done(task, self._value(ref, job))
            slots.append(actor)

    def pause(self, job: ModelJob) -> None:
        self._kill(job.key)

    def release(self, job: ModelJob) -> None:
        self._kill(job.key)
