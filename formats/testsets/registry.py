"""The registry of test-set formats: one :class:`TestSetFormat` per format, filled by
each format's module with :func:`register` (the way ``lm.base`` registers model
loaders), so that detection, ``--format`` and ``agree export`` never grow an ``if``
chain.

A format says

* ``recognise(path)``: the path its reader takes when ``path`` is one of its test
  sets (auto-detection), else None; registration order is detection order;
* ``resolve(path)``: the path its reader takes when the user names the format
  (``--format NAME``); raises :class:`AgreeError` when ``path`` cannot be one;
* ``read(path, label, **options)``: the :class:`TestSet` (options such as ``lang``
  are passed to every reader; a reader ignores those it does not use);
* ``files(path)``: the files read (the manifest's inputs);
* ``suffixes``: the suffixes of its files (to say which formats a file could be meant for);
* ``write``: for ``agree export``, ``write(items, out_dir, condition_of, lang=...)``
  -> {file name: pairs}; None when the format is read only.
"""
from __future__ import annotations

import contextlib
import gc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from formats.errors import AgreeError
from formats.items import Item


@dataclass(frozen=True)
class TestSet:
    """A loaded TESTSET argument.

    label   the argument as given (used as ``testset`` in the scored items)
    kind    the format's name (``items``, ``colorlessgreen``, ``blimp`` ...)
    items   its items
    table   the parsed .tab for ``paper-tab`` (model columns, ``freq``), else None
    notes   what the reader skipped and why (warnings on stderr, and summary.md)
    info    what the reader found, said for people (stderr unless --quiet, and summary.md)
    suites  SyntaxGym suites (regions, conditions, predictions), evaluated after scoring
    files   the files it was read from (set by :func:`formats.testsets.load_testset`; manifests
            and checksums name them)
    """
    __test__ = False  # not a pytest class
    label: str
    kind: str
    items: tuple[Item, ...]
    table: object = None
    notes: tuple[str, ...] = ()
    suites: tuple = ()
    info: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()


def default_files(path: Path) -> list[Path]:
    """The files a test set was read from (a path prefix stands for its ``NAME.*``)."""
    return [path] if path.exists() else sorted(path.parent.glob(path.name + ".*"))


def _as_is(path: Path) -> Path:
    return path


@dataclass(frozen=True)
class TestSetFormat:
    """One test-set format (see the module docstring)."""
    __test__ = False
    name: str
    summary: str
    recognise: Callable[[Path], Path | None]
    read: Callable[..., TestSet]
    resolve: Callable[[Path], Path] = _as_is
    files: Callable[[Path], list[Path]] = default_files
    write: Callable | None = None
    suffixes: tuple[str, ...] = field(default=())  # its files' suffixes, for messages


_REGISTRY: dict[str, TestSetFormat] = {}


def register(fmt: TestSetFormat, before: str | None = None) -> TestSetFormat:
    """Add a format (its module calls this at import), last in detection order or just
    ``before`` another (a stricter recogniser goes before a looser one); returns it."""
    if fmt.name in _REGISTRY:
        raise ValueError(f"test-set format {fmt.name!r} registered twice")
    entries = list(_REGISTRY.items())
    at = next((i for i, (name, _) in enumerate(entries) if name == before), len(entries))
    entries.insert(at, (fmt.name, fmt))
    _REGISTRY.clear()
    _REGISTRY.update(entries)
    return fmt


def registered() -> list[TestSetFormat]:
    """Every format, in detection order."""
    return list(_REGISTRY.values())


def get_format(name: str) -> TestSetFormat:
    """The format called ``name``; :class:`AgreeError` listing the known ones."""
    if name not in _REGISTRY:
        raise AgreeError(f"unknown test-set format {name!r} (known: {', '.join(['auto', *_REGISTRY])})")
    return _REGISTRY[name]


def must_exist(path: Path) -> Path:
    """``resolve`` for formats read from an existing file or directory."""
    if not path.exists():
        raise AgreeError(f"{path}: no such file or directory")
    return path


def files_in(path: str | os.PathLike, suffixes: tuple[str, ...]) -> list[Path]:
    """The files of ``path`` with one of ``suffixes``: the file itself, or a
    directory's, sorted."""
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in suffixes and p.is_file())
    return [path]


@contextlib.contextmanager
def no_cyclic_gc():
    """Readers build some 10^5 small objects that hold no reference cycles; the cyclic
    collector would re-scan all of them at every full pass (a third of the reading time
    of a large set), so it pauses while a test set is read."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
