"""Human judgments, item by item: the file format and its one reader (:func:`read_humans`).

Two layouts are read: a TSV with the columns ``item_id``, ``variant``,
``votes_correct``, ``votes_wrong``; or the paper's ``best_model_mturk.tab``, whose
``mturk_count`` columns hold the raters of the correct and the wrong form. Items
nobody rated are left out. Matching judgments to test items is
:class:`agreement.reporting.humans.HumanIndex`."""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from formats.errors import AgreeError, names_undecodable
from formats.tsv import checked_rows
from formats.testsets.papertab import read_paper_tab

HUMAN_COLUMNS = ("item_id", "variant", "votes_correct", "votes_wrong")


@dataclass(frozen=True)
class HumanJudgment:
    """Rater votes for one item.

    item_id, variant  which item (as in items.tsv)
    votes_correct     raters choosing the correct form
    votes_wrong       raters choosing the wrong form
    prefix            the prefix as space-separated words ("" when the file has none)
    correct, wrong    the two forms ("" when the file has none)
    """
    item_id: str
    variant: int
    votes_correct: float
    votes_wrong: float
    prefix: str = ""
    correct: str = ""
    wrong: str = ""

    @property
    def share_correct(self) -> float:
        return self.votes_correct / (self.votes_correct + self.votes_wrong)

    @property
    def majority(self) -> bool | None:
        """True/False when most raters chose the correct/wrong form; None on a tie."""
        if self.votes_correct == self.votes_wrong:
            return None
        return self.votes_correct > self.votes_wrong


def _needed_columns_error(path: Path, found: Sequence[str]) -> AgreeError:
    return AgreeError(
        f"{path}: not a human-judgment file: it needs the columns {', '.join(HUMAN_COLUMNS)} "
        f"(or the paper's best_model_mturk.tab with mturk_count); found: {', '.join(found) or 'none'}")


@names_undecodable
def read_humans(path: str | os.PathLike) -> list[HumanJudgment]:
    """Read either format; raises :class:`AgreeError` naming the missing columns."""
    path = Path(path)
    if not path.is_file():
        raise AgreeError(f"{path}: no such human-judgment file")
    with open(path, encoding="utf-8") as fh:
        header = fh.readline().rstrip("\r\n").split("\t")
    if header[:3] == ["pattern", "constr_id", "sent_id"]:
        if "mturk_count" not in header:
            raise _needed_columns_error(path, header)
        table = read_paper_tab(path)
        return [HumanJudgment(it.item_id, it.variant, c, w, " ".join(it.prefix), it.correct, it.wrong)
                for it, (c, w) in zip(table.items, table.values["mturk_count"]) if c + w > 0]
    if any(c not in header for c in HUMAN_COLUMNS):
        raise _needed_columns_error(path, header)
    out = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        for row in checked_rows(reader, path):
            try:
                j = HumanJudgment(row["item_id"], int(row["variant"]), float(row["votes_correct"]),
                                  float(row["votes_wrong"]))
            except (TypeError, ValueError) as e:
                raise AgreeError(f"{path}:{reader.line_num}: malformed vote row ({e})") from None
            if not (math.isfinite(j.votes_correct) and math.isfinite(j.votes_wrong)):
                raise AgreeError(f"{path}:{reader.line_num}: a vote count that is not a finite number")
            if j.votes_correct < 0 or j.votes_wrong < 0:
                raise AgreeError(f"{path}:{reader.line_num}: negative vote count")
            if j.votes_correct + j.votes_wrong > 0:
                out.append(j)
    return out
