"""Scoring agreement items with language models: the :class:`ScoredTable` of scored rows,
:func:`score_items` over the models that :mod:`lm.load` reads from their specs, and the
scored ``items.tsv``.

An item is right for a model when natural-log P(correct | prefix) is strictly
greater than natural-log P(wrong | prefix). A tie is *undecidable*, neither right
nor wrong (both forms ``<unk>`` for a small vocabulary, or identical strings in the
released data: the model cannot prefer a form over itself); reports give accuracy
over the decidable items with their count, and the undecidable ones apart.

Several models of one kind (e.g. five seeds) share a *group* label; the report
gives each group's mean and standard deviation, as the paper does for its five
best models.

Two methods (``method``): ``target`` (the paper's: the two forms after the shared
prefix, :meth:`lm.base.Scorer.score_targets`) and ``sentence`` (BLiMP's and
lm-evaluation-harness's ``acc``: natural-log P of the whole correct sentence
against the whole wrong one, :meth:`lm.base.Scorer.word_logprobs` summed; for our
items the wrong sentence is the correct one with the wrong form at the target).
Pairs whose sentences differ in more than one word (``item.extra["target_ok"]``
False, from the minimal-pair readers) are compared by ``target`` over their differing
span when its words are contiguous (:mod:`agreement.scoring.span`: P(span | prefix), the
product over its words); the others are usable only with ``sentence``:
:func:`split_for_method` leaves them out of ``target`` and counts them.

An item's own ``scoring`` column wins in a ``target`` run (:func:`item_method`):
relation items whose target precedes its cue (a determiner or an adjective before its
noun) say ``sentence``, since the prefix up to the target holds no cue; they are scored
by whole sentence, with the sentence method's conventions, and the others by the
target. Each scored row records the method it got (``items.tsv``'s ``method``).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from agreement.errors import AgreeError
from treebanks.errors import literal
from agreement.scoring.normalize import apply_normalization
from agreement.scoring.score_checks import check_finite, counted_skips
from agreement.scoring.settings import ModelLoading, WhatToScore
from agreement.scoring.span import span_logprobs, target_span
from agreement.scoring.syntaxgym import PredictionOutcome, evaluate_suites
from formats.detok import space_after as rule_spacing
from treebanks.progress import progress
from formats.items import Item
from formats.testsets import TestSet
from formats.testsets.papertab import freq_baseline, scores_from_column
from formats.scored import ScoredTable
from lm.base import TargetQuery, Words
from lm.load import ModelSpec, load_model

log = logging.getLogger(__name__)

#: the scoring methods (see the module docstring)
METHODS = ("target", "sentence")
#: items a scorer is handed at once (it sorts them by length into its own batches);
#: also the shards of agreement.scoring.shard_store, so that every executor gives the same floats
CHUNK_SIZE = 1024


def load_scorers(specs: Sequence[ModelSpec], loading: ModelLoading):
    """Load each model (:func:`lm.load.load_model`, with ``loading``) as an ``lm.base.Scorer``
    named after its spec."""
    return [load_model(spec, loading) for spec in specs]


# --------------------------------------------------------------------------- scoring

def score_items(items: Sequence[Item], scorers: Sequence, *, require_in_vocab: bool = False,
                groups: Mapping[str, str] | None = None,
                chunk_size: int = CHUNK_SIZE, testsets: Sequence[str] | None = None,
                method: str = "target", on_words: Callable | None = None) -> ScoredTable:
    """Score every item with every scorer; returns the model-major scored rows.

    ``groups`` maps scorer name -> group label (default: the scorer's kind);
    ``testsets`` gives each item's TESTSET label (aligned with ``items``).
    ``method``: ``target`` or ``sentence`` (module docstring). ``on_words(scorer,
    items, testsets, good, bad)``, when given, receives each chunk's per-word
    natural-log probabilities of the correct and the wrong sentences (``--surprisal``).
    With ``require_in_vocab`` only items that every scorer fully covers are scored,
    so that all models are compared on the same items. Raises :class:`AgreeError`
    when a scorer knows none of the test set's target forms (wrong language or
    wrong vocabulary), or when ``require_in_vocab`` leaves no item.
    """
    if method not in METHODS:
        raise AgreeError(f"unknown scoring method {method!r} (known: {', '.join(METHODS)})")
    items = list(items)
    testsets = list(testsets) if testsets is not None else [""] * len(items)
    groups = dict(groups or {})
    oov = {s.name: oov_flags(items, s, method) for s in scorers}
    if require_in_vocab and scorers:
        keep = [i for i in range(len(items)) if not any(oov[s.name][i] for s in scorers)]
        if not keep:
            raise AgreeError("{require_in_vocab}: no item is fully in the vocabulary of every model "
                             f"({len(items)} items, models: {literal(', '.join(s.name for s in scorers))})",
                             fields=True)
        items, testsets = [items[i] for i in keep], [testsets[i] for i in keep]
        oov = {name: [flags[i] for i in keep] for name, flags in oov.items()}
    out: list[ScoredTable] = []
    methods = item_methods(items, method)
    for scorer in scorers:
        differ = piece_flags(items, scorer)
        group = groups.get(scorer.name) or scorer.kind or scorer.name
        bar = progress(log, total=len(items), desc=f"scoring {scorer.name}", unit="item")
        logps = []
        for start in range(0, len(items), chunk_size):
            batch = items[start:start + chunk_size]
            logps.append(score_chunk(scorer, batch, method, on_words, testsets[start:start + chunk_size]))
            bar.update(len(batch))
        bar.close()
        logp = np.concatenate(logps).astype(float) if logps else np.empty((0, 2))
        out.append(ScoredTable.of_items(items, model=scorer.name, group=group, kind=scorer.kind,
                                        logp_correct=logp[:, 0], logp_wrong=logp[:, 1], oov=oov[scorer.name],
                                        testset=testsets, method=methods, pieces_differ=differ))
    return ScoredTable.concat(out)


def score_chunk(scorer, batch: Sequence[Item], method: str, on_words, labels) -> np.ndarray:
    """(n, 2) natural-log scores of one chunk: each item by its own method
    (:func:`item_method`), its target or its whole sentences."""
    before = counted_skips(scorer)
    whole = np.array([m == "sentence" for m in item_methods(batch, method)], dtype=bool)
    logp = np.empty((len(batch), 2), dtype=np.float64)
    if whole.all() or on_words is not None:   # every item's sentences (tokens.tsv wants their words)
        logp, good, bad = sentence_logprobs(scorer, batch)
        check_finite(scorer.name, batch, logp, labels, counted_skips(scorer) - before)  # before tokens.tsv
        if on_words is not None:
            on_words(scorer, batch, labels, good, bad)
    elif whole.any():
        logp[whole] = sentence_logprobs(scorer, [it for it, w in zip(batch, whole) if w])[0]
    if not whole.any():
        logp = _target_logprobs(scorer, batch)
    elif not whole.all():
        logp[~whole] = _target_logprobs(scorer, [it for it, w in zip(batch, whole) if not w])
    check_finite(scorer.name, batch, logp, labels, counted_skips(scorer) - before)
    return logp


def sentence_logprobs(scorer, batch: Sequence[Item]) -> tuple[np.ndarray, list, list]:
    """(n, 2) natural-log P(whole correct sentence), P(whole wrong sentence), and the
    per-word natural logs of the correct and of the wrong sentences."""
    pairs = [sentence_pair(it) for it in batch]
    words = scorer.word_logprobs([g for g, _ in pairs] + [b for _, b in pairs])
    good, bad = words[:len(batch)], words[len(batch):]
    # the sum of the per-word log-probabilities is the sentence's (lm.base.Scorer)
    logp = np.array([[float(np.sum(g)), float(np.sum(b))] for g, b in zip(good, bad)],
                    dtype=np.float64).reshape(len(batch), 2)
    return logp, good, bad


def _target_logprobs(scorer, batch: Sequence[Item]) -> np.ndarray:
    """(n, 2) target-method scores: one word at the target, or a contiguous span of words
    (:mod:`agreement.scoring.span`) where the pair differs in several."""
    spans = [target_span(it) for it in batch]
    one = [j for j, s in enumerate(spans) if s is None]
    logp = np.asarray(scorer.score_targets([target_query(batch[j]) for j in one])) if one else np.zeros((0, 2))
    if getattr(logp, "shape", None) != (len(one), 2):
        raise AgreeError(f"model {scorer.name}: scorer returned shape "
                         f"{getattr(logp, 'shape', None)}, expected {(len(one), 2)}")
    if len(one) == len(batch):
        return logp
    out = np.empty((len(batch), 2), dtype=np.float64)  # spans: P(span | prefix), agreement.scoring.span
    out[one] = logp
    many = [j for j, s in enumerate(spans) if s is not None]
    out[many] = span_logprobs(scorer, [batch[j] for j in many], [spans[j] for j in many],
                              [sentence_pair(batch[j]) for j in many])
    return out


def sentence_pair(item: Item) -> tuple[Words, Words]:
    """The whole correct and wrong sentences of an item, as words with the spacing of
    the text as written (:class:`lm.base.Words`): the wrong one kept by a minimal-pair
    reader (``extra["wrong_tokens"]``/``["wrong_spaces"]``), else the correct one with
    the wrong form at the target."""
    q = target_query(item)
    bad = item.extra.get("wrong_tokens")
    spaces = item.extra.get("wrong_spaces")
    if bad is None:
        bad = list(q.words)
        bad[item.target_index] = item.wrong
        spaces = q.space_after
    return Words(q.words, q.space_after), Words(bad, _fitting(spaces, bad))


def _fitting(spaces, words):
    """The flags when they fit the words (one each), else the detokenization rule's."""
    return tuple(spaces) if spaces is not None and len(spaces) == len(words) else rule_spacing(words)


