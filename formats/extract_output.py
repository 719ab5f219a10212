"""An ``agree extract`` output directory, read as one record (:func:`read_extract_dir`).

The directory is written by :func:`agreement.extraction.extract_dir.extract_to_dir` from the
owners of its files: ``items.tsv`` (:mod:`formats.items`), ``paradigms.tsv``
(:class:`treebanks.paradigms.ParadigmTable`), ``constructions.tsv``
(:func:`agreement.extraction.constructions.write_constructions`, read by people) and ``manifest.json``
(:mod:`formats.manifest`). ``agree nonce`` and ``agree swap-targets`` read it here."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from formats.errors import AgreeError
from formats.items import COLUMNS, Item, read_items
from formats.manifest import AGREE_VERSION
from treebanks.paradigms import ParadigmTable

EXTRACT_FILES = ("items.tsv", "paradigms.tsv", "manifest.json")


@dataclass(frozen=True)
class ExtractDir:
    """An ``agree extract`` output directory, read and checked.

    path      the directory
    items     its items (variant 0)
    table     its paradigm table (``treebanks.paradigms.ParadigmTable``)
    manifest  its ``manifest.json``
    lang      the language code it was extracted with (None when not given)
    features  its agreement features, e.g. ``("Number",)``
    alternative_mode  ``closest`` or ``exact``
    values    the two Number values of the extract run (``--values``)
    """
    path: Path
    items: tuple[Item, ...]
    table: ParadigmTable
    manifest: dict
    lang: str | None
    features: tuple[str, ...]
    alternative_mode: str
    values: tuple[str, ...] = ("Sing", "Plur")


def read_extract_dir(path) -> ExtractDir:
    """Read and check an extract directory: all three files present, the manifest
    written by ``agree extract`` of this major.minor version, the items.tsv columns
    of this version. Any failure is one :class:`AgreeError` naming the problem."""
    path = Path(path)
    missing = [f for f in EXTRACT_FILES if not (path / f).is_file()]
    if missing:
        raise AgreeError(f"{path}: not an agree extract directory (missing {', '.join(missing)})")
    try:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise AgreeError(f"{path / 'manifest.json'}: not valid JSON ({e})") from None
    command = manifest.get("command") if isinstance(manifest, dict) else None
    if command != "extract":
        raise AgreeError(f"{path}: manifest.json was written by {command!r}, not 'agree extract'")
    made_by = str((manifest.get("versions") or {}).get("agree", "?"))
    if made_by.split(".")[:2] != AGREE_VERSION.split(".")[:2]:
        raise AgreeError(f"{path}: written by agree {made_by}, this is agree {AGREE_VERSION}; "
                         f"run agree extract again")
    try:
        with open(path / "items.tsv", encoding="utf-8") as fh:
            header = fh.readline().rstrip("\n").split("\t")
    except UnicodeDecodeError as e:
        raise AgreeError(f"{path / 'items.tsv'}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    if header == [""]:
        raise AgreeError(f"{path / 'items.tsv'}: empty file (not even a header line); run agree extract again")
    lacking = [c for c in COLUMNS if c not in header]
    if lacking:
        raise AgreeError(f"{path / 'items.tsv'}: from another version (missing columns: {', '.join(lacking)})")
    params = manifest.get("parameters") or {}
    features = params.get("features") or ["Number"]
    if isinstance(features, str):
        features = features.replace(",", "|").split("|")
    mode = params.get("alt") or "closest"
    return ExtractDir(path=path, items=tuple(read_items(path / "items.tsv")),
                      table=ParadigmTable.load(path / "paradigms.tsv"), manifest=manifest,
                      lang=params.get("lang") or None, features=tuple(features), alternative_mode=mode,
                      values=tuple(str(params.get("values") or "Sing,Plur").split(",")))
