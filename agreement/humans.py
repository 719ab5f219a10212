"""Human judgments on agreement items, and how models compare with them.

Two input formats (:func:`formats.humans.read_humans` reads both, telling them apart by the header):

1. The paper's ``best_model_mturk.tab`` (Italian): two rows per sentence, ``mturk_count``
   = number of raters who chose that row's candidate form.
2. Our own TSV, UTF-8, tab-separated, header first, one row per (item, variant)::

       item_id  variant  votes_correct  votes_wrong
       it_isdt-ud-dev:s12:3  0  9  1

   ``item_id`` / ``variant`` as in ``items.tsv``; the votes are counts of raters who
   chose the correct and the wrong form. Further columns are ignored.

Human accuracy = mean over items of the share of raters choosing the correct form
(the paper's 94.5% original / 88.4% nonce for Italian). Items with no votes are
skipped. Judgments are joined to test items by (item_id, variant); the paper file
also carries the prefix and both forms, which join it to the same sentences read
from another format (``generated.text/.gold``, whose ids may differ).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from formats.errors import AgreeError
from formats.items import Item
from formats.humans import HumanJudgment
from formats.scored import ScoredTable
from agreement.stats import pearson, spearman

class HumanIndex:
    """Finds the judgment for a test item: by (item_id, variant), else by
    (variant, prefix, correct form, wrong form) when that content key is unique."""

    def __init__(self, judgments: Iterable[HumanJudgment]):
        self.judgments = list(judgments)
        self._by_id = {(j.item_id, j.variant): j for j in self.judgments}
        by_text: dict[tuple, list[HumanJudgment]] = {}
        for j in self.judgments:
            if j.correct:
                by_text.setdefault((j.variant, j.prefix, j.correct, j.wrong), []).append(j)
        self._by_text = {k: v[0] for k, v in by_text.items() if len(v) == 1}

    def __len__(self) -> int:
        return len(self.judgments)

    def lookup(self, item: Item) -> HumanJudgment | None:
        if ":" in item.perturbation:
            # raters judged the unperturbed sentence; a perturbed copy may keep its ids
            return None
        j = self._by_id.get((item.item_id, item.variant))
        if j is None:
            j = self._by_text.get((item.variant, " ".join(item.prefix), item.correct, item.wrong))
        return j


def check_coverage(index: HumanIndex, items: Iterable[Item], path: str | os.PathLike) -> int:
    """How many items have judgments; :class:`AgreeError` when none has."""
    n = sum(1 for it in items if index.lookup(it) is not None)
    if n == 0:
        raise AgreeError(f"{path}: none of its {len(index)} judgments matches an item of the test "
                         "sets (joined by item_id and variant, or by prefix and both forms)")
    return n


def human_scores(items: Iterable[Item], index: HumanIndex) -> list[tuple[Item, float]]:
    """(item, share of raters choosing the correct form) for every item with judgments."""
    out = []
    for it in items:
        j = index.lookup(it)
        if j is not None:
            out.append((it, j.share_correct))
    return out


@dataclass(frozen=True)
class HumanAgreement:
    """Item-level agreement between one model and people.

    model          model name
    condition      ``original``, ``nonce``, ... or ``all``
    n              items with both a model score and judgments
    pearson        correlation of human share-correct with P(c) / (P(c) + P(w))
    spearman       the same on ranks
    majority_n     items where raters had a majority (ties left out)
    majority_match fraction of those where the model chose the majority's form
    """
    model: str
    condition: str
    n: int
    pearson: float
    spearman: float
    majority_n: int
    majority_match: float


def model_human_agreement(scored: ScoredTable, index: HumanIndex, *, model: str,
                          condition: str = "all") -> HumanAgreement:
    """Agreement of one model's scored rows (with their items) with the judgments."""
    found = [(i, index.lookup(it)) for i, it in enumerate(scored.items)]
    pairs = [(i, j) for i, j in found if j is not None]
    share = scored.p_correct_share.tolist()
    correct = scored.correct.tolist()
    with_majority = [(i, j) for i, j in pairs if j.majority is not None]
    match = sum(1 for i, j in with_majority if correct[i] == j.majority)
    return HumanAgreement(
        model, condition, len(pairs),
        pearson([j.share_correct for _, j in pairs], [share[i] for i, _ in pairs]),
        spearman([j.share_correct for _, j in pairs], [share[i] for i, _ in pairs]),
        len(with_majority), match / len(with_majority) if with_majority else float("nan"))
