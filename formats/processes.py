"""Tasks run by a pool of worker processes on this machine, each result yielded as it
finishes: the loop under ``agree extract-all`` (:mod:`agreement.parallel`) and under
``agree corpus``'s dump ranges (:mod:`lm.corpus.ranges`, which bounds the tasks ahead:
a dump's blocks travel in them).
"""
from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")
_END = object()  # the end of the tasks (a task may be any value)


def in_processes(fn: Callable[[T], R], tasks: Iterable[T], workers: int,
                 ahead: int | None = None) -> Iterator[tuple[T, R]]:
    """``(task, fn(task))`` as each finishes, ``fn`` run by ``workers`` processes. Tasks
    are submitted in their order, read from ``tasks`` lazily: at most ``ahead`` submitted
    and not yet yielded (None: all at once). A task's exception, or ^C, ends the run."""
    pool = ProcessPoolExecutor(max_workers=workers)
    pending: dict = {}
    tasks = iter(tasks)
    try:
        while True:
            while ahead is None or len(pending) < ahead:
                if (task := next(tasks, _END)) is _END:
                    break
                pending[pool.submit(fn, task)] = task
            if not pending:
                return
            ready, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in ready:
                task = pending.pop(future)
                yield task, future.result()
    finally:
        # an error or ^C (the workers got it too): start nothing more, wait for the rest
        pool.shutdown(wait=True, cancel_futures=True)
