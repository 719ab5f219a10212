"""MultiBLiMP's minimal-pair TSV files, read as items and written from them.

MultiBLiMP (Jumelet, Weissweiler and Bisazza 2025) gives, per language, a
tab-separated file with a header. The columns used here:

==================== =========================================================
sen                  the grammatical sentence (required)
wrong_sen            the ungrammatical sentence (required)
lang                 language code (``eng``, ``ita`` ...)
phenomenon           ``SV-#`` (subject-verb number), ``SV-G``, ``SV-P``, ``SP-#`` ...
grammatical_feature  the feature value of the grammatical form (``Sing``)
ungrammatical_feature the value of the wrong form (``Plur``)
verb, wrong_verb     the two verb forms; ``verb_idx`` its position
child, child_idx     the subject (the agreement cue) and its position
head, head_idx       the verb's head, when it is not the verb
num_attractors       nouns of the other number between cue and verb (the items'
                     ``attractors``, so the per-attractor table sees them)
==================== =========================================================

Other columns (an unnamed index column written by pandas, ids) are ignored; only
``sen`` and ``wrong_sen`` are required. A row becomes an Item by the rule of
:mod:`formats.testsets.blimp` (whitespace words, final punctuation split off, the single
differing word is the target); the construction is ``<lang> <phenomenon>`` (or
whichever of the two is present), so tables break down by language and phenomenon.

:func:`write_multiblimp` writes our items in that format (``verb`` = the correct
form, ``child`` = the cue) plus ``agree_*`` columns that restore the items.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Iterable

from formats.errors import AgreeError
from formats.tsv import checked_rows, header_of
from formats.items import Item
from formats.testsets.blimp import (AGREE_FIELDS, PairSkips, expand_files, join_words, pair_item,
                                    read_pairs_testset)
from formats.testsets.registry import TestSetFormat, must_exist, register
from formats.testsets.sniff import delimiter_note, first_line

REQUIRED = ("sen", "wrong_sen")
COLUMNS = ("sen", "verb", "verb_idx", "wrong_sen", "wrong_verb", "phenomenon", "lang",
           "grammatical_feature", "ungrammatical_feature", "child", "child_idx", "head", "head_idx")


def multiblimp_files(path: str | os.PathLike) -> list[Path]:
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix == ".tsv" and p.is_file())
    return [path]


def _header(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline().rstrip("\r\n").split("\t")
    except (OSError, UnicodeDecodeError):
        return []


def looks_like_multiblimp(path: Path) -> bool:
    """A TSV (or a directory of them) whose header has ``sen``."""
    files = multiblimp_files(path) if path.exists() else []
    return bool(files) and files[0].suffix == ".tsv" and "sen" in _header(files[0])


def read_multiblimp(paths, skips: PairSkips | None = None) -> list[Item]:
    """Items of MultiBLiMP TSV files (a file, a directory, or a list of them)."""
    files = expand_files(paths, multiblimp_files, ".tsv")
    skips = skips if skips is not None else PairSkips()
    items = []
    for path in files:
        skips.files.append(path)
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            missing = [c for c in REQUIRED if c not in (header_of(reader, path) or [])]
            if missing:
                raise AgreeError(f"{path}:1: not a MultiBLiMP file (missing columns: {', '.join(missing)}; "
                                 f"{delimiter_note(first_line(path), chr(9))})")
            for n, row in enumerate(checked_rows(reader, path)):
                if row["sen"] is None or row["wrong_sen"] is None:
                    raise AgreeError(f"{path}:{reader.line_num}: row has fewer columns than the header")
                item = _item(row, path, n, reader.line_num)
                if item is None:
                    skips.count(row["sen"], row["wrong_sen"])
                else:
                    items.append(item)
    return items


def _item(row: dict, path: Path, n: int, line: int) -> Item | None:
    lang, phen = (row.get("lang") or "").strip(), (row.get("phenomenon") or "").strip()
    construction = " ".join(p for p in (lang, phen) if p) or path.stem
    extra = {k: row[k] for k in ("lang", "phenomenon", "grammatical_feature",
                                  "ungrammatical_feature", "verb", "wrong_verb", "child", "head")
             if row.get(k)}
    agree = {k: row[k] for k in AGREE_FIELDS if row.get(k) not in (None, "")}
    number = row.get("grammatical_feature") or "_"
    agree.setdefault("agree_number", number)
    attractors = (row.get("num_attractors") or "").strip()
    if attractors and "agree_attractors" not in agree:
        if not attractors.isdigit():
            raise AgreeError(f"{path}:{line}: num_attractors is {attractors!r}, not a count")
        agree["agree_attractors"] = attractors
    return pair_item(f"{path.stem}:{n}", construction, row["sen"], row["wrong_sen"],
                     extra=extra, agree=agree)


def write_multiblimp(items: Iterable[Item], path: str | os.PathLike, condition_of,
                     lang: str = "") -> int:
    """Write ``items`` to one MultiBLiMP-style TSV; returns the rows written.
    ``phenomenon`` is the construction plus the condition (``NOUN VERB VERB/nonce``)."""
    n = 0
    header = COLUMNS + AGREE_FIELDS
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(header) + "\n")
        for it in items:
            good = list(it.tokens)
            good[it.target_index] = it.correct
            bad = list(it.extra.get("wrong_tokens") or good)
            if "wrong_tokens" not in it.extra:
                bad[it.target_index] = it.wrong
            other = it.wrong_value or ",".join("Plur" if v == "Sing" else "Sing" if v == "Plur" else v
                                               for v in it.number.split(","))  # relation items know theirs
            row = {"sen": join_words(good), "verb": it.correct, "verb_idx": it.target_index,
                   "wrong_sen": join_words(bad), "wrong_verb": it.wrong,
                   "phenomenon": f"{it.construction}/{condition_of(it)}", "lang": lang,
                   "grammatical_feature": it.number, "ungrammatical_feature": other,
                   "child": it.tokens[it.cue_index], "child_idx": it.cue_index, "head": "",
                   "head_idx": "", "agree_item_id": it.item_id, "agree_variant": it.variant,
                   "agree_construction": it.construction, "agree_direction": it.direction,
                   "agree_perturbation": it.perturbation, "agree_attractors": it.attractors,
                   "agree_cue_index": it.cue_index, "agree_number": it.number}
            fh.write("\t".join(str(row[c]).replace("\t", " ") for c in header) + "\n")
            n += 1
    return n


def _write(items, out_dir, condition_of, lang: str = "", **_options) -> dict[str, int]:
    """One ``<condition>.tsv`` per condition (``lang``: its lang column)."""
    items = list(items)
    counts = {}
    for cond in sorted({condition_of(it) for it in items}):
        name = f"{cond.replace(':', '_').replace('/', '_')}.tsv"
        counts[name] = write_multiblimp([it for it in items if condition_of(it) == cond],
                                        Path(out_dir) / name, condition_of, lang=lang)
    return counts


FORMAT = register(TestSetFormat(
    "multiblimp", "MultiBLiMP .tsv files with columns sen, wrong_sen (a file or a directory)",
    lambda p: p if looks_like_multiblimp(p) else None,
    lambda p, label, **_: read_pairs_testset(p, label, "multiblimp", read_multiblimp),
    resolve=must_exist, write=_write, suffixes=(".tsv",)))
