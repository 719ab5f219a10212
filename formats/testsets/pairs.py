"""The BLiMP family and RuBLiMP: minimal pairs in JSON Lines or CSV, read through a
declared field mapping (:class:`PairFields`), not one reader each.

Each mapping names the fields holding the grammatical and the ungrammatical sentence,
the paradigm, the phenomenon and the pair id, and the fields that, present besides
those, tell its files apart from the others' (auto-detection). Field names are those
the benchmarks publish (looked up in their repositories and readers):

=========== ============== ================================= ======================
format      file           good / bad                        paradigm / phenomenon
=========== ============== ================================= ======================
rublimp     .csv           source_sentence / target_sentence PID / phenomenon
zhoblimp    .jsonl         sentence_good / sentence_bad      UID / phenomenon
sling       .jsonl         sentence_good / sentence_bad      paradigm / phenomenon
blimp-nl    .jsonl, .csv   sentence_good / sentence_bad      (file) / linguistic_phenomenon
jblimp      .jsonl         good_sentence / bad_sentence      paradigm / phenomenon
turblimp    .csv           good_sentence / bad_sentence      (file) / phenomenon
climp       .csv           one sentence per row, the         paradigm / phenomenon
                           grammatical row first, label last
=========== ============== ================================= ======================

(BLiMP itself keeps its own reader, :mod:`.blimp`.) A pair becomes an Item by
:func:`formats.testsets.blimp.pair_item`, the sentences exactly as published; the
construction is the paradigm (else the file name). CSV files are read with the
delimiter their header uses (``,``, ``;`` or tab). A malformed line is an
:class:`AgreeError` naming FILE:LINE.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from formats.errors import AgreeError
from formats.items import Item
from formats.testsets.blimp import PairSkips, json_object, pair_item
from formats.testsets.registry import TestSet, TestSetFormat, files_in, must_exist, register
from formats.testsets.sniff import header_delimiter


@dataclass(frozen=True)
class PairFields:
    """One benchmark's field mapping (see the module docstring).

    good, bad     the grammatical and the ungrammatical sentence
    suffixes      the file suffixes it is published in
    paradigm      fields naming the paradigm, first present wins (else the file name)
    phenomenon    fields naming the phenomenon
    pair_id       fields holding the pair's id (else its line number)
    keys          fields that must also be present to recognise the format
    carry         further fields kept with the item (``extra``)
    lang          the language (ISO 639-1)
    rows          one sentence per row, grammatical first (CLiMP): ``good`` is the
                  sentence column, ``bad`` the label column, by position
    """
    name: str
    title: str
    good: str
    bad: str
    suffixes: tuple[str, ...]
    paradigm: tuple[str, ...] = ()
    phenomenon: tuple[str, ...] = ()
    pair_id: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    carry: tuple[str, ...] = ()
    lang: str = ""
    rows: bool = False


MAPPINGS = (
    PairFields("rublimp", "RuBLiMP (Taktasheva et al. 2024)", "source_sentence", "target_sentence",
               (".csv",), ("PID",), ("phenomenon",), ("id",), ("source_word", "target_word"),
               ("source_word", "target_word", "level", "subtype", "domain", "tree_depth"), "ru"),
    PairFields("zhoblimp", "ZhoBLiMP (Liu et al. 2024)", "sentence_good", "sentence_bad", (".jsonl",),
               ("UID",), ("phenomenon",), ("pairID", "pair_id"), ("UID", "phenomenon"), (), "zh"),
    PairFields("sling", "SLING (Song et al. 2022)", "sentence_good", "sentence_bad", (".jsonl",),
               ("paradigm",), ("phenomenon",), ("pair_ID",), ("paradigm", "pair_ID"), ("field",), "zh"),
    PairFields("blimp-nl", "BLiMP-NL (Suijkerbuijk et al. 2025)", "sentence_good", "sentence_bad",
               (".jsonl", ".csv"), (), ("linguistic_phenomenon",), (), ("linguistic_phenomenon",), (), "nl"),
    PairFields("jblimp", "JBLiMP (Someya and Oseki 2023)", "good_sentence", "bad_sentence", (".jsonl",),
               ("paradigm",), ("phenomenon",), ("ID",), (), ("type", "phenomenon-2"), "ja"),
    PairFields("turblimp", "TurBLiMP (Başar et al. 2025)", "good_sentence", "bad_sentence", (".csv",),
               (), ("phenomenon",), (), (), ("good_cue", "bad_cue", "critical_region"), "tr"),
    PairFields("climp", "CLiMP (Xiang et al. 2021)", "sentence", "label", (".csv",),
               ("paradigm",), ("phenomenon",), (), (), (), "zh", rows=True),
)


# --------------------------------------------------------------------------- reading rows

def _json_rows(path: Path) -> Iterator[tuple[int, dict]]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                yield lineno, json_object(line, path, lineno)


def _csv_rows(path: Path, m: PairFields) -> Iterator[tuple[int, dict]]:
    with open(path, encoding="utf-8", newline="") as fh:
        first = fh.readline()
        if m.rows:  # CLiMP: positional columns, the header only names them
            delim = header_delimiter(first, ()) or ","
            reader = csv.reader(fh, delimiter=delim)
            for row in reader:
                if row:
                    yield reader.line_num + 1, _climp_row(row, path, reader.line_num + 1)
            return
        delim = header_delimiter(first, (m.good, m.bad))
        header = next(csv.reader([first], delimiter=delim or ","), [])
        if delim is None:
            raise AgreeError(f"{path}:1: not a {m.title} file (missing columns {m.good}, {m.bad}; "
                             f"the header has {', '.join(header) or 'nothing'})")
        reader = csv.reader(fh, delimiter=delim)
        for row in reader:
            line = reader.line_num + 1
            if not row:
                continue
            if len(row) != len(header):
                raise AgreeError(f"{path}:{line}: {len(row)} fields, the header has {len(header)}")
            yield line, dict(zip(header, row))


def _climp_row(row: list[str], path: Path, line: int) -> dict:
    if len(row) < 2:
        raise AgreeError(f"{path}:{line}: expected a sentence and a label column, found {len(row)} field(s)")
    out = {"sentence": row[-2], "label": row[-1].strip()}
    if len(row) >= 4:
        out["phenomenon"], out["paradigm"] = row[-4], row[-3]
    return out


def _rows(path: Path, m: PairFields) -> Iterator[tuple[int, dict]]:
    return _json_rows(path) if path.suffix == ".jsonl" else _csv_rows(path, m)


def _first(row: dict, fields: tuple[str, ...], default: str = "") -> str:
    for f in fields:
        v = row.get(f)
        if v not in (None, ""):
            return str(v)
    return default


def _pairs(path: Path, m: PairFields) -> Iterator[tuple[int, dict, str, str]]:
    """(line, row, good, bad) per pair; CLiMP's rows are taken two by two."""
    if not m.rows:
        for line, row in _rows(path, m):
            missing = [f for f in (m.good, m.bad) if not isinstance(row.get(f), str)]
            if missing:
                raise AgreeError(f"{path}:{line}: not a {m.title} pair (missing {', '.join(missing)})")
            yield line, row, row[m.good], row[m.bad]
        return
    pending = None
    for line, row in _rows(path, m):
        if pending is None:
            if row["label"] not in ("1", "True", "true"):
                raise AgreeError(f"{path}:{line}: expected the grammatical sentence of a pair (label 1), "
                                 f"found label {row['label']!r}")
            pending = (line, row)
            continue
        if row["label"] not in ("0", "False", "false"):
            raise AgreeError(f"{path}:{pending[0]}: grammatical sentence without its ungrammatical partner "
                             f"(line {line} has label {row['label']!r})")
        yield pending[0], pending[1], pending[1]["sentence"], row["sentence"]
        pending = None
    if pending is not None:
        raise AgreeError(f"{path}:{pending[0]}: grammatical sentence without its ungrammatical partner "
                         "(the file ends)")


