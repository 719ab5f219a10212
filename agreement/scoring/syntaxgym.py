"""SyntaxGym's own predictions, evaluated as SyntaxGym defines them (cpllab/syntaxgym-core):
every condition sentence of every item is scored word by word; a region's surprisal is
the sum (the suite's ``metric``; or the mean) of its words' surprisals in **bits**
(-log2 P, SyntaxGym's unit, which matters only for formulas with constants); a
prediction holds for an item when its formula (:mod:`formats.testsets.sgformula`) is
true of those region surprisals. The report's accuracies (per prediction, and for all
of a suite's predictions at once, as SyntaxGym reports a suite) are
:mod:`agreement.reporting.predictions`'.

A region's words are its content split on whitespace; the sentence-final punctuation
the minimal-pair readers split off the last word stays with the last region. Words the
model does not know are scored as its unknown-word symbol, as in the rest of agree.

``predictions.tsv`` (one row per model, suite, prediction and item) is written by
:func:`write_predictions`; columns :data:`COLUMNS`.
"""
from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from treebanks.progress import progress
from formats.testsets.blimp import split_words
from formats.testsets.sgformula import evaluate

log = logging.getLogger(__name__)

#: columns of predictions.tsv
COLUMNS = ("model", "group", "testset", "suite", "prediction", "formula", "item", "holds")
PREDICTIONS_FILE = "predictions.tsv"
_LOG2 = math.log(2.0)


@dataclass(frozen=True)
class PredictionOutcome:
    """Whether one prediction of a suite holds for one item under one model."""
    model: str
    group: str
    testset: str
    suite: str
    prediction: int
    formula: str
    item: int
    holds: bool


def region_words(regions) -> list[list[str]]:
    """Words per region (``regions``: (number, content) pairs), final punctuation split
    off the last word of the sentence as the minimal-pair items split it."""
    words = [content.split() for _, content in regions]
    last = max((k for k, w in enumerate(words) if w), default=None)
    if last is not None:
        words[last] = words[last][:-1] + list(split_words(words[last][-1]))
    return words


def _sentences(suites) -> tuple[list[list[str]], list[tuple]]:
    """Every condition sentence of every suite as words, and per sentence (suite index,
    item index, condition, ((region number, first word, end), ...))."""
    sentences, where = [], []
    for s, (_, suite) in enumerate(suites):
        for i, it in enumerate(suite.items):
            for cond, regions in it.conditions.items():
                words, spans, pos = [], [], 0
                for (number, _), ws in zip(regions, region_words(regions)):
                    spans.append((number, pos, pos + len(ws)))
                    words += ws
                    pos += len(ws)
                sentences.append(words)
                where.append((s, i, cond, tuple(spans)))
    return sentences, where


def _aggregate(values: np.ndarray, metric: str) -> float:
    if metric == "mean":
        return float(np.mean(values)) if len(values) else float("nan")
    return float(np.sum(values))


def evaluate_suites(suites: Sequence[tuple[str, object]], scorers, groups: dict | None = None,
                    chunk_size: int = 256) -> list[PredictionOutcome]:
    """Every prediction of every (test-set label, suite), item by item, for each scorer."""
    if not suites:
        return []
    sentences, where = _sentences(suites)
    out: list[PredictionOutcome] = []
    for scorer in scorers:
        logps: list[np.ndarray] = []
        bar = progress(log, total=len(sentences), desc=f"SyntaxGym regions {scorer.name}", unit="sentence")
        for start in range(0, len(sentences), chunk_size):
            logps += scorer.word_logprobs(sentences[start:start + chunk_size])
            bar.update(min(chunk_size, len(sentences) - start))
        bar.close()
        surprisal: dict[tuple[int, int], dict] = {}
        for (s, i, cond, spans), lp in zip(where, logps):
            metric = suites[s][1].metric
            cell = surprisal.setdefault((s, i), {})
            for number, a, b in spans:  # natural log -> bits, negated: surprisal
                cell[(cond, number)] = -_aggregate(np.asarray(lp[a:b], dtype=np.float64), metric) / _LOG2
        group = (groups or {}).get(scorer.name) or scorer.kind or scorer.name
        for s, (label, suite) in enumerate(suites):
            for i, it in enumerate(suite.items):
                for p in suite.predictions:
                    out.append(PredictionOutcome(scorer.name, group, label, suite.name, p.index, p.formula,
                                                 it.number, bool(evaluate(p.node, surprisal[(s, i)]))))
    return out


def write_predictions(path: str | os.PathLike, outcomes: Sequence[PredictionOutcome]) -> int:
    """Write predictions.tsv (columns :data:`COLUMNS`); returns the rows written."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(COLUMNS) + "\n")
        for o in outcomes:
            fh.write("\t".join((o.model, o.group, o.testset, o.suite, str(o.prediction),
                                o.formula.replace("\t", " "), str(o.item), "1" if o.holds else "0")) + "\n")
    return len(outcomes)
