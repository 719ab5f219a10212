"""Human judgments on agreement items, and how models compare with them: the one module
for human comparisons (matching judgments to items, the rater panel's noise ceiling, one
model-vs-humans record in two tiers, and ``agree analyze``'s per-condition comparison).

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

The noise ceiling of a rater panel (:func:`split_half_reliability`, from rater counts):
each item's ``n`` raters, ``c`` of whom chose the correct form, are split at random into halves of ``n // 2`` and
``n - n // 2`` raters; the number of correct votes in the first half is then
hypergeometric (``c`` "good" among ``n``, ``n // 2`` drawn), the second half gets
the rest. The two halves' shares are correlated over items, and the Spearman-Brown
formula ``2r / (1 + r)`` scales that to the whole panel. The point value is the
mean over ``n_splits`` random splits (200 by default); its interval comes from ``n_boot``
replicates that each resample the items with replacement and draw one split, so
it covers both item sampling and the split. The noise ceiling for any model's
correlation with the panel's share is ``sqrt(reliability)`` (the correlation the
panel's share can have with its own noise-free version), its interval the square
root of the reliability's bounds (negative bounds clipped to 0).

Items with fewer than two raters cannot be split and are excluded (counted). Numpy
only (``agree score`` draws it); :func:`graded_comparison` (``agree analyze``) takes its
correlations from scipy. Bootstrap intervals resample items (percentile, seeded
generator passed in).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from formats.errors import AgreeError
from formats.items import Item
from formats.humans import HumanJudgment
from formats.scored import ScoredTable
from agreement.reporting.stats import pearson, spearman


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


N_SPLITS = 200
#: item-bootstrap replicates of the panel's reliability and of the graded correlations' intervals
#: (analyze's default; agree score's paired tests and cells use :data:`agreement.reporting.stats.N_BOOT`)
N_BOOT_RATERS = 1000


@dataclass(frozen=True)
class Reliability:
    """Split-half reliability of a rater panel on one condition's items.

    method        ``pearson`` or ``spearman`` (the correlation of the two halves)
    n_items       items with at least two raters (used)
    excluded      items with fewer than two raters (left out)
    split_half    mean correlation of the two halves over the random splits
    reliability   mean Spearman-Brown corrected value over the splits
    reliability_ci  95% interval (item bootstrap x random split)
    ceiling       sqrt(reliability); ceiling_ci its interval
    mean_raters   mean raters per used item
    """
    method: str
    n_items: int
    excluded: int
    split_half: float
    reliability: float
    reliability_ci: tuple[float, float]
    ceiling: float
    ceiling_ci: tuple[float, float]
    mean_raters: float


def rowwise_corr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of ``a`` with the same row of ``b`` (NaN if constant)."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (a * b).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


def _share_ranks(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Average ranks (ties shared, as scipy's rankdata) of ``num / den`` along each row.

    Shares of a half-panel are fractions with small denominators, so each value maps
    to a code in a table of every possible fraction (exact, no float ties lost), and
    a row's ranks come from per-code counts: O(rows x items), with no per-row sort
    (scipy's rankdata on 1,000 x 15,000 shares took most of the analysis time)."""
    top = int(den.max())
    frac = np.array([[a / h if h else 0.0 for a in range(top + 1)] for h in range(top + 1)])
    values, table = np.unique(frac, return_inverse=True)
    codes = table.reshape(frac.shape)[den, num]  # (rows, items)
    k = values.size
    counts = np.zeros((codes.shape[0], k))
    np.add.at(counts, (np.arange(codes.shape[0])[:, None], codes), 1)
    below = np.cumsum(counts, axis=1) - counts  # items with a smaller share
    avg = below + (counts + 1) / 2
    return np.take_along_axis(avg, codes, axis=1)


def _split_corr(c: np.ndarray, w: np.ndarray, rng: np.random.Generator, reps: int,
                method: str) -> np.ndarray:
    """Half-vs-half correlations of ``reps`` random splits; rows of ``c``/``w`` may be resampled."""
    n = c + w
    h = n // 2
    shape = (reps, c.shape[-1])
    c, w, n, h = (np.broadcast_to(x, shape) for x in (c, w, n, h))
    first = rng.hypergeometric(c, w, h)
    if method == "spearman":
        return rowwise_corr(_share_ranks(first, h), _share_ranks(c - first, n - h))
    return rowwise_corr(first / h, (c - first) / (n - h))