def read_pairs(paths, m: PairFields, skips: PairSkips | None = None) -> Iterator[Item]:
    """Stream the Items of ``paths`` (a file or a directory) under mapping ``m``."""
    skips = skips if skips is not None else PairSkips()
    files = [f for p in ([paths] if isinstance(paths, (str, Path)) else paths)
             for f in files_in(p, m.suffixes)]
    if not files:
        raise AgreeError(f"{paths}: no {'/'.join(m.suffixes)} files")
    for path in files:
        skips.files.append(path)
        for line, row, good, bad in _pairs(path, m):
            paradigm = _first(row, m.paradigm, path.stem)
            pid = _first(row, m.pair_id, str(line))
            extra = {"paradigm": paradigm, "phenomenon": _first(row, m.phenomenon), "lang": m.lang,
                     "pair_id": pid, **{k: str(row[k]) for k in m.carry if row.get(k) not in (None, "")}}
            item = pair_item(f"{paradigm}:{pid}", paradigm, good, bad, extra=extra)
            if item is None:
                skips.count(good, bad)     # identical, or a sentence empty: said apart
            else:
                yield item


# --------------------------------------------------------------------------- registry

def _keys_of(path: Path, m: PairFields) -> set[str] | None:
    """The fields of a file's first row (JSON Lines) or header (CSV), None if unreadable."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return None
    if path.suffix == ".jsonl":
        try:
            row = json.loads(first)
        except json.JSONDecodeError:
            return None
        return set(row) if isinstance(row, dict) else None
    delim = header_delimiter(first, (m.good, m.bad))
    return set(next(csv.reader([first], delimiter=delim))) if delim else None


def _recogniser(m: PairFields):
    def recognise(path: Path) -> Path | None:
        if m.rows or not path.exists():
            return None  # CLiMP's header names nothing to tell it by: --format climp
        files = files_in(path, m.suffixes)
        if not files or files[0].suffix not in m.suffixes:
            return None
        keys = _keys_of(files[0], m)
        return path if keys and {m.good, m.bad, *m.keys} <= keys else None
    return recognise


def _reader(m: PairFields):
    def read(path: Path, label: str, **_options) -> TestSet:
        skips = PairSkips()
        items = tuple(read_pairs(path, m, skips))
        return TestSet(label, m.name, items, notes=tuple(f"{label}: {n}" for n in skips.notes()))
    return read


FORMATS = {m.name: register(TestSetFormat(
    m.name, f"{m.title}: {'/'.join(m.suffixes)} files" + (f" with fields {m.good}, {m.bad}" if not m.rows else
                                                          ", one sentence and its 1/0 label per row"),
    _recogniser(m), _reader(m), resolve=must_exist, suffixes=m.suffixes), before="blimp")  # stricter than blimp's
    for m in MAPPINGS}
