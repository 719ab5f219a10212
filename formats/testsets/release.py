"""The release of ``agree extract-all`` as a test set (the rows and their reader live in
:mod:`formats.release`): the whole release (its languages' ``pairs.jsonl``), one
language's directory, or one ``pairs.jsonl`` / ``pairs.parquet``. Recognised before
BLiMP, whose field names its rows share: a row of ours also has ``item_id``,
``tokens`` and ``one_prefix_word_good``."""
from __future__ import annotations

import json
from pathlib import Path

from formats.release import PAIRS_FILE, read_release, release_files
from formats.release_card import INDEX_FILE
from formats.testsets.registry import TestSet, TestSetFormat, must_exist, register
from formats.testsets.sniff import first_line

#: fields a first row must have to be ours (BLiMP's files have the first two only)
_OURS = ("sentence_good", "item_id", "tokens", "one_prefix_word_good", "relation")


def _is_pairs_file(path: Path) -> bool:
    if path.suffix == ".parquet":
        return path.is_file()
    if path.suffix != ".jsonl":
        return False
    try:
        row = json.loads(first_line(path))
    except json.JSONDecodeError:
        return False
    return isinstance(row, dict) and all(k in row for k in _OURS)


def _recognise(path: Path) -> Path | None:
    """A pairs file; a language directory holding pairs.jsonl; a release (index.tsv and
    language directories with pairs.jsonl)."""
    if path.is_dir():
        if (path / PAIRS_FILE).is_file():
            return path if _is_pairs_file(path / PAIRS_FILE) else None
        files = [f for f in release_files(path) if f.stat().st_size] if (path / INDEX_FILE).is_file() else []
        return path if files and _is_pairs_file(files[0]) else None   # languages without items: empty files
    return path if path.is_file() and _is_pairs_file(path) else None


def _read(path: Path, label: str, **_options) -> TestSet:
    items = tuple(read_release(path))
    languages = sorted({it.extra["language"] for it in items})
    originals = sum(it.variant == 0 for it in items)
    return TestSet(label, "release", items,
                   info=(f"{label}: {originals} pairs and {len(items) - originals} nonce variants of "
                         f"{len(languages)} language(s) ({', '.join(languages[:12])}"
                         f"{', ...' if len(languages) > 12 else ''})",))


FORMAT = register(TestSetFormat(
    "release", "an agree extract-all release, a language directory of one, or its pairs.jsonl / pairs.parquet",
    _recognise, _read, resolve=must_exist, files=release_files, suffixes=(".jsonl", ".parquet")),
    before="blimp")
