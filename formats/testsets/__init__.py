"""Every test-set format ``agree score`` reads (and ``agree export`` writes), behind one
registry (:mod:`formats.testsets.registry`); one module per format:

``rublimp`` ...     the BLiMP family and RuBLiMP through declared field mappings
                    (rublimp, zhoblimp, sling, blimp-nl, jblimp, turblimp, climp; :mod:`.pairs`)
``release``         an ``agree extract-all`` release, a language of it, or its pairs files (:mod:`.release`)
``blimp``           BLiMP ``.jsonl`` paradigms (:mod:`.blimp`)
``multiblimp``      MultiBLiMP ``.tsv`` files (:mod:`.multiblimp`)
``items``           our ``items.tsv`` or a directory holding one (:mod:`.items`)
``paper-tab``       a paper ``.tab`` file (:mod:`.papertab`)
``colorlessgreen``  the paper's ``generated.text/.gold/.eval`` set (:mod:`.colorlessgreen`)
``clams``           CLAMS ``True/False`` suites (:mod:`.clams`)
``lm-syneval``      Marvin and Linzen's template pickles, read without running code (:mod:`.syneval`)
``syntaxgym``       SyntaxGym suites with their predictions (:mod:`.syntaxgym`)

A TESTSET argument is detected by asking each format in this order
(:func:`detect_testset`), or named with ``--format`` (:data:`FORMATS`).
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from formats.errors import AgreeError, names_undecodable
from treebanks.errors import literal
from formats.testsets.sniff import describe, main_suffix
from formats.testsets.registry import (TestSet, TestSetFormat, default_files, get_format, no_cyclic_gc,
                                       registered)
# the format modules register themselves; their import order is the detection order
from formats.testsets import (pairs, blimp, release, multiblimp, items, papertab,  # noqa: F401,E402
                              colorlessgreen, clams, syneval, syntaxgym)

#: the values of ``agree score --format`` (``auto``: detect)
FORMATS = ("auto", *(f.name for f in registered()))


def testset_files(path: Path) -> list[Path]:
    """The files a test set was read from (a path prefix stands for its generated.*)."""
    return default_files(Path(path))


def testset_inputs(path: str | os.PathLike, fmt: str = "auto") -> list[Path]:
    """The files (or directories) a TESTSET argument is read from, for manifests."""
    kind, target = detect_testset(path, fmt)
    return get_format(kind).files(target)


def detect_testset(path: str | os.PathLike, fmt: str = "auto") -> tuple[str, Path]:
    """Which kind of test set ``path`` is, and the path to hand to its reader
    (``fmt``: one of :data:`FORMATS`; ``auto`` detects)."""
    path = Path(path)
    if fmt != "auto":
        return fmt, get_format(fmt).resolve(path)
    for f in registered():
        found = f.recognise(path)
        if found is not None:
            return f.name, found
    raise AgreeError(f"{literal(path)}: not a test set: it is {literal(describe(path))}; {_expected(path)}",
                     fields=True)


def _expected(path: Path) -> str:
    """What the formats read by files like ``path`` expect (all formats' names when none),
    as a ``fields=True`` template."""
    suffix = main_suffix(path)
    near = [f for f in registered() if suffix and suffix in f.suffixes]
    if near:
        return literal("for " + suffix + " files agree reads " + "; ".join(f"{f.name}: {f.summary}" for f in near))
    return ("agree reads " + ", ".join(f.name for f in registered())
            + ", each detected or named as the {fmt}")


@names_undecodable
def load_testset(path: str | os.PathLike, fmt: str = "auto", *, label: str | None = None,
                 **options) -> TestSet:
    """Detect (or take ``fmt``) and read one TESTSET argument, once: the test set knows
    the files it was read from (``files``). ``label``: its name in the scored rows
    (default: ``path`` as given); ``options`` (such as ``lang``) go to the reader."""
    kind, target = detect_testset(path, fmt)
    reader = get_format(kind)
    with no_cyclic_gc():
        ts = reader.read(target, str(path) if label is None else label, **options)
    return dataclasses.replace(ts, files=tuple(reader.files(target)))


__all__ = ["FORMATS", "TestSet", "TestSetFormat", "detect_testset", "load_testset", "testset_files",
           "testset_inputs"]
