"""The Ray executor: ``workers`` actors per model, each loading the model once and
scoring shards handed out as the actors free up.

Ray's own conventions: an address (``ray_address``, else ``RAY_ADDRESS``) joins that
cluster; without one a local cluster starts on this machine for the run and stops
after it. Each actor reserves ``threads`` CPUs (the model's threads) and, where the
cluster has GPUs and the model's device allows one, one GPU. A killed actor is
restarted by Ray (the model loaded again) and its shards are retried
(``max_restarts``/``max_task_retries``); a shard whose actor dies more often than that
ends the run with the finished shards kept, for a rerun to resume.

ray is imported only when this executor starts (it is an optional extra, and heavy).
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
from typing import Callable, Sequence

from agreement.errors import AgreeError, DomainError
from agreement.scoring.executors.base import Executor
from agreement.scoring.executors.worker import GuardedWorker
from agreement.scoring.shards import ModelJob, ShardResult, ShardTask, VocabResult
from formats.distribution import install_command
from formats.items import Item
from lm.errors import FieldError, literal

log = logging.getLogger(__name__)

INSTALL_HINT = install_command("cluster")
#: restarts of a killed actor, and retries of the shards it held
MAX_RESTARTS = 3
#: seconds to wait for a cluster's address to answer, and for Ray to start or join one
CONNECT_TIMEOUT_S = 5.0
JOIN_TIMEOUT_S = 30.0
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
        self.ray = None
        self._started = self._disconnect = False
        self._pools: dict[str, list] = {}
        self.gpus_per_worker = 0

    # ---- the cluster -------------------------------------------------------------
    def start(self) -> None:
        if self._started:
            return
        self.ray = _import_ray()
        if not self.ray.is_initialized():    # else: the caller's cluster (a library user, the tests)
            address, source = (self.address, "{ray_address}") if self.address else \
                (os.environ.get("RAY_ADDRESS") or None, "RAY_ADDRESS")
            if address:
                _check_reachable(address, source)
                self._init(address=address, source=source)
            else:
                log.info(f"starting a local Ray cluster ({self.workers} workers x {self.threads} CPUs)")
                self._init(num_cpus=self.workers * self.threads)
        self._check_capacity()
        self._started = True

    def _init(self, source: str = "", **kw) -> None:
        where = f"the Ray cluster at {literal(kw['address'])} ({source})" if "address" in kw \
            else "a local Ray cluster"
        if "address" in kw:
            _probe(kw["address"], where)
        # ray.init runs in this (the main) thread: started from another thread, the
        # connection to the cluster's control store dies a minute later (Ray 2.60)
        try:
            with _quiet_fd2("address" in kw):
                # Ray's own log lines would break "one Error: line"; its workers' output too
                self.ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR,
                              configure_logging=True, **kw)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as e:
            raise FieldError(f"cannot start or join {where}: {literal(_first_line(e))}") from None
        self._disconnect = True

    def _check_capacity(self) -> None:
        total = self.ray.cluster_resources()
        need = self.workers * self.threads
        if total.get("CPU", 0) < need:
            raise FieldError(f"{{workers}} {self.workers} x {{threads}} {self.threads} need {need} CPUs; "
                             f"the Ray cluster has {int(total.get('CPU', 0))}")

    def close(self) -> None:
        for key in list(self._pools):
            self._kill(key)
        if self._disconnect and self.ray is not None:
            self.ray.shutdown()          # stops the cluster when we started it, else disconnects
            self._disconnect = False
        self._started = False

    def describe(self) -> dict:
        return {**super().describe(), "gpus_per_worker": self.gpus_per_worker}

    # ---- the workers -------------------------------------------------------------
    def _gpus(self, job: ModelJob) -> list[int]:
        """[1] when each actor gets a GPU: the cluster has one and the device allows it."""
        device = str(job.options.get("device") or "auto")
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
                             f"({_first_line(e)}); the finished shards are kept: run the same "
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


@contextlib.contextmanager
def _quiet_fd2(active: bool):
    """Standard error (the file descriptor: Ray's C++ core writes there, and its retry
    lines while joining a cluster would break "one Error: line") to nowhere meanwhile."""
    if not active:
        yield
        return
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _import_ray():
    try:
        import ray  # lazy: an optional extra, and a second to import
    except ImportError:
        raise AgreeError(f"the ray executor needs Ray ({INSTALL_HINT})") from None
    return ray


def _check_reachable(address: str, source: str) -> None:
    """Fail within seconds when nothing answers at ``address`` (Ray itself would retry
    for a minute or more). ``auto``/``local`` are Ray's own words, left to it."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise FieldError(f"the Ray address {literal(address)} ({source}) is not HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise FieldError(f"cannot reach the Ray cluster at {literal(address)} ({source}): "
                         f"{literal(reason)}") from None


#: joins the cluster at argv[1] and leaves; prints why not on stdout (one line)
_PROBE = """import logging, sys
import ray
try:
    ray.init(address=sys.argv[1], include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
except Exception as e:
    print((str(e).strip().splitlines() or [type(e).__name__])[0]); sys.exit(1)
ray.shutdown()
"""


def _probe(address: str, where: str) -> None:
    """Join ``address`` once in a child process, bounded in time: something that answers
    there but is not a Ray cluster makes ray.init retry for minutes, and a Ray call cannot
    be bounded from another thread of this process (see RayExecutor._init)."""
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, address], capture_output=True, text=True,
                              timeout=JOIN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise FieldError(f"{where} did not answer as a Ray cluster within {JOIN_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        reason = (done.stdout.strip().splitlines() or ["the probe failed"])[-1]
        raise FieldError(f"cannot start or join {where}: {literal(reason)}")


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