def target_usable(item: Item) -> bool:
    """Whether the target method applies: the pair differs in exactly one word (and, for
    BLiMP, the paradigm allows the one-prefix method), or in a contiguous span."""
    return bool(item.extra.get("target_ok", True)) or target_span(item) is not None


def item_method(item: Item, method: str) -> str:
    """The method an item gets in a run of ``method``: ``sentence`` in a sentence run, or
    when the item's own ``scoring`` says so (the target precedes its cue); else ``target``."""
    return "sentence" if method == "sentence" or item.scoring == "sentence" else "target"


def item_methods(items: Sequence[Item], method: str) -> list[str]:
    """:func:`item_method` of each item."""
    return [item_method(it, method) for it in items]


def split_for_method(items: Sequence[Item], method: str) -> tuple[list[Item], int]:
    """(items the method can score, how many it cannot): ``target`` skips pairs that are
    usable only with ``sentence`` (an item whose own ``scoring`` is ``sentence`` is kept:
    it is scored by sentence)."""
    if method != "target":
        return list(items), 0
    kept = [it for it in items if it.scoring == "sentence" or target_usable(it)]
    return kept, len(items) - len(kept)


def target_query(item: Item) -> TargetQuery:
    """The item as a model sees it: the whole sentence with the correct form at the
    target position (a masked model reads all of it, a causal one the prefix), and
    the two candidate forms, correct first."""
    words = list(item.tokens) if len(item.tokens) > item.target_index else list(item.prefix) + [item.correct]
    words[item.target_index] = item.correct
    return TargetQuery(tuple(words), item.target_index, (item.correct, item.wrong),
                       _fitting(item.spacing if len(item.tokens) == len(words) else None, words))


