"""Executors: where the shards of a score run are scored. The scoring verb
(:func:`agreement.scoring.score_sharded.score_sharded`) hands an executor one model at a time and
its shards; it never knows where they run.

* ``in-process`` (:mod:`agreement.scoring.executors.local`): here, one model loaded at a time
  in this process, shards in order (the default; today's one-process run).
* ``ray`` (:mod:`agreement.scoring.executors.ray_cluster`): ``workers`` Ray actors per model,
  each loading the model once, on a cluster (``address``, or ``RAY_ADDRESS``) or on a
  local one started for the run.
"""
from __future__ import annotations

from agreement.scoring.executors.base import Executor
from agreement.scoring.executors.local import InProcessExecutor
from agreement.scoring.executors.ray_cluster import RayExecutor
from lm.errors import FieldError

#: the executors ``agree score --executor`` knows
EXECUTORS = ("in-process", "ray")


def make_executor(name: str = "in-process", *, workers: int | None = None, threads: int | None = None,
                  address: str | None = None) -> Executor:
    """The executor called ``name`` (one of :data:`EXECUTORS`). ``workers``: Ray actors
    per model (default 2); ``threads``: CPU threads per worker (Ray: default 1);
    ``address``: the Ray cluster to join (default: ``RAY_ADDRESS``, else a local cluster
    for the run)."""
    if name not in EXECUTORS:
        raise FieldError(f"{{executor}} {name!r}: unknown executor (known: {', '.join(EXECUTORS)})")
    if workers is not None and workers < 1:
        raise FieldError(f"{{workers}} must be at least 1 (got {workers})")
    if name == "in-process":
        if workers not in (None, 1) or address:
            raise FieldError("{workers} and {ray_address} need {executor} ray")
        return InProcessExecutor(threads=threads)
    return RayExecutor(workers=workers or 2, threads=threads or 1, address=address)
