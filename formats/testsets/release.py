"""The release of ``agree extract-all`` as a test set (the rows and their reader live in
:mod:`formats.release`): the whole release (its languages' ``pairs.jsonl``), one
language's directory, or one ``pairs.jsonl`` / ``pairs.parquet``. Recognised before
BLiMP, whose field names its rows share: a row of ours also has ``item_id``,
``tokens`` and ``one_prefix_word_good``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from formats.errors import AgreeError
from formats.items import Item
from formats.release import PAIRS_FILE, read_release, release_files
from formats.release_card import INDEX_FILE, read_index
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


def _is_index(path: Path) -> bool:
    """An extract-all index.tsv (its header: language, name, ..., nonce_variants, ...)."""
    header = first_line(path).rstrip("\r\n").split("\t")
    return header[:2] == ["language", "name"] and "nonce_variants" in header


def _recognise(path: Path) -> Path | None:
    """A pairs file; a language directory holding pairs.jsonl; a release (index.tsv and
    language directories with pairs.jsonl)."""
    if path.is_dir():
        if (path / PAIRS_FILE).is_file():
            return path if _is_pairs_file(path / PAIRS_FILE) else None
        if _is_index(path / INDEX_FILE):   # its pairs are checked against it when read
            return path
        files = [f for f in release_files(path) if f.stat().st_size] if (path / INDEX_FILE).is_file() else []
        return path if files and _is_pairs_file(files[0]) else None   # languages without items: empty files
    return path if path.is_file() and _is_pairs_file(path) else None


def _read(path: Path, label: str, **_options) -> TestSet:
    if path.is_dir() and not (path / PAIRS_FILE).is_file():
        items = tuple(_read_indexed(path))
    else:
        items = tuple(read_release(path))
    languages = sorted({it.extra["language"] for it in items})
    originals = sum(it.variant == 0 for it in items)
    return TestSet(label, "release", items,
                   info=(f"{label}: {originals} pairs and {len(items) - originals} nonce variants of "
                         f"{len(languages)} language(s) ({', '.join(languages[:12])}"
                         f"{', ...' if len(languages) > 12 else ''})",))


def _read_indexed(path: Path) -> Iterator[Item]:
    """A whole release's items, each language's pairs checked against ``index.tsv``: a
    language it lists must be there with as many pairs and nonce variants as it says, and
    a language directory it does not list is not read silently (a release copied in
    part, or a pairs file cut short, would otherwise be scored as if it were whole)."""
    index = path / INDEX_FILE
    expected = {}
    for k, row in enumerate(read_index(index), start=2):
        try:
            expected[row["language"]] = (int(row["items"]), int(row["nonce_variants"]))
        except (KeyError, TypeError, ValueError):
            raise AgreeError(f"{index}:{k}: not an index.tsv row (items and nonce_variants must be whole "
                             f"numbers)") from None
    files = {f.parent.name: f for f in release_files(path)}
    for code in sorted(set(files) - set(expected)):
        raise AgreeError(f"{files[code]}: language {code!r} is not in {index} (a directory of another release?); "
                         f"score it on its own, or remove it")
    for code, (items, variants) in expected.items():
        pairs = path / code / PAIRS_FILE
        if code not in files:
            if items or variants:
                raise AgreeError(f"{pairs}: missing, but {INDEX_FILE} lists {code!r} with {items:,} items and "
                                 f"{variants:,} nonce variants (a release copied in part?); copy it whole, or "
                                 f"score its languages' directories one by one")
            continue
        got = list(read_release(pairs))
        originals = sum(it.variant == 0 for it in got)
        # index.tsv counts the variants made as `nonce` (one whose prefix is the original's is not counted)
        nonce = sum(it.variant > 0 and it.perturbation == "nonce" for it in got)
        if (originals, nonce) != (items, variants):
            raise AgreeError(f"{pairs}: {originals:,} items and {nonce:,} nonce variants, but "
                             f"{INDEX_FILE} lists {items:,} and {variants:,} (a file cut short or edited?)")
        yield from got


FORMAT = register(TestSetFormat(
    "release", "an agree extract-all release, a language directory of one, or its pairs.jsonl / pairs.parquet",
    _recognise, _read, resolve=must_exist, files=release_files, suffixes=(".jsonl", ".parquet")),
    before="blimp")