@dataclass(frozen=True)
class ModelScores:
    """What the models said: their scored rows, and each model's scoring conventions
    (``Scorer.conventions()``, taken after scoring so that counted skips are included),
    by model name, in order."""
    table: ScoredTable
    conventions: Mapping[str, Mapping[str, object]]


@dataclass(frozen=True)
class Scoring:
    """What scoring produced, for the report to render and the manifest to record.

    testsets     the test sets scored, as loaded (their items the method's; their notes)
    models       the models scored (:class:`lm.load.ModelSpec`), in order
    method       ``target`` or ``sentence``
    table        the scored rows: the models' and the paper .tab columns' (``items.tsv``)
    conventions  model name -> its scoring conventions (:class:`ModelScores`)
    predictions  the SyntaxGym suites' prediction outcomes (``predictions.tsv``)
    tokens_rows  rows of ``tokens.tsv`` (None: not written)
    """
    testsets: tuple[TestSet, ...]
    models: tuple[ModelSpec, ...]
    method: str
    table: ScoredTable
    conventions: Mapping[str, Mapping[str, object]]
    predictions: tuple[PredictionOutcome, ...] = ()
    tokens_rows: int | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        """The test sets' names, as the scored rows' ``testset`` column gives them."""
        return tuple(ts.label for ts in self.testsets)

    @property
    def notes(self) -> tuple[str, ...]:
        """What was skipped and found while reading and preparing the test sets, in order."""
        return tuple(n for ts in self.testsets for n in (*ts.notes, *ts.info))


