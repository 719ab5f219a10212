"""Shared openings: sequences that start with the same tokens are read once up to
where they part (a minimal pair's two sentences, a target's two candidates, and
any sentences of a test set that open alike).

:func:`group_openings` sorts the sequences and cuts the sorted list into runs
that minimise the tokens a model must read: a run of m sequences whose longest
common opening is c tokens costs ``sum(lengths) - (m - 1) * c`` (the opening once,
then each member's own rest). The cut is exact (dynamic programming over the sorted
order, runs of at most ``max_group``). Every member keeps at least one token of its
own, so that its states after the opening come from its own continuation.
Engine-agnostic: the transformers engine reads an opening into a key/value cache
and continues each member from it; llama.cpp tags the opening with every member's
sequence id.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Opening:
    """``members`` (indices into the sequences) share their first ``shared`` tokens;
    a group of one has ``shared`` = its whole length (nothing to continue)."""
    shared: int
    members: tuple[int, ...]


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def group_openings(seqs: Sequence[Sequence[int]], max_group: int = 16,
                   min_shared: int = 2) -> list[Opening]:
    """Groups covering every sequence once (see the module docstring); a shared
    opening shorter than ``min_shared`` tokens is not worth a second pass."""
    n = len(seqs)
    if n == 0:
        return []
    order = sorted(range(n), key=lambda i: (tuple(seqs[i]), i))
    adj = [_lcp(seqs[order[k]], seqs[order[k + 1]]) for k in range(n - 1)]
    best = [0] * (n + 1)      # best[j]: tokens read for the first j sorted sequences
    cut = [0] * (n + 1)       # where the last run of best[j] starts
    total = [0] * (n + 1)
    for j in range(1, n + 1):
        total[j] = total[j - 1] + len(seqs[order[j - 1]])
    for j in range(1, n + 1):
        best[j], cut[j] = best[j - 1] + len(seqs[order[j - 1]]), j - 1
        c, shortest = None, len(seqs[order[j - 1]])
        for a in range(j - 2, max(j - max_group, 0) - 1, -1):   # run = sorted[a .. j-1]
            c = adj[a] if c is None else min(c, adj[a])
            shortest = min(shortest, len(seqs[order[a]]))
            shared = min(c, shortest - 1)
            if shared < min_shared:
                break
            cost = best[a] + total[j] - total[a] - (j - a - 1) * shared
            if cost < best[j]:
                best[j], cut[j] = cost, a
    groups, j = [], n
    while j > 0:
        a = cut[j]
        members = tuple(order[a:j])
        if len(members) == 1:
            groups.append(Opening(len(seqs[members[0]]), members))
        else:
            c = min(adj[a:j - 1])
            shared = min(c, min(len(seqs[m]) for m in members) - 1)
            groups.append(Opening(shared, members))
        j = a
    return groups[::-1]


def tokens_read(seqs: Sequence[Sequence[int]], groups: Sequence[Opening]) -> int:
    """How many tokens the groups make a model read (for reports and tests)."""
    out = 0
    for g in groups:
        out += g.shared + sum(len(seqs[m]) - g.shared for m in g.members)
    return out


def distinct_sequences(seqs: Sequence[Sequence[int]]) -> tuple[list[list[int]], list[int]]:
    """(the distinct sequences in order of first appearance, per sequence the index of its
    distinct one): a sentence that several items share is read once."""
    index: dict[tuple[int, ...], int] = {}
    where = [index.setdefault(tuple(s), len(index)) for s in seqs]
    return [list(t) for t in index], where
