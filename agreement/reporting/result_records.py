"""The records of the one results model (:mod:`agreement.reporting.results` builds them):
what a report reads, without the code that counts and resamples.

Every accuracy is over the decidable items: a tie (both forms scored alike) is
undecidable, counted apart, never wrong.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from agreement.reporting.humans import HumanComparison, Reliability
from agreement.reporting.paired import PairedComparison
from agreement.reporting.predictions import PredictionAccuracy
from agreement.reporting.stats import N_BOOT, wilson
from formats.published import PublishedFigures

HUMANS = "humans"
BREAKDOWNS = ("all", "construction", "attractors", "testset")
#: breakdowns of rows that are relation items' (their construction is relation x feature)
RELATION_BREAKDOWNS = ("relation", "feature")
#: the breakdown by the method each row got, when a run scored items by more than one
METHOD = "method"
#: per-model counts also have this breakdown: items with at least one attractor
ATTRACTED = "attracted"


class CountKey(NamedTuple):
    """Where a :class:`Count` sits: one model's outcomes in one condition, in one cell of a
    breakdown (``by``: ``all``, ``attracted``, ``construction``, ``attractors``,
    ``testset``, and :func:`breakdowns`' others; ``value``: the cell, None for ``all``
    and ``attracted``)."""
    model: str
    condition: str
    by: str
    value: object = None


@dataclass(frozen=True)
class Count:
    """One model's outcomes in one cell: ``right`` of ``n`` decidable items, and ``ties``
    undecidable ones (not in ``n``)."""
    right: int = 0
    n: int = 0
    ties: int = 0

    def __add__(self, other: "Count") -> "Count":
        return Count(self.right + other.right, self.n + other.n, self.ties + other.ties)

    @property
    def pct(self) -> float | None:
        """Accuracy in % over the decidable items (None when there are none)."""
        return 100.0 * self.right / self.n if self.n else None

    def interval(self) -> tuple[float, float] | None:
        """95% Wilson interval in % (None when there are no decidable items)."""
        if not self.n:
            return None
        lo, hi = wilson(self.right, self.n)
        return 100 * lo, 100 * hi


@dataclass(frozen=True)
class Cell:
    """A group's (or the humans') accuracy in one breakdown cell, in %.

    by/value: the breakdown (``all``/None, ``construction``/name with its direction,
    ``attractors``/count, ``testset``/label); items: decidable items; sd: between the
    group's models (None for one model); undecidable: the group's ties in the cell
    (None for humans)."""
    group: str
    kind: str
    models: int
    condition: str
    by: str
    value: object
    items: int
    accuracy: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    undecidable: int | None = None

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        if d["undecidable"] is None:
            del d["undecidable"]
        return d


@dataclass(frozen=True)
class ModelRecord:
    """One model: its group and kind, items scored, items with an out-of-vocabulary word
    (None for released outputs: their vocabulary is unknown), items whose two forms
    differ in piece count, undecidable items; ``methods``: its items by the method they
    got (``target``/``sentence`` -> count), None when the rows are neither relation
    items nor scored by more than one method."""
    name: str
    group: str
    kind: str
    items: int
    oov_items: int | None
    piece_mismatch_items: int
    undecidable_items: int
    methods: Mapping[str, int] | None = None


@dataclass(frozen=True)
class Group:
    """Models averaged together (:attr:`Results.cells` give their mean and spread);
    ``baseline``: a unigram group, listed first."""
    group: str
    kind: str
    models: tuple[str, ...]
    baseline: bool


@dataclass(frozen=True)
class HumanCells:
    """Humans as one more group: judged items in the file, scored items matched, cells."""
    judgments: int
    matched_items: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Results:
    """Everything the reports show (see the module docstring). Besides the figures of the
    rows, what ``agree score`` adds for its report: the test sets, the method, the readers'
    notes, per-paradigm human and published figures (:mod:`formats.published`), the
    models' scoring conventions (model -> convention -> value, as each scorer states them)
    and the SyntaxGym suites' predictions."""
    conditions: tuple[str, ...]
    models: tuple[ModelRecord, ...]
    groups: tuple[Group, ...]
    counts: Mapping[CountKey, Count]
    cells: tuple[Cell, ...] = ()
    humans: HumanCells | None = None
    paired_tests: tuple[PairedComparison, ...] = ()
    human_agreement: tuple[HumanComparison, ...] = ()
    ceiling: Mapping[str, Reliability] = field(default_factory=dict)
    n_boot: int = N_BOOT
    testsets: tuple[str, ...] | None = None
    method: str | None = None
    notes: tuple[str, ...] = ()
    paradigm_humans: PublishedFigures | None = None
    reference: PublishedFigures | None = None
    conventions: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    predictions: tuple[PredictionAccuracy, ...] = ()

    def count(self, model: str, cond: str, by: str = "all", value=None) -> Count | None:
        """A model's :class:`Count` in one cell (:class:`CountKey`); None when it scored nothing there."""
        return self.counts.get(CountKey(model, cond, by, value))

    def values(self, by: str) -> list:
        """The breakdown values present in :attr:`counts` for ``by``."""
        return list(dict.fromkeys(k.value for k in self.counts if k.by == by))


def order_conditions(names) -> list[str]:
    """``original``, ``nonce``, then the perturbations in sorted order."""
    fixed = [c for c in ("original", "nonce") if c in names]
    return fixed + sorted(n for n in names if n not in fixed)
