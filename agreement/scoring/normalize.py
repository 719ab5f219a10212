"""Length normalisations of whole-sentence scores (``agree score --normalize``).

A whole-sentence comparison sums log-probabilities, so a longer sentence pays for its
extra pieces; people ask for the choice made on a normalised score instead
(lm-evaluation-harness's ``acc_norm`` and ``acc_bytes``, SLOR). Each normalisation turns
an item's two natural-log sentence scores into two comparable numbers; the item is
right when the correct sentence's is strictly greater (a tie stays undecidable):

======== ==========================================================================
sum      (default) log P(sentence): unchanged, as every run before this option
token    log P(sentence) / the model's pieces for its words (the pieces scored after
         BOS under the convention; a word-level model: its words)
byte     log P(sentence) / UTF-8 bytes of the sentence's text as written
char     log P(sentence) / characters of that text: lm-evaluation-harness's
         ``acc_norm`` (its ``completion_len`` is ``len(choice)``, the sentence without
         the target delimiter)
slor     (log P(sentence) - log P_unigram(sentence)) / words, P_unigram from an agree
         word unigram (``--unigram DIR``; Lau, Clark and Lappin 2017)
======== ==========================================================================

It is applied to the scored rows after every model has scored (so the shards of a
resumable run keep raw sums, and any normalisation of one run reads the same shards):
``items.tsv``'s ``logp_correct``/``logp_wrong`` then hold the normalised values, and
the manifest records ``normalize`` (and ``unigram``). Whole sentences only: the target
method compares two forms after one prefix, where lengths are those of the forms.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from formats.scored import ScoredTable
from formats.spacing import render
from lm.backends import ModelLoading
from lm.errors import FieldError, literal
from lm.load import load_model
from lm.pieces import spaces_of

#: the normalisations, in the order of the module docstring (``sum``: none)
NORMALIZATIONS = ("sum", "token", "byte", "char", "slor")


def check_normalize(normalize: str | None, unigram: str | None, method: str) -> str:
    """``normalize`` (None: ``sum``) when it can be applied with ``unigram`` and ``method``;
    :class:`FieldError` otherwise (one line, before any model is loaded)."""
    name = normalize or "sum"
    if name not in NORMALIZATIONS:
        raise FieldError(f"{{normalize}} {name!r}: unknown (known: {', '.join(NORMALIZATIONS)})")
    if name != "sum" and method != "sentence":
        raise FieldError(f"{{normalize}} {name} divides whole-sentence scores; use {{method}} sentence")
    if name == "slor" and not unigram:
        raise FieldError("{normalize} slor needs a word unigram model: give {unigram} DIR "
                         "(one from agree train-lm {arch} unigram)")
    if unigram and name != "slor":
        raise FieldError(f"{{unigram}} is read by {{normalize}} slor only (not {name})")
    return name


def load_unigram(path: str):
    """The word unigram model at ``path`` (a :class:`FieldError` for any other model)."""
    uni = load_model(path)
    if uni.kind != "unigram":
        uni.close()
        raise FieldError(f"{{unigram}} {literal(path)} is a {uni.kind} model, not a word "
                         "unigram (agree train-lm {arch} unigram)")
    return uni


def sentence_text(words) -> str:
    """The sentence's text as written (its spacing flags; single spaces without them)."""
    return render(list(words), spaces_of(words, getattr(words, "space_after", None)))


def divisors(name: str, sentences: Sequence, pieces: Callable | None = None) -> np.ndarray:
    """Per sentence, what ``name`` divides by (float64): pieces (``pieces(words)`` gives the
    model's pieces per word), UTF-8 bytes, characters, or words (``slor``)."""
    if name == "token":
        return np.array([sum(len(p) for p in pieces(s)) for s in sentences], dtype=np.float64)
    if name == "byte":
        return np.array([len(sentence_text(s).encode("utf-8")) for s in sentences], dtype=np.float64)
    if name == "char":
        return np.array([len(sentence_text(s)) for s in sentences], dtype=np.float64)
    return np.array([len(s) for s in sentences], dtype=np.float64)


def normalized(name: str, logp: np.ndarray, sentences: Sequence, *, pieces: Callable | None = None,
               unigram=None) -> np.ndarray:
    """``logp`` (sentence scores, any shape, aligned with ``sentences`` flattened) under
    normalisation ``name``; ``unigram``: a scorer whose ``word_logprobs`` is the unigram
    (``slor``). A zero divisor (a sentence of no pieces) gives NaN: undecidable."""
    flat = np.asarray(logp, dtype=np.float64).reshape(-1)
    if name == "sum":
        return flat.reshape(np.shape(logp))
    if name == "slor":
        flat = flat - np.array([float(np.sum(w)) for w in unigram.word_logprobs(list(sentences))])
    d = divisors(name, sentences, pieces)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(d > 0, flat / np.where(d > 0, d, 1.0), np.nan)
    return out.reshape(np.shape(logp))


def normalize_table(table: ScoredTable, name: str, scorers: Mapping[str, object], unigram=None,
                    pair: Callable | None = None) -> ScoredTable:
    """The rows of the models in ``scorers`` (name -> a scorer, read for its pieces only)
    with their sentence scores normalised; other rows (a paper .tab's columns) as they
    were. ``pair(item)`` gives an item's (correct, wrong) sentences."""
    if name == "sum" or not len(table):
        return table
    lc, lw = table.logp_correct.copy(), table.logp_wrong.copy()
    for model, scorer in scorers.items():
        rows = np.flatnonzero(table.model == model)
        if not len(rows):
            continue
        sentences = [s for it in table.items[rows] for s in pair(it)]
        logp = np.stack([lc[rows], lw[rows]], axis=1)
        out = normalized(name, logp, sentences, unigram=unigram,
                         pieces=None if scorer is None else scorer.sentence_pieces)
        lc[rows], lw[rows] = out[:, 0], out[:, 1]
    return table.with_scores(lc, lw)


def apply_normalization(table: ScoredTable, name: str, specs: Sequence, unigram: str | None,
                        pair: Callable, loading: ModelLoading) -> ScoredTable:
    """:func:`normalize_table` with what ``name`` needs loaded here: each model of ``specs``
    (``token``: its tokenizer's pieces; loaded with ``loading``, closed after) and
    the ``unigram`` model (``slor``)."""
    if name == "sum":
        return table
    scorers, uni = {}, None
    try:
        if name == "token":
            for spec in specs:
                scorer = load_model(spec, loading)
                scorers[scorer.name] = scorer
        else:   # bytes, characters and words need no model: a stand-in that names each
            scorers = {spec.name or str(spec.directory): None for spec in specs}
        if name == "slor":
            uni = load_unigram(unigram)
        return normalize_table(table, name, scorers, uni, pair)
    finally:
        for scorer in [*scorers.values(), uni]:
            if scorer is not None:
                scorer.close()
