"""The scored ``items.tsv`` that ``agree score`` writes: one row per (item, model).

:class:`ScoredItem` is the record; :func:`write_scored` the writer; the reader
that reports and analyses use is :func:`read_scored_rows` (plain rows, because a
scored file holds the items' ids and labels, not their words).

An item is right for a model when natural-log P(correct) is strictly greater than
natural-log P(wrong); a tie (or NaN) is *undecidable*, neither right nor wrong.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Iterable

from formats.items import Item

#: Columns of the scored ``items.tsv``, then three of ours (``undecidable``:
#: 1 for a tie; such a row also has ``correct`` 0, so readers of the older columns see
#: what they saw before).
SCORED_COLUMNS = ("item_id", "variant", "perturbation", "construction", "attractors", "model",
                  "logp_correct", "logp_wrong", "correct", "oov", "group", "testset", "method", "undecidable")
@dataclass(frozen=True)
class ScoredItem:
    """One item scored by one model.

    item          the test item (its prefix was scored)
    model         unique model name (directory name, or the .tab column)
    group         aggregation label; models of one group are averaged
    kind          backend kind: ``lstm``, ``transformer``, ``kn5``, ``unigram``
    logp_correct  natural-log P(correct form | prefix) (method ``sentence``: of the
                  whole correct sentence)
    logp_wrong    natural-log P(wrong form | prefix) (``sentence``: the wrong sentence)
    oov           a word the method reads (prefix and both forms; ``sentence``: both
                  whole sentences) is out of the model's vocabulary
    testset       the TESTSET argument the item came from
    method        ``target`` or ``sentence``
    pieces_differ the two forms are made of different numbers of the model's
                  pieces (subword models; reported in summary.md)
    """
    item: Item
    model: str
    group: str
    kind: str
    logp_correct: float
    logp_wrong: float
    oov: bool = False
    testset: str = ""
    method: str = "target"
    pieces_differ: bool = False

    @property
    def correct(self) -> bool:
        """Strictly more probable correct form (a tie is not correct; see :attr:`undecidable`)."""
        return self.logp_correct > self.logp_wrong

    @property
    def undecidable(self) -> bool:
        """The model cannot choose: both forms equally probable (or a NaN score)."""
        a, b = self.logp_correct, self.logp_wrong
        return a == b or math.isnan(a) or math.isnan(b)

    @property
    def p_correct_share(self) -> float:
        """P(correct) / (P(correct) + P(wrong)), a logistic of the log-odds."""
        d = self.logp_wrong - self.logp_correct
        if math.isnan(d):
            return 0.5
        if d > 700:
            return 0.0
        return 1.0 / (1.0 + math.exp(d))

    @property
    def key(self) -> tuple[str, str, int, str]:
        """Identifies the item across models (for paired comparisons)."""
        return (self.testset, self.item.item_id, self.item.variant, self.item.perturbation)

    item_id = property(lambda self: self.item.item_id)
    variant = property(lambda self: self.item.variant)
    perturbation = property(lambda self: self.item.perturbation)
    construction = property(lambda self: self.item.construction)
    attractors = property(lambda self: self.item.attractors)


def condition(item: Item) -> str:
    """Which table column an item belongs to: ``original``, ``nonce`` or a perturbation."""
    if item.perturbation in ("", "original"):
        return "original" if item.variant == 0 else "nonce"
    return item.perturbation


def _fmt(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else ("-inf" if x < 0 else "inf" if x > 0 else "nan")


def write_scored(path: str | os.PathLike, scored: Iterable[ScoredItem]) -> int:
    """Write the scored ``items.tsv`` (columns :data:`SCORED_COLUMNS`); returns rows."""
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(SCORED_COLUMNS) + "\n")
        for s in scored:
            it = s.item
            row = (it.item_id, str(it.variant), it.perturbation, it.construction, str(it.attractors),
                   s.model, _fmt(s.logp_correct), _fmt(s.logp_wrong), "1" if s.correct else "0",
                   "1" if s.oov else "0", s.group, s.testset, s.method,
                   "1" if s.undecidable else "0")
            fh.write("\t".join(row) + "\n")
            n += 1
    return n
