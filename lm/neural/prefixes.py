"""Reading many token sequences through a recurrent network once per distinct prefix.

Test items share their beginnings: the nine nonce variants of a sentence keep its function
words, the two sentences of a minimal pair are one sentence up to the word they differ in,
and a subword model reads an item's prefix once for each candidate. A recurrent network's
state after a prefix depends on that prefix alone, so each distinct prefix need be read
only once: step ``t`` reads one row per distinct prefix of length ``t + 1`` among the
sequences that long, its state taken from the row of the prefix one token shorter.

On the paper's Italian set (1,190 items; 16,440 tokens up to the targets) that is 13,791
rows. Every row goes through the same operations as when its sequence is read alone (a
row of a matrix product does not depend on the others), so the figures are the same, bit
for bit on a CPU, as reading each sequence alone. (The steps themselves:
:mod:`lm.neural.cell`.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class PrefixStep:
    """One step of the walk: the distinct prefixes of length ``t + 1`` (one row each)."""
    tokens: list[int]     #: each row's last token
    parents: list[int]    #: each row's prefix one token shorter: its row at step ``t - 1``
    rows: list[int]       #: for each sequence still being read (the first ones), its row


def prefix_steps(seqs: Sequence[Sequence[int]]) -> list[PrefixStep]:
    """The steps that read ``seqs`` (longest first, so that the sequences still being read
    at any step are the first ones), one row per distinct prefix."""
    if any(len(a) < len(b) for a, b in zip(seqs, seqs[1:])):
        raise ValueError("prefix_steps reads sequences longest first")
    steps: list[PrefixStep] = []
    row = [0] * len(seqs)          # each sequence's row at the step before
    active = len(seqs)             # the sequences longer than t: the first ones
    for t in range(len(seqs[0]) if seqs else 0):
        while len(seqs[active - 1]) <= t:
            active -= 1
        index: dict[tuple[int, int], int] = {}
        tokens: list[int] = []
        parents: list[int] = []
        for b in range(active):
            key = (row[b], seqs[b][t])
            r = index.setdefault(key, len(tokens))
            if r == len(tokens):
                tokens.append(seqs[b][t])
                parents.append(row[b])
            row[b] = r
        steps.append(PrefixStep(tokens, parents, row[:active]))
    return steps
