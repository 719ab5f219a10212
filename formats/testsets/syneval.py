"""Marvin and Linzen (2018)'s targeted syntactic evaluation templates
(BeckyMarvin/LM_syneval, ``templates/*.pickle``), read as published and without
running anything in them.

Each file is a Python-2 pickle (protocol 2, ``encoding='latin1'``) of a dict
``condition -> list of tuples of sentences``, the grammatical sentence first. A pickle
can name any importable callable and have the loader call it; these files need none,
so :class:`PlainUnpickler` refuses every class or function a file names (its
``find_class``, through which every such reference passes, raises) and the loaded
value must be made of dict, list, tuple and str alone: anything else is one
:class:`AgreeError`, and nothing of the file has run.

Conditions become the items' fields, as their names encode them: ``sing_MS_MV_plur_ES_EV``
is a singular main subject (MS) and verb (MV), the tested dependency (the first
group), with a plural embedded subject (ES) and verb (EV); ``number`` is the first
group's, and ``attractors`` counts the other groups of the other number (0 or 1 in
these files). The construction is the suite (the file name); the item id is
``suite:condition:index``. The NPI files (``past``/``future``) hold triples
(grammatical, intrusive licensor, no licensor): each gives two pairs, the grammatical
sentence against each of the others, as M&L's own analysis compares them (constructions
``<suite>: vs intrusive`` and ``<suite>: vs unlicensed``). Tuples of other lengths are
skipped and counted.
"""
from __future__ import annotations

import io
import pickle
import pickletools
from pathlib import Path

from formats.errors import AgreeError
from formats.items import Item
from formats.testsets.blimp import PairSkips, pair_item
from formats.testsets.registry import TestSet, TestSetFormat, files_in, must_exist, register

_NUMBERS = {"sing": "Sing", "plur": "Plur"}
#: NPI triples: the second and third sentence, as constructions name them
NPI_PARTNERS = ("vs intrusive", "vs unlicensed")
#: opcodes through which a pickle reaches (or runs) code; reported with their offset
_CODE_OPCODES = {"GLOBAL", "STACK_GLOBAL", "INST", "OBJ", "REDUCE", "BUILD", "NEWOBJ", "NEWOBJ_EX",
                 "EXT1", "EXT2", "EXT4", "PERSID", "BINPERSID"}


class _Refused(Exception):
    pass


class PlainUnpickler(pickle.Unpickler):
    """An unpickler that builds plain data only: every class or function a pickle
    names is refused before it is looked up, so none is imported or called."""

    def find_class(self, module: str, name: str):
        raise _Refused(f"{module}.{name}")

    def persistent_load(self, pid):
        raise _Refused("a persistent object")


def _where(path: Path, data: bytes) -> tuple[int, int]:
    """(line, byte offset) of the first opcode of ``data`` that reaches for code; the
    opcodes are only parsed (pickletools), never executed."""
    try:
        for op, _arg, pos in pickletools.genops(io.BytesIO(data)):
            if op.name in _CODE_OPCODES:
                return data.count(b"\n", 0, pos) + 1, pos
    except Exception:  # noqa: BLE001 - a damaged stream: the position is unknown
        pass
    return 1, 0


def load_plain_pickle(path: Path) -> object:
    """The value of a pickle made of dict, list, tuple and str; :class:`AgreeError`
    naming FILE:LINE for anything else (nothing in the file is run)."""
    data = Path(path).read_bytes()
    try:
        return PlainUnpickler(io.BytesIO(data), encoding="latin1").load()
    except _Refused as e:
        line, pos = _where(path, data)
        raise AgreeError(f"{path}:{line}: refused: the pickle names {e} (byte {pos}); only dict, "
                         "list, tuple and str are read from a pickle, and nothing in it is run") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError,
            AttributeError, MemoryError) as e:
        raise AgreeError(f"{path}:1: not a readable pickle ({type(e).__name__}: {e})") from None