def spearman_brown(r: np.ndarray | float) -> np.ndarray | float:
    """Reliability of the whole panel from the correlation of its two halves."""
    return 2 * r / (1 + r)


def split_half_reliability(votes_correct, votes_wrong, rng: np.random.Generator, *,
                           method: str = "spearman", n_splits: int = N_SPLITS,
                           n_boot: int = N_BOOT_RATERS) -> Reliability:
    """:class:`Reliability` of a panel from per-item vote counts (see the module doc)."""
    c = np.rint(np.asarray(votes_correct, dtype=float)).astype(np.int64)
    w = np.rint(np.asarray(votes_wrong, dtype=float)).astype(np.int64)
    keep = (c + w) >= 2
    c, w = c[keep], w[keep]
    nan2 = (float("nan"), float("nan"))
    if c.size < 3:
        return Reliability(method, int(c.size), int((~keep).sum()), float("nan"), float("nan"), nan2,
                           float("nan"), nan2, float(np.mean(c + w)) if c.size else float("nan"))
    r = _split_corr(c, w, rng, n_splits, method)
    sb = spearman_brown(r)
    idx = rng.integers(0, c.size, size=(n_boot, c.size))
    sb_boot = spearman_brown(_split_corr(c[idx], w[idx], rng, n_boot, method))
    lo, hi = np.nanquantile(sb_boot, [0.025, 0.975])
    rel = float(np.nanmean(sb))
    return Reliability(method, int(c.size), int((~keep).sum()), float(np.nanmean(r)), rel,
                       (float(lo), float(hi)), float(np.sqrt(max(rel, 0.0))),
                       (float(np.sqrt(max(lo, 0.0))), float(np.sqrt(max(hi, 0.0)))),
                       float(np.mean(c + w)))


@dataclass(frozen=True)
class HumanComparison:
    """One model against the raters, on one condition's items with judgments.

    n              items with both a model score and judgments
    pearson        correlation of the human share-correct with P(c) / (P(c) + P(w))
    spearman       the same on ranks
    Summary tier (``agree score``, :func:`model_human_agreement`; numpy only):
    majority_n     items where raters had a majority (ties left out)
    majority_match fraction of those where the model chose the majority's form
    Graded tier (``agree analyze``, :func:`graded_comparison`; scipy's correlations):
    pearson_ci, spearman_ci  95% item-bootstrap intervals
    point_biserial the model's correctness (0/1) against the human share; point_biserial_p
                   scipy's two-sided p for it
    Fields of the other tier are None.
    """
    model: str
    condition: str
    n: int
    pearson: float
    spearman: float
    majority_n: int | None = None
    majority_match: float | None = None
    pearson_ci: tuple[float, float] | None = None
    spearman_ci: tuple[float, float] | None = None
    point_biserial: float | None = None
    point_biserial_p: float | None = None


def model_human_agreement(scored: ScoredTable, index: HumanIndex, *, model: str,
                          condition: str = "all") -> HumanComparison:
    """The summary tier for one model's scored rows (with their items)."""
    found = [(i, index.lookup(it)) for i, it in enumerate(scored.items)]
    pairs = [(i, j) for i, j in found if j is not None]
    share = scored.p_correct_share.tolist()
    correct = scored.correct.tolist()
    with_majority = [(i, j) for i, j in pairs if j.majority is not None]
    match = sum(1 for i, j in with_majority if correct[i] == j.majority)
    return HumanComparison(
        model, condition, len(pairs),
        pearson([j.share_correct for _, j in pairs], [share[i] for i, _ in pairs]),
        spearman([j.share_correct for _, j in pairs], [share[i] for i, _ in pairs]),
        len(with_majority), match / len(with_majority) if with_majority else float("nan"))


