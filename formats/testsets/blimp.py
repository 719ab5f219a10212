"""BLiMP's minimal-pair ``.jsonl`` files, read as items and written from them.

BLiMP (Warstadt et al. 2020) ships one ``.jsonl`` file per paradigm, one JSON object
per line: ``sentence_good``, ``sentence_bad``, ``UID`` (the paradigm), ``linguistics_term``,
``field``, ``pairID``, the method flags ``simple_LM_method``/``one_prefix_method``/
``two_prefix_method`` and, for one-prefix pairs, ``one_prefix_prefix`` and
``one_prefix_word_good``/``_bad``.

A pair becomes one :class:`formats.items.Item` (:func:`pair_item`, shared with
:mod:`formats.testsets.multiblimp`):

* words: each sentence split on whitespace, and a run of sentence-final ``.``/``?``/``!``
  split off the last word as its own token (``"herself."`` -> ``herself`` ``.``), as
  in our items and the training corpora; nothing else is split (``can't`` stays);
* the construction is the paradigm (``UID``), so every table breaks down by it;
* when the two sentences have the same number of words and differ in exactly one
  position, that position is the target (``correct``/``wrong`` the two words there);
  otherwise the target is the first differing position and the pair can be scored
  only with ``--method sentence`` (``extra["target_ok"]`` is False). BLiMP's own
  ``one_prefix_method: false`` also makes a pair sentence-only, as BLiMP intends;
* the text as written is kept: each sentence's spacing (``herself.``: no space
  before the ``.``) as the item's ``space_after`` and ``extra["wrong_spaces"]``, so
  that a subword model reads the published strings exactly (runs of whitespace read
  as one space, the ends stripped: :mod:`formats.spacing`);
* the bad sentence's words are kept in ``extra["wrong_tokens"]`` (never written to
  items.tsv); a pair whose two sentences are identical is skipped and counted (it
  cannot tell anything), never scored.

:func:`write_blimp` writes our items as BLiMP jsonl (one file per construction and
condition) with BLiMP's fields plus ``agree_*`` fields that let :func:`read_blimp`
restore the items exactly (tools that read BLiMP ignore unknown fields).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from formats.errors import AgreeError
from formats.items import Item
from formats.jsonl import json_lines
from formats.testsets.registry import TestSet, TestSetFormat, must_exist, register
from formats.spacing import spacing_of

_FINAL_PUNCT = re.compile(r"^(.*?[^.?!])([.?!]+)$")
#: fields our exporter adds so that a round trip restores the items
AGREE_FIELDS = ("agree_item_id", "agree_variant", "agree_construction", "agree_direction",
                 "agree_perturbation", "agree_attractors", "agree_cue_index", "agree_number")


def split_words(sentence: str) -> tuple[str, ...]:
    """Whitespace words, with sentence-final ``.?!`` split off the last word."""
    words = sentence.split()
    if words:
        m = _FINAL_PUNCT.match(words[-1])
        if m:
            words[-1:] = [m.group(1), m.group(2)]
    return tuple(words)


def join_words(words: Sequence[str]) -> str:
    """Inverse of :func:`split_words` for our tokens: final punctuation re-attached."""
    words = list(words)
    if len(words) >= 2 and re.fullmatch(r"[.?!]+", words[-1]) and not re.search(r"[.?!]$", words[-2]):
        words[-2:] = [words[-2] + words[-1]]
    return " ".join(words)


@dataclass
class PairSkips:
    """Counts of pairs a reader dropped, by reason (reported on stderr and in summary.md)."""
    identical: int = 0
    files: list = field(default_factory=list)
    empty: int = 0

    def count(self, good: str, bad: str) -> None:
        """Count a pair :func:`pair_item` turned down (None), by its reason."""
        if not good.split() or not bad.split():
            self.empty += 1
        else:
            self.identical += 1

    def keep(self, item, into: list) -> None:
        """``item`` appended to ``into``; a pair :func:`pair_item` turned down (None) counted."""
        if item is None:
            self.identical += 1
        else:
            into.append(item)

    def notes(self) -> list[str]:
        out = []
        if self.identical:
            out.append(f"{self.identical} pair(s) skipped: the two sentences are identical")
        if self.empty:
            out.append(f"{self.empty} pair(s) skipped: a sentence is empty")
        return out


def pair_item(item_id: str, construction: str, good: str, bad: str, *, target_ok: bool = True,
              extra: dict | None = None, agree: dict | None = None) -> Item | None:
    """One minimal pair as an Item (rule in the module docstring); None when the two
    are identical or one is empty (:meth:`PairSkips.count` tells which)."""
    g, b = split_words(good), split_words(bad)
    if g == b or not g or not b:
        return None
    diff = [i for i, (x, y) in enumerate(zip(g, b)) if x != y]
    single = len(g) == len(b) and len(diff) == 1
    t = diff[0] if diff else min(len(g), len(b))
    t = min(t, len(g) - 1)
    wrong = b[t] if t < len(b) else ""
    agree = agree or {}
    n = len(g)
    return Item(
        item_id=str(agree.get("agree_item_id", item_id)), variant=int(agree.get("agree_variant", 0)),
        construction=str(agree.get("agree_construction", construction)),
        direction=str(agree.get("agree_direction", "_")), tokens=g, pos=("_",) * n, feats=("_",) * n,
        correct=g[t], wrong=wrong or "_", lemma="_", number=str(agree.get("agree_number", "_")),
        cue_index=min(int(agree.get("agree_cue_index", 0)), max(t - 1, 0)), target_index=t,
        attractors=int(agree.get("agree_attractors", 0)), punct=False,
        perturbation=str(agree.get("agree_perturbation", "original")),
        extra={**(extra or {}), "wrong_tokens": b, "wrong_spaces": spacing_of(bad, b),
               "target_ok": bool(single and target_ok)},
        space_after=spacing_of(good, g))


# --------------------------------------------------------------------------- reading

def blimp_files(path: str | os.PathLike) -> list[Path]:
    """The ``.jsonl`` files of a path: the file itself, or a directory's, sorted."""
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix == ".jsonl" and p.is_file())
    return [path]


