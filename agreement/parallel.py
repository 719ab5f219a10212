"""Running independent tasks side by side: here, in worker processes, or as Ray tasks.

``agree extract-all`` mines one language per task; a task is a module-level function
of one picklable argument that returns a small picklable record and raises nothing it
can report itself (the caller's function catches the faults it expects and says so in
its record). :func:`run_tasks` yields ``(task, result)`` as each finishes, in any order.

* ``local`` with ``workers`` 1: a plain loop in this process (nothing pickled);
* ``local`` with more: a process pool of ``workers`` processes on this machine;
* ``ray``: Ray tasks of one CPU each, ``workers`` at a time, on the cluster at ``address`` (else
  ``RAY_ADDRESS``, else a local cluster of ``workers`` CPUs started for the run and
  stopped after it). The cluster is joined or started by :class:`agreement.cluster.RayCluster`,
  as the scoring executor's is, so the checks and messages are the ones ``agree score
  --executor ray`` gives. A task whose
  worker dies is retried by Ray (``max_retries``). On a cluster of other machines, the
  paths a task reads and writes must be on a file system they share.

This is the general form of what the scoring executors do for models (actors that
load a model once and score shards): a later step could base those on it.
"""
from __future__ import annotations

import logging
from typing import Callable, Iterable, Iterator, Sequence, TypeVar

from agreement.cluster import RayCluster
from agreement.errors import DomainError
from formats.processes import in_processes
from formats.resources import cpu_count
from lm.errors import FieldError

log = logging.getLogger(__name__)

#: where tasks run (``agree extract-all --executor``)
EXECUTORS = ("local", "ray")
#: Ray's retries of a task whose worker died
MAX_RETRIES = 2

T = TypeVar("T")
R = TypeVar("R")
_END = object()  # the end of an iterable of tasks (a task may be any value)


def run_tasks(fn: Callable[[T], R], tasks: Sequence[T] | Iterable[T], *, executor: str = "local",
              workers: int = 1, address: str | None = None) -> Iterator[tuple[T, R]]:
    """``fn(task)`` for every task, ``(task, result)`` yielded as each finishes. Tasks
    are started in the order given (put the longest first). A task's exception ends the
    run: the tasks not started are cancelled, the running ones finish or are stopped.
    Locally ``tasks`` is a sequence; on Ray any iterable, read lazily as workers free up
    (``agree corpus`` hands over a whole dump's ranges)."""
    check_executor(executor, workers, address)
    if executor == "ray":
        yield from _on_ray(fn, tasks, workers, address)
    elif workers == 1 or len(tasks) <= 1:
        for task in tasks:
            yield task, fn(task)
    else:
        yield from in_processes(fn, tasks, min(workers, len(tasks)))


#: tasks at once on this machine (processes, or a local Ray cluster's CPUs), per CPU
PROCESSES_PER_CPU = 4


def check_executor(executor: str, workers: int, address: str | None = None) -> None:
    """The options of :func:`run_tasks`, checked before any work (a FieldError)."""
    if executor not in EXECUTORS:
        raise FieldError(f"{{executor}} {executor!r}: unknown executor (known: {', '.join(EXECUTORS)})")
    if workers < 1:
        raise FieldError(f"{{workers}} must be at least 1 (got {workers})")
    if address and executor != "ray":
        raise FieldError("{ray_address} needs {executor} ray")
    here = PROCESSES_PER_CPU * cpu_count()
    if workers > here and not address:
        # each task holds a language's treebanks and paradigms (up to about 500 MB): thousands
        # of processes on one machine would exhaust its memory long before they were useful
        raise FieldError(f"{{workers}} {workers}: more processes than this machine's {cpu_count()} CPUs "
                         f"can use (at most {here} here); a larger cluster: {{executor}} ray with {{ray_address}}")


def _on_ray(fn, tasks, workers: int, address: str | None):
    cluster = RayCluster(workers=workers, threads=1, address=address)
    cluster.start()
    ray = cluster.ray
    queue, pending = iter(tasks), {}  # read as workers free up: a long iterable is never held whole
    try:
        remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(fn)
        while True:
            while len(pending) < workers:   # a bigger cluster still runs `workers` at once
                if (task := next(queue, _END)) is _END:
                    break
                pending[remote.remote(task)] = task
            if not pending:
                return
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(ref)
            yield task, _ray_value(ray, ref)
    finally:
        for ref in pending:              # an error or ^C: a cluster we only joined stops them too
            ray.cancel(ref, force=True)
        cluster.close()


def _ray_value(ray, ref):
    """A task's value; the domain error or OSError it raised, raised here as itself."""
    from ray.exceptions import RayTaskError  # lazy: ray is optional

    try:
        return ray.get(ref)
    except RayTaskError as e:
        if isinstance(e.cause, (DomainError, OSError, KeyboardInterrupt)):
            raise e.cause from None
        raise
