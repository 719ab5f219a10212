"""The agreement item record and its TSV file (``items.tsv``).

One row per (item, variant). Variant 0 is the original treebank sentence;
variants 1..n are nonce (or perturbed) versions of it. Every command that reads
or writes test sets goes through :func:`read_items` / :func:`write_items`, so
the columns below are the one documented schema.

Columns (all tab-separated, header first; lists are space-separated and aligned
with ``tokens``):

============== ==============================================================
item_id        stable id of the original item, e.g. ``en_ewt-ud-train:s1234:7``
variant        0 = original, 1..n = generated variant
construction   POS sequence, cue first, e.g. ``NOUN VERB VERB``
direction      ``L`` (head is the target) or ``R`` (head is the cue)
tokens         the whole sentence, space-separated surface words
pos            UPOS of each token
feats          features of each token (``_`` when none), canonical order
prefix         ``tokens[:target_index]``, space-separated
correct        the target form in the sentence
wrong          the alternative form (same lemma, other number)
lemma          lemma of the target
number         the target's agreement value(s): ``Sing``; ``Fem,Sing`` for several features
cue_index      0-based position of the cue in ``tokens``
target_index   0-based position of the target in ``tokens``
attractors     context words with the cue's POS and the other agreement value
context_length words strictly between cue and target
prefix_length  words before the target (= target_index)
punct          1 when the context contains punctuation, else 0
perturbation   what made this variant: ``original``, ``nonce``, ``qwerty:0.2`` ...
text           the sentence as written: ``tokens`` with the source's spacing
               (``The keys are here.``); what subword models read
============== ==============================================================

Items mined by agreement relation (``agree extract --mode relations``,
:mod:`agreement.extraction.relations`) carry seven more columns, after ``text``;
a file holds them when any of its items has a ``relation`` (a file of
construction items is written exactly as before, and a file without them reads
with these fields empty):

============== ==============================================================
relation       ``subj-verb``, ``subj-pred``, ``det-noun`` or ``adj-noun``
feature        the contrasted feature as the target carries it: ``Number``,
               ``Person``, ``Gender``, or a layer such as ``Number[subj]``
wrong_value    the wrong form's value of ``feature`` (``number`` is the target's)
target_side    ``after`` or ``before``: where the target stands beside its cue
distance       ``|target_index - cue_index|``
scoring        ``target`` (the prefix up to the target decides the item) or
               ``sentence`` (the target precedes its cue: compare whole sentences)
wrong_source   where the wrong form was found: a treebank file's stem
               (``cs_cac-ud-test``), or ``unimorph`` (a lexicon); ``paradigms``
               for nonce variants (the extract directory's pooled table)
============== ==============================================================

For such items ``construction`` is ``<relation> <feature>`` and ``direction`` is
``_`` (the relation says which end is the head; ``target_side`` the order), and
the cue may follow the target: ``cue_index > target_index``.

``text`` must spell ``tokens`` in order with only spaces added or left out
(:func:`formats.spacing.spacing_of`); it gives each token's ``space_after`` flag.
A file without the column (written before it existed) still reads: the spacing
is then the detokenization rule's (:mod:`formats.detok`), as for any item whose
source has no spacing (``space_after`` None).
"""
from __future__ import annotations

import csv
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from formats.detok import space_after as rule_spacing
from formats.errors import AgreeError
from formats.item_checks import item_problem
from formats.tsv import checked_rows, header_of
from formats.spacing import render, spacing_of

ITEMS_FILE = "items.tsv"


