"""Our own ``items.tsv`` as a test-set format (the record and its reader and writer
live in :mod:`formats.items`, which every layer imports)."""
from __future__ import annotations

from pathlib import Path

from formats.items import ITEMS_FILE, read_items
from formats.testsets.registry import TestSet, TestSetFormat, register
from formats.testsets.sniff import first_line


def _recognise(path: Path) -> Path | None:
    """A directory holding items.tsv, or a file whose header has item_id and tokens."""
    if path.is_dir():
        return path / ITEMS_FILE if (path / ITEMS_FILE).is_file() else None
    if path.is_file():
        header = first_line(path).rstrip("\r\n").split("\t")
        return path if "item_id" in header and "tokens" in header else None
    return None


def _read(path: Path, label: str, **_options) -> TestSet:
    return TestSet(label, "items", tuple(read_items(path)))


FORMAT = register(TestSetFormat(
    "items", "an items.tsv of agree extract/nonce/perturb, or a directory holding one",
    _recognise, _read, resolve=lambda p: p / ITEMS_FILE if p.is_dir() else p,
    suffixes=(".tsv",)))