def expand_files(paths, finder, suffix: str) -> list[Path]:
    """The files that ``paths`` (one path or several; files or directories) name, via
    ``finder(path)``; :class:`AgreeError` when none has a ``suffix`` file."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = [f for p in paths for f in finder(p)]
    if not files:
        raise AgreeError(f"{', '.join(map(str, paths))}: no {suffix} files")
    return files


def read_blimp(paths: str | os.PathLike | Iterable, skips: PairSkips | None = None) -> list[Item]:
    """Items of BLiMP jsonl files (a file, a directory, or a list of them).

    Raises :class:`AgreeError` naming the file and line for a line that is not JSON
    or lacks ``sentence_good``/``sentence_bad``."""
    files = expand_files(paths, blimp_files, ".jsonl")
    skips = skips if skips is not None else PairSkips()
    items: list[Item] = []
    for path in files:
        skips.files.append(path)
        for lineno, row in json_lines(path):
            item = _blimp_item(row, path, lineno)
            if item is None:
                skips.count(row["sentence_good"], row["sentence_bad"])
            else:
                items.append(item)
    return items


def _blimp_item(row: dict, path: Path, lineno: int) -> Item | None:
    missing = [k for k in ("sentence_good", "sentence_bad") if not isinstance(row.get(k), str)]
    if missing:
        raise AgreeError(f"{path}:{lineno}: not a BLiMP pair (missing {', '.join(missing)})")
    for k in ("sentence_good", "sentence_bad"):
        try:
            row[k].encode("utf-8")
        except UnicodeEncodeError as e:   # JSON escapes can spell lone surrogates
            raise AgreeError(f"{path}:{lineno}: {k} is not Unicode text (a lone surrogate "
                             f"{row[k][e.start]!r} at character {e.start + 1})") from None
    uid = str(row.get("UID") or path.stem)
    pair_id = row.get("pairID", row.get("pair_id", lineno - 1))
    extra = {"paradigm": uid, "linguistics_term": row.get("linguistics_term", ""),
             "field": row.get("field", ""), "pair_id": str(pair_id)}
    agree = {k: row[k] for k in AGREE_FIELDS if k in row}
    if row.get("one_prefix_method") is False:  # compared whole, never over a span (agreement.scoring.span)
        extra["sentence_only"] = True
    return pair_item(f"{uid}:{pair_id}", uid, row["sentence_good"], row["sentence_bad"],
                     target_ok=row.get("one_prefix_method", True) is not False, extra=extra,
                     agree=agree)


def looks_like_blimp(path: Path) -> bool:
    """A .jsonl file (or a directory of them) whose first line has sentence_good."""
    files = blimp_files(path) if path.exists() else []
    if not files or files[0].suffix != ".jsonl":
        return False
    try:
        with open(files[0], encoding="utf-8") as fh:
            return '"sentence_good"' in fh.readline()
    except (OSError, UnicodeDecodeError):
        return False


# --------------------------------------------------------------------------- writing

def slug(text: str) -> str:
    """A file- and UID-safe name: runs of other characters become ``_``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_") or "items"


