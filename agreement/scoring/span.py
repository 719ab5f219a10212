"""The target method over a span of words: pairs whose sentences differ in more than one
word (French copula and adjective, *est petit* / *sont petits*) are compared, when the
differing words are contiguous, by natural-log P(span | shared prefix): the sum of the
span's per-word log-probabilities, each word after the prefix and the span's earlier
words (:meth:`lm.base.Scorer.word_logprobs` of the whole sentence, summed over the span:
a causal model reads only what precedes each word, a masked model the whole sentence,
as in its one-word target method). The words after the span are not summed, as the
one-word target method does not score them.

The span is what lies between the longest common prefix and the longest common suffix
of the two sentences; it is contiguous when, for sentences of equal length, every word
in it differs (``a X b Y`` against ``a Z b W`` is not: ``b`` is shared), and for
sentences of unequal length when both spans hold a word. A minimal-pair reader that
says its pair must be compared whole (BLiMP's ``one_prefix_method: false``) sets
``extra["sentence_only"]``; such pairs get no span.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from formats.items import Item


def differing_span(good: Sequence[str], bad: Sequence[str]) -> tuple[int, int, int]:
    """(start, end in ``good``, end in ``bad``): the words between the longest common
    prefix and the longest common suffix."""
    n = min(len(good), len(bad))
    start = 0
    while start < n and good[start] == bad[start]:
        start += 1
    tail = 0
    while tail < n - start and good[len(good) - 1 - tail] == bad[len(bad) - 1 - tail]:
        tail += 1
    return start, len(good) - tail, len(bad) - tail


def pair_words(item: Item) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The item's two sentences as words: the correct one, and the wrong one a
    minimal-pair reader kept (else the correct one with the wrong form at the target)."""
    good = list(item.tokens)
    good[item.target_index] = item.correct
    bad = item.extra.get("wrong_tokens")
    if bad is None:
        bad = list(good)
        bad[item.target_index] = item.wrong
    return tuple(good), tuple(bad)


def target_span(item: Item) -> tuple[int, int, int] | None:
    """The contiguous span of a pair that differs in more than one word, else None
    (a one-word pair, a non-contiguous one, or one its reader marks sentence-only)."""
    if item.extra.get("target_ok", True) or item.extra.get("sentence_only") \
            or "wrong_tokens" not in item.extra:
        return None
    good, bad = pair_words(item)
    start, end_good, end_bad = differing_span(good, bad)
    if end_good <= start or end_bad <= start:
        return None  # one sentence only adds words: nothing to compare on the other side
    if len(good) == len(bad) and any(good[k] == bad[k] for k in range(start, end_good)):
        return None  # a shared word inside: not contiguous
    return start, end_good, end_bad


def span_logprobs(scorer, items: Sequence[Item], spans: Sequence[tuple[int, int, int]],
                  pairs: Sequence | None = None) -> np.ndarray:
    """(n, 2) natural-log P(good span | prefix), P(bad span | prefix): sums of the
    whole sentences' :meth:`word_logprobs` over each span. ``pairs``: the sentences as
    the scorer should read them (words with the spacing of the text as written,
    :func:`agreement.scoring.score.sentence_pair`); default: the items' words."""
    pairs = list(pairs) if pairs is not None else [pair_words(it) for it in items]
    words = scorer.word_logprobs([g for g, _ in pairs] + [b for _, b in pairs])
    n = len(items)
    out = np.empty((n, 2), dtype=np.float64)
    for j, (start, end_good, end_bad) in enumerate(spans):
        out[j, 0] = float(np.sum(words[j][start:end_good]))
        out[j, 1] = float(np.sum(words[n + j][start:end_bad]))
    return out


def _words_differing(item: Item) -> int:
    start, end_good, end_bad = differing_span(*pair_words(item))
    return max(end_good, end_bad) - start


def multiword_note(label: str, items: Sequence[Item], method: str) -> str | None:
    """summary.md's note on the pairs of a test set that differ in more than one word:
    how many, and how ``method`` scores them; None when there are none."""
    multi = [it for it in items if not it.extra.get("target_ok", True) and "wrong_tokens" in it.extra
             and _words_differing(it) > 1]
    if not multi:
        return None
    if method == "sentence":
        return (f"{label}: {len(multi)} of {len(items)} pairs differ in more than one word "
                "(scored, as every pair, as whole sentences)")
    spans = sum(target_span(it) is not None for it in multi)
    return (f"{label}: {len(multi)} of {len(items)} pairs differ in more than one word; {spans} of "
            "them, whose differing words are contiguous, are scored over that span (natural-log "
            "P(span | prefix), the sum over its words), the others only by the sentence method")