def parse_condition(condition: str) -> tuple[str, int]:
    """(number of the tested dependency, attractors) from an M&L condition name:
    ``sing_MS_MV_plur_ES_EV`` -> ("Sing", 1); ``past`` -> ("_", 0)."""
    groups = [t for t in condition.split("_") if t in _NUMBERS]
    if not groups:
        return "_", 0
    return _NUMBERS[groups[0]], sum(g != groups[0] for g in groups[1:])


def _check(value, path: Path, where: str, kinds: tuple[type, ...], what: str) -> None:
    if not isinstance(value, kinds):
        raise AgreeError(f"{path}:1: {where} holds a {type(value).__name__}, not {what} "
                         "(an M&L template is a dict: condition -> list of tuples of sentences)")


def read_syneval(path: Path, skips: PairSkips, other: list[int]) -> list[Item]:
    """The Items of one template pickle (module docstring); ``other`` counts tuples of
    a length other than 2 and 3 (skipped)."""
    data = load_plain_pickle(path)
    _check(data, path, "the pickle", (dict,), "a dict")
    suite, items = path.stem, []
    for condition, tuples in data.items():
        _check(condition, path, "a key", (str,), "a condition name")
        _check(tuples, path, f"condition {condition!r}", (list, tuple), "a list of tuples")
        number, attractors = parse_condition(condition)
        agree = {"agree_number": number, "agree_attractors": attractors}
        extra = {"suite": suite, "condition": condition, "lang": "en"}  # pair_item copies it
        for i, sentences in enumerate(tuples):
            if type(sentences) is not tuple or not all(type(s) is str for s in sentences):
                where = f"condition {condition!r}, entry {i}"
                _check(sentences, path, where, (tuple, list), "a tuple of sentences")
                for s in sentences:
                    _check(s, path, where, (str,), "sentences (str)")
            if len(sentences) == 2:
                partners = [(suite, sentences[1], "")]
            elif len(sentences) == 3:
                partners = [(f"{suite}: {name}", s, f":{k + 1}")
                            for k, (name, s) in enumerate(zip(NPI_PARTNERS, sentences[1:]))]
            else:
                other[0] += 1
                continue
            for construction, bad, tag in partners:
                item = pair_item(f"{suite}:{condition}:{i}{tag}", construction, sentences[0], bad,
                                 extra=extra,
                                 agree=agree)
                skips.keep(item, items)
    return items


def _files(path: Path) -> list[Path]:
    return files_in(path, (".pickle", ".pkl"))


def _recognise(path: Path) -> Path | None:
    """A ``.pickle`` file, or a directory of them."""
    files = _files(path) if path.exists() else []
    return path if files and files[0].suffix in (".pickle", ".pkl") and files[0].is_file() else None


def _read(path: Path, label: str, **_options) -> TestSet:
    files = _files(path)
    if not files or files[0].suffix not in (".pickle", ".pkl"):
        raise AgreeError(f"{path}: no .pickle files (Marvin and Linzen's templates)")
    skips, other, items = PairSkips(), [0], []
    for f in files:
        skips.files.append(f)
        items += read_syneval(f, skips, other)
    notes = [f"{label}: {n}" for n in skips.notes()]
    triples = sum(it.construction.endswith(NPI_PARTNERS[1]) for it in items)
    info = [f"{label}: {triples} NPI triples give 2 pairs each (the grammatical sentence "
            "against the intrusive licensor and against no licensor)"] if triples else []
    if other[0]:
        notes.append(f"{label}: {other[0]} tuple(s) of neither 2 nor 3 sentences skipped")
    return TestSet(label, "lm-syneval", tuple(items), notes=tuple(notes), info=tuple(info))


FORMAT = register(TestSetFormat(
    "lm-syneval", "Marvin and Linzen's template .pickle files (a file or a directory); read "
    "without running code", _recognise, _read, resolve=must_exist,
    files=lambda p: _files(p) if p.exists() else [p], suffixes=(".pickle", ".pkl")))