@dataclass(frozen=True)
class Item:
    item_id: str
    variant: int
    construction: str
    direction: str
    tokens: tuple[str, ...]
    pos: tuple[str, ...]
    feats: tuple[str, ...]
    correct: str
    wrong: str
    lemma: str
    number: str
    cue_index: int
    target_index: int
    attractors: int
    punct: bool
    perturbation: str = "original"
    extra: dict = field(default_factory=dict, compare=False)  # not written
    #: per token, whether a space follows it in the text as written; None: unknown,
    #: the detokenization rule's (:attr:`spacing`). Written as the ``text`` column.
    space_after: tuple[bool, ...] | None = None
    relation: str = ""      #: agreement relation of a relation item ("" for constructions)
    feature: str = ""       #: the contrasted feature, as on the target
    wrong_value: str = ""   #: the wrong form's value of ``feature``
    scoring: str = ""       #: ``target`` or ``sentence`` (relation items); "" = target
    wrong_source: str = ""  #: treebank file stem, ``unimorph`` or ``paradigms``

    @property
    def spacing(self) -> tuple[bool, ...]:
        """The spacing flags: the source's, else the detokenization rule's."""
        if self.space_after is not None and len(self.space_after) == len(self.tokens):
            return self.space_after
        return rule_spacing(self.tokens)

    @property
    def text(self) -> str:
        """The sentence as written (``tokens`` with :attr:`spacing`)."""
        return render(self.tokens, self.spacing)

    @property
    def prefix(self) -> tuple[str, ...]:
        return self.tokens[: self.target_index]

    @property
    def context_length(self) -> int:
        """Words strictly between cue and target (either order)."""
        return abs(self.target_index - self.cue_index) - 1

    @property
    def distance(self) -> int:
        return abs(self.target_index - self.cue_index)

    @property
    def target_side(self) -> str:
        """``after`` or ``before``: where the target stands beside its cue."""
        return "before" if self.target_index < self.cue_index else "after"

    @property
    def prefix_length(self) -> int:
        return self.target_index

    @property
    def is_original(self) -> bool:
        return self.variant == 0

    def replace(self, **changes) -> "Item":
        return dataclasses.replace(self, **changes)

    def as_row(self) -> dict[str, str]:
        return {
            "item_id": self.item_id,
            "variant": str(self.variant),
            "construction": self.construction,
            "direction": self.direction,
            "tokens": " ".join(self.tokens),
            "pos": " ".join(self.pos),
            "feats": " ".join(self.feats),
            "prefix": " ".join(self.prefix),
            "correct": self.correct,
            "wrong": self.wrong,
            "lemma": self.lemma,
            "number": self.number,
            "cue_index": str(self.cue_index),
            "target_index": str(self.target_index),
            "attractors": str(self.attractors),
            "context_length": str(self.context_length),
            "prefix_length": str(self.prefix_length),
            "punct": "1" if self.punct else "0",
            "perturbation": self.perturbation,
            "text": self.text,
            "relation": self.relation,
            "feature": self.feature,
            "wrong_value": self.wrong_value,
            "target_side": self.target_side,
            "distance": str(self.distance),
            "scoring": self.scoring,
            "wrong_source": self.wrong_source,
        }

    @classmethod
    def from_row(cls, row: dict[str, str]) -> "Item":
        tokens = tuple(row["tokens"].split(" "))
        return cls(
            item_id=row["item_id"],
            variant=int(row["variant"]),
            construction=row["construction"],
            direction=row["direction"],
            tokens=tokens,
            pos=tuple(row["pos"].split(" ")),
            feats=tuple(row["feats"].split(" ")),
            correct=row["correct"],
            wrong=row["wrong"],
            lemma=row["lemma"],
            number=row["number"],
            cue_index=int(row["cue_index"]),
            target_index=int(row["target_index"]),
            attractors=int(row["attractors"]),
            punct=row["punct"] == "1",
            perturbation=row.get("perturbation") or "original",
            space_after=_row_spacing(row.get("text"), tokens),
            relation=row.get("relation") or "",
            feature=row.get("feature") or "",
            wrong_value=row.get("wrong_value") or "",
            scoring=row.get("scoring") or "",
            wrong_source=row.get("wrong_source") or "",
        )


def _row_spacing(text: str | None, tokens: tuple[str, ...]) -> tuple[bool, ...] | None:
    """The ``text`` column as flags; None when absent or when it is the rule's spacing
    (so that an item without spacing reads back equal to itself)."""
    if text is None:
        return None
    flags = spacing_of(text, tokens)
    if flags is None:
        raise ValueError(f"text {text!r} does not spell the tokens in order")
    return None if flags == rule_spacing(tokens) else flags


#: the relation items' columns (module docstring), written after ``text``
RELATION_COLUMNS = ["relation", "feature", "wrong_value", "target_side", "distance", "scoring", "wrong_source"]
#: the columns of every items.tsv
COLUMNS = [c for c in Item("", 0, "", "", (), (), (), "", "", "", "", 0, 0, 0, False).as_row()
           if c not in RELATION_COLUMNS]
#: what relation items' ``scoring`` may say
SCORING = ("target", "sentence")


def write_items(path: str | os.PathLike, items: Iterable[Item]) -> int:
    """Write items (header first) to ``path``; returns the number of rows. The
    relation columns are written when any item has a ``relation``."""
    items = items if isinstance(items, (list, tuple)) else list(items)
    columns = COLUMNS + RELATION_COLUMNS if any(it.relation for it in items) else COLUMNS
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(columns) + "\n")
        for item in items:
            row = item.as_row()
            fh.write("\t".join(row[c] for c in columns) + "\n")
    return len(items)


def read_items(path: str | os.PathLike) -> Iterator[Item]:
    """Stream items from an ``items.tsv`` file or a directory holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / ITEMS_FILE
    if not path.exists():
        raise AgreeError(f"{path}: no such test set (expected an items.tsv or a directory with one)")
    try:
        yield from _read_rows(path)
    except UnicodeDecodeError as e:
        raise AgreeError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None


def _read_rows(path: Path) -> Iterator[Item]:
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = header_of(reader, path)
        if header is None:
            raise AgreeError(f"{path}: empty file (not even a header line); not an agree items.tsv")
        missing = [c for c in ("item_id", "variant", "tokens", "correct", "wrong", "target_index")
                   if c not in header]
        if missing:
            raise AgreeError(f"{path}: not an agree items.tsv (missing columns: {', '.join(missing)})")
        n = len(header)
        for row in checked_rows(reader, path):
            lineno = reader.line_num
            if None in row or None in row.values():   # csv's marks for too many / too few fields
                found = n + len(row.get(None) or ()) - sum(v is None for v in row.values())
                raise AgreeError(f"{path}:{lineno}: expected {n} columns, found {found} "
                                 f"(a truncated or damaged row)")
            try:
                item = Item.from_row(row)
            except (KeyError, ValueError, AttributeError) as e:
                raise AgreeError(f"{path}:{lineno}: malformed item row ({e})") from None
            if (problem := item_problem(item)) is not None:
                raise AgreeError(f"{path}:{lineno}: not a usable item: {problem}")
            yield item