def score_testsets(testsets: Sequence[TestSet], specs: Sequence[ModelSpec] = (),
                   what: WhatToScore = WhatToScore(), loading: ModelLoading = ModelLoading(), *,
                   on_words: Callable | None = None, score_models: Callable | None = None) -> Scoring:
    """Score loaded test sets with model directories and/or output columns of paper .tab
    files (``what``'s ``from_outputs``); the ``freq`` column of a paper .tab adds the
    paper's unigram baseline. Every model is loaded with ``loading``
    (:func:`lm.load.load_model`). ``score_models``: how the models score the test sets
    (default :func:`score_in_process`: loaded and scored here;
    :class:`agreement.scoring.score_sharded.ShardedScoring` hands shards to an executor), called
    as :func:`score_in_process` is. SyntaxGym suites' own predictions are evaluated too
    (:func:`suite_predictions`). ``require_in_vocab`` needs models: a .tab's columns
    have no vocabulary to require. ``normalize``/``unigram``: the models' whole-sentence
    scores normalised (:mod:`agreement.scoring.normalize`; None: as scored)."""
    require_in_vocab, method, from_outputs = what.require_in_vocab, what.method, what.from_outputs
    if require_in_vocab and not specs:
        raise AgreeError("{require_in_vocab} needs a model with a vocabulary ({models}); "
                         "the model columns of a paper .tab ({from_outputs}) have none", fields=True)
    check_unique_items(testsets)
    scored = (score_models or score_in_process)(testsets, specs, loading, require_in_vocab=require_in_vocab,
                                                method=method, on_words=on_words)
    scored = ModelScores(apply_normalization(scored.table, what.normalize or "sum", specs, what.unigram,
                                             sentence_pair, loading), scored.conventions)
    suites = [(ts.label, s) for ts in testsets for s in ts.suites]
    predictions = suite_predictions(suites, specs, loading) if suites and specs else []
    extra = ScoredTable.concat([t for ts in testsets for t in output_columns(ts, from_outputs, method)])
    if require_in_vocab and specs:  # outputs join the models on the items they kept
        extra = extra.subset(np.isin(extra.row_keys(), scored.table.row_keys()))
    if not len(scored.table) and not len(extra):
        raise AgreeError("nothing to score: give {models} DIR or {from_outputs} COLUMN", fields=True)
    return Scoring(tuple(testsets), tuple(specs), method, ScoredTable.concat([extra, scored.table]),
                   scored.conventions, tuple(predictions))


def check_unique_items(testsets: Sequence[TestSet]) -> None:
    """The key that pairs models' outcomes, (test set, item, variant, perturbation), is unique."""
    seen: set[tuple] = set()
    for ts in testsets:
        for it in ts.items:
            key = (ts.label, it.item_id, it.variant, it.perturbation)
            if key in seen:
                raise AgreeError(f"{ts.label}: item {it.item_id} variant {it.variant} ({it.perturbation}) "
                                 "appears twice")
            seen.add(key)