def export_name(item: Item, condition: str) -> str:
    """The paradigm name of an exported item: direction, construction, condition."""
    parts = [p for p in (item.direction if item.direction not in ("", "_") else "",
                         item.construction, condition) if p]
    return slug("_".join(parts))


def blimp_row(item: Item, uid: str, pair_id: int) -> dict:
    """One item as a BLiMP jsonl object (with the ``agree_*`` round-trip fields)."""
    good = list(item.tokens)
    good[item.target_index] = item.correct
    bad = list(item.extra.get("wrong_tokens") or good)
    if "wrong_tokens" not in item.extra:
        bad[item.target_index] = item.wrong
    one_prefix = bool(item.extra.get("target_ok", True))
    return {"sentence_good": join_words(good), "sentence_bad": join_words(bad),
            "field": "morphology", "linguistics_term": "agreement", "UID": uid,
            "simple_LM_method": True, "one_prefix_method": one_prefix, "two_prefix_method": False,
            "lexically_identical": False, "pairID": str(pair_id),
            **({"one_prefix_prefix": " ".join(good[:item.target_index]),
                "one_prefix_word_good": item.correct, "one_prefix_word_bad": item.wrong}
               if one_prefix else {}),
            "agree_item_id": item.item_id, "agree_variant": item.variant,
            "agree_construction": item.construction, "agree_direction": item.direction,
            "agree_perturbation": item.perturbation, "agree_attractors": item.attractors,
            "agree_cue_index": item.cue_index, "agree_number": item.number}


def write_blimp(items: Iterable[Item], out_dir: str | os.PathLike, condition_of) -> dict[str, int]:
    """Write one ``<paradigm>.jsonl`` per construction and condition into ``out_dir``;
    ``condition_of(item)`` names the condition. Returns file name -> pairs."""
    groups: dict[str, list[Item]] = {}
    for it in items:
        groups.setdefault(export_name(it, condition_of(it)), []).append(it)
    counts = {}
    for uid, group in sorted(groups.items()):
        name = f"{uid}.jsonl"
        with open(Path(out_dir) / name, "w", encoding="utf-8", newline="") as fh:
            for i, it in enumerate(group):
                fh.write(json.dumps(blimp_row(it, uid, i), ensure_ascii=False) + "\n")
        counts[name] = len(group)
    return counts


# --------------------------------------------------------------------------- registry

def read_pairs_testset(path: Path, label: str, kind: str, reader) -> TestSet:
    """A minimal-pair test set read by ``reader(path, skips)``, its skips as notes."""
    skips = PairSkips()
    items = reader(path, skips)
    return TestSet(label, kind, tuple(items), notes=tuple(f"{label}: {n}" for n in skips.notes()))


def _write(items, out_dir, condition_of, **_options) -> dict[str, int]:
    return write_blimp(items, out_dir, condition_of)


FORMAT = register(TestSetFormat(
    "blimp", "BLiMP .jsonl paradigms with fields sentence_good, sentence_bad (a file or a directory)",
    lambda p: p if looks_like_blimp(p) else None,
    lambda p, label, **_: read_pairs_testset(p, label, "blimp", read_blimp),
    resolve=must_exist, write=_write, suffixes=(".jsonl",)))
