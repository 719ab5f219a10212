"""Progress for people: a bar on a terminal, a line every few seconds in a file.

Every long loop of agree reports through :func:`progress`, which follows the logging
of the module that asks (:mod:`formats.run`): nothing at all when its logger does not
show info lines (``--quiet``, or a library caller that configured no logging). When
stderr is a terminal it is a tqdm bar, redrawn in place; when stderr goes to a file
or a pipe (a log, a batch job, a test runner) a bar's carriage-return updates would
pile up there, so it is one plain line through the logger every
:data:`LINE_EVERY` seconds instead (none for a loop that ends sooner), and a last
line when the loop that printed them ends.
"""
from __future__ import annotations

import logging
import sys
import time
from typing import Iterable, Iterator, TypeVar

from tqdm import tqdm

T = TypeVar("T")

#: seconds between two progress lines when stderr is not a terminal
LINE_EVERY = 5.0


def progress(log: logging.Logger, *, desc: str, total: float | None = None, unit: str = "it",
             initial: float = 0, unit_scale: bool = False, leave: bool = True, show: bool = True):
    """A progress reporter for ``log``'s module: ``update(n)``, ``set_postfix(**values)``,
    ``set_description(text)``, ``n``, ``close()``, usable as a context manager (the
    subset of tqdm's interface agree uses). ``total``: the count at the end (None:
    unknown); ``initial``: the count already done (a resumed run); ``show``: False for a
    process whose progress another one reports (distributed training's other ranks)."""
    if not show or not log.isEnabledFor(logging.INFO):
        return tqdm(total=total, initial=initial, disable=True)
    if _is_terminal(sys.stderr):
        return tqdm(total=total, initial=initial, desc=desc, unit=unit, unit_scale=unit_scale,
                    file=sys.stderr, leave=leave, dynamic_ncols=True, mininterval=0.5)
    return ProgressLines(log, desc=desc, total=total, unit=unit, initial=initial, unit_scale=unit_scale)


def track(log: logging.Logger, iterable: Iterable[T], *, desc: str, unit: str = "it",
          total: float | None = None) -> Iterator[T]:
    """``iterable``'s elements, reported by :func:`progress` as they are taken (``total``:
    ``len(iterable)`` where it has one)."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    with progress(log, desc=desc, unit=unit, total=total) as bar:
        for x in iterable:
            yield x
            bar.update()


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):   # a stream without a file behind it, or closed
        return False


class ProgressLines:
    """Progress as log lines: ``desc: n of total (p%), r unit/s`` at most every
    :data:`LINE_EVERY` seconds while the loop runs, and ``desc: n done in s s`` at its end
    when a line was said."""

    def __init__(self, log: logging.Logger, *, desc: str, total: float | None, unit: str, initial: float = 0,
                 unit_scale: bool = False):
        self.log, self.desc, self.total, self.unit, self.scale = log, desc, total, unit, unit_scale
        self.n = self.start_n = initial
        self.started = self.last = time.monotonic()
        self.postfix = ""
        self.said = False

    def update(self, n: float = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self.last >= LINE_EVERY and not (self.total and self.n >= self.total):   # the end says itself
            self.last, self.said = now, True
            self.log.info(self._line(now))

    def set_postfix(self, refresh: bool = True, **values) -> None:
        self.postfix = ", ".join(f"{k}={v}" for k, v in values.items())

    def set_description(self, desc: str, refresh: bool = True) -> None:
        self.desc = desc

    def _line(self, now: float) -> str:
        n, total = _count(self.n, self.scale), _count(self.total, self.scale)
        done = f"{n} of {total}" if self.total else n
        if self.total:
            done += f" ({100 * self.n / self.total:.0f}%)"
        rate = (self.n - self.start_n) / max(now - self.started, 1e-9)
        return f"{self.desc}: {done}, {_count(rate, self.scale) if self.scale else _rate(rate)} {self.unit}/s" + (f", {self.postfix}" if self.postfix else "")

    def close(self) -> None:
        if self.said:   # a loop long enough to be reported ends with its total
            self.said = False
            self.log.info(f"{self.desc}: {_count(self.n, self.scale)} done in {time.monotonic() - self.started:.1f} s"
                          + (f", {self.postfix}" if self.postfix else ""))

    def __enter__(self) -> "ProgressLines":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _rate(x: float) -> str:
    """A rate as people read it: ``1,260``, ``12.5``, ``0.333`` (never ``1.26e+03``)."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _count(x: float | None, scale: bool = False) -> str:
    """A count as people read it: ``1,190``; with ``scale`` ``12.3M`` (bytes, tokens)."""
    if x is None:
        return "?"
    if scale:
        for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(x) >= size:
                return f"{x / size:.1f}{suffix}"
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"