def output_columns(ts: TestSet, from_outputs: Sequence[str], method: str) -> list[ScoredTable]:
    """The scored rows a paper .tab carries: the ``from_outputs`` model columns, and its
    ``freq`` baseline (target method)."""
    if from_outputs and ts.table is None:
        raise AgreeError("{from_outputs} needs a paper .tab file with model columns; "
                         f"{literal(ts.label)} is not one ({ts.kind} test set)", fields=True)
    if from_outputs and method != "target":
        raise AgreeError(f"{literal(ts.label)}: a paper .tab's model columns are target-method "
                         "scores; use {method} target with {from_outputs}", fields=True)
    out = [scores_from_column(ts.table, column, ts.label) for column in from_outputs]
    if ts.table is not None and method == "target":  # freq is a target-method baseline
        out.append(freq_baseline(ts.table, ts.label))
    return out


def score_in_process(testsets: Sequence[TestSet], specs: Sequence[ModelSpec], loading: ModelLoading, *,
                     require_in_vocab: bool, method: str, on_words: Callable | None) -> ModelScores:
    """Load every model here (with ``loading``) and score the test sets' items with
    :func:`score_items`."""
    scorers = load_scorers(specs, loading)
    try:
        scored = score_items([it for ts in testsets for it in ts.items], scorers,
                             require_in_vocab=require_in_vocab, groups={s.name: s.group for s in specs},
                             testsets=[ts.label for ts in testsets for _ in ts.items],
                             method=method, on_words=on_words)
        # after scoring: conventions include counted skips
        return ModelScores(scored, {s.name: s.conventions() for s in scorers})
    finally:
        for scorer in scorers:
            scorer.close()


def suite_predictions(suites: Sequence, specs: Sequence[ModelSpec], loading: ModelLoading) -> list:
    """The SyntaxGym suites' own predictions (``(label, suite)`` pairs), evaluated on region
    surprisals (:func:`agreement.scoring.syntaxgym.evaluate_suites`) by the models loaded here: a
    suite is a few dozen sentences, so this stays in this process whatever the executor."""
    scorers = load_scorers(specs, loading)
    try:
        return evaluate_suites(suites, scorers, {s.name: s.group for s in specs})
    finally:
        for scorer in scorers:
            scorer.close()


def oov_flags(items: Sequence[Item], scorer, method: str = "target") -> list[bool]:
    """Per item: does the prefix or either form (an item scored by ``sentence``, see
    :func:`item_method`: either whole sentence) contain a word the scorer lacks? Also checks that the scorer knows at least one
    target form at all."""
    known: dict[str, bool] = {}

    def iv(word: str) -> bool:
        if word not in known:
            known[word] = bool(scorer.in_vocab(word))
        return known[word]

    def oov(it: Item) -> bool:
        if item_method(it, method) == "sentence":
            return not all(iv(w) for pair in sentence_pair(it) for w in pair)
        s = target_span(it)
        if s is None:   # a span item reads its prefix and both spans
            return not (all(iv(w) for w in it.prefix) and iv(it.correct) and iv(it.wrong))
        return not all(iv(w) for w in sentence_pair(it)[0][:s[1]] + sentence_pair(it)[1][s[0]:s[2]])

    flags = [oov(it) for it in items]
    targets = sorted({w for it in items for w in (it.correct, it.wrong)})
    if targets and not any(iv(w) for w in targets):
        raise AgreeError(f"model {scorer.name} knows none of the {len(targets)} target forms of the "
                         f"test set (e.g. {', '.join(targets[:3])}): is it a model of another "
                         "language or vocabulary?")
    return flags


def piece_flags(items: Sequence[Item], scorer) -> list[bool]:
    """Per item: do the two forms have different numbers of the scorer's pieces?"""
    n: dict[str, int] = {}
    for w in {w for it in items for w in (it.correct, it.wrong)}:
        n[w] = len(scorer.word_pieces(w))
    return [n[it.correct] != n[it.wrong] for it in items]