def _boot_corr(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, n_boot: int,
               rank: bool) -> tuple[float, float]:
    """Percentile interval over item resamples. For Spearman the items keep their
    full-sample ranks (the Pearson correlation of resampled ranks): re-ranking every
    replicate moves the bounds by under 0.015 (tested) and dominated the run time on
    15,000 items."""
    from scipy import stats as sps  # lazy: optional extra; agree score's tier needs none
    if rank:
        x, y = sps.rankdata(x), sps.rankdata(y)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    r = rowwise_corr(x[idx], y[idx])
    lo, hi = np.nanquantile(r, [0.025, 0.975])
    return float(lo), float(hi)


def graded_comparison(model: str, condition: str, p_share, human_share, correct,
                      rng: np.random.Generator, *, n_boot: int = N_BOOT_RATERS) -> HumanComparison:
    """The graded tier: correlations of one model's graded preference with the human share,
    with item-bootstrap intervals, and the point-biserial of its correctness."""
    from scipy import stats as sps  # lazy: optional extra; agree score's tier needs none
    x = np.asarray(p_share, dtype=float)
    y = np.asarray(human_share, dtype=float)
    k = np.asarray(correct, dtype=float)
    nan, nan2 = float("nan"), (float("nan"), float("nan"))
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return HumanComparison(model, condition, int(x.size), nan, nan, pearson_ci=nan2, spearman_ci=nan2,
                               point_biserial=nan, point_biserial_p=nan)
    pr = float(sps.pearsonr(x, y).statistic)
    sr = float(sps.spearmanr(x, y).statistic)
    if np.ptp(k) == 0:
        pb, pp = nan, nan
    else:
        res = sps.pointbiserialr(k, y)
        pb, pp = float(res.statistic), float(res.pvalue)
    return HumanComparison(model, condition, int(x.size), pr, sr, pearson_ci=_boot_corr(x, y, rng, n_boot, False),
                           spearman_ci=_boot_corr(x, y, rng, n_boot, True), point_biserial=pb,
                           point_biserial_p=pp)


@dataclass(frozen=True)
class HumanCondition:
    """Humans on one condition (``agree analyze``): the panel's reliability (both correlation
    kinds), every model's graded comparison, and how many scored items had no raters."""
    condition: str
    judged_items: int
    unjudged_items: int
    human_accuracy: float
    reliability: tuple[Reliability, ...]
    models: tuple[HumanComparison, ...]


def human_conditions(table: ScoredTable, judgments: list[HumanJudgment], rng: np.random.Generator,
                     n_boot: int, conditions: Sequence[str] = ("original", "nonce")) -> list[HumanCondition]:
    """Reliability and graded comparisons per condition; judgments join the rows by
    (item_id, variant)."""
    votes = {(j.item_id, j.variant): (j.votes_correct, j.votes_wrong) for j in judgments}
    out = []
    for cond in conditions:
        rows = table.subset(table.condition == cond)
        if not len(rows):
            continue
        ids = list(dict.fromkeys(zip(rows.item_id.tolist(), rows.variant.tolist())))
        judged = [k for k in ids if k in votes and sum(votes[k]) > 0]
        if not judged:
            continue
        c = np.array([votes[k][0] for k in judged])
        w = np.array([votes[k][1] for k in judged])
        share = dict(zip(judged, (c / (c + w)).tolist()))
        rel = tuple(split_half_reliability(c, w, rng, method=m, n_boot=n_boot)
                    for m in ("pearson", "spearman"))
        comps = []
        p = rows.p_correct_share
        for m in rows.models():
            sel = np.flatnonzero(rows.model == m)
            keys = list(zip(rows.item_id[sel].tolist(), rows.variant[sel].tolist()))
            hit = [(i, share[k]) for i, k in zip(sel, keys) if k in share]
            if not hit:
                continue
            idx, hs = np.array([i for i, _ in hit]), np.array([s for _, s in hit])
            comps.append(graded_comparison(m, cond, p[idx], hs, rows.correct[idx], rng, n_boot=n_boot))
        out.append(HumanCondition(cond, len(judged), len(ids) - len(judged), float(np.mean(c / (c + w))),
                                  rel, tuple(comps)))
    return out
