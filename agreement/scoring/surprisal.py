"""Per-token surprisal of the scored sentences: ``tokens.tsv`` (``agree score --surprisal``).

Long format, one row per (test set, item, variant, model, sentence, word), header
first, tab-separated:

============ ================================================================
testset      the TESTSET argument
item_id      as in items.tsv
variant      as in items.tsv
model        the model's name
sentence     ``correct`` (the grammatical sentence) or ``wrong``
token_index  0-based word position
word         the word
pieces       the pieces the model read for it in this sentence, space-separated, as
             fed (the word itself for word-level models; for subword models the
             pieces of the text it read that the word owns, by character offsets:
             ``There`` at the start, ``Ġis`` after a space, ``.`` attached)
surprisal    -log P(word | sentence start, words before), in ``units``
============ ================================================================

The probabilities are those of :meth:`lm.base.Scorer.word_logprobs` (each backend's
sentence-start convention; no end-of-sentence symbol), so a sentence's surprisals
sum to minus its ``--method sentence`` log-probability (in nats). Units: ``nats``
(natural log, as everywhere in the tool) or ``bits`` (divided by ln 2).
"""
from __future__ import annotations

import csv
import math
import os
from typing import Sequence

from agreement.errors import AgreeError
from agreement.scoring.score import sentence_pair

TOKENS_FILE = "tokens.tsv"
COLUMNS = ("testset", "item_id", "variant", "model", "sentence", "token_index", "word", "pieces",
           "surprisal")
UNITS = {"nats": 1.0, "bits": 1.0 / math.log(2.0)}
#: a surprisal row's key: (testset, item_id, variant, model, sentence)
SurprisalKey = tuple[str, str, int, str, str]


class SurprisalWriter:
    """Writes ``tokens.tsv`` rows as the scorer hands over per-word log-probabilities:
    pass :meth:`add` as ``on_words`` to :func:`agreement.scoring.score.score_items`."""

    def __init__(self, path: str | os.PathLike, units: str = "nats"):
        if units not in UNITS:
            raise AgreeError(f"unknown surprisal unit {units!r} (known: {', '.join(UNITS)})")
        self.factor = UNITS[units]
        self.units = units
        self.rows = 0
        self._fh = open(path, "w", encoding="utf-8", newline="")
        self._fh.write("\t".join(COLUMNS) + "\n")

    def add(self, scorer, items: Sequence, testsets: Sequence[str], good, bad) -> None:
        for item, label, g, b in zip(items, testsets, good, bad):
            for which, words, logps in zip(("correct", "wrong"), sentence_pair(item), (g, b)):
                pieces = scorer.sentence_pieces(words)
                for i, (word, lp) in enumerate(zip(words, logps)):
                    self._fh.write("\t".join((label, item.item_id, str(item.variant), scorer.name,
                                              which, str(i), word, " ".join(pieces[i]),
                                              repr(-float(lp) * self.factor))) + "\n")
                    self.rows += 1

    def close(self) -> None:
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_surprisal(path: str | os.PathLike) -> dict[SurprisalKey, list[float]]:
    """``tokens.tsv`` read back (``agree browse``): (testset, item_id, variant, model,
    sentence) -> per-word surprisal, by the column names, words in order."""
    out: dict[SurprisalKey, list[float]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, [])
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise AgreeError(f"{path}: not a tokens.tsv of this version of agree (it lacks {', '.join(missing)})")
        t, i, v, m, s, k, x = (header.index(c) for c in ("testset", "item_id", "variant", "model", "sentence",
                                                         "token_index", "surprisal"))
        for line, row in enumerate(reader, start=2):
            try:
                key = (row[t], row[i], int(row[v]), row[m], row[s])
                values = out.setdefault(key, [])
                if int(row[k]) != len(values):
                    raise ValueError(f"token_index {row[k]} out of order")
                values.append(float(row[x]))
            except (ValueError, IndexError) as e:
                raise AgreeError(f"{path}:{line}: not a tokens.tsv row ({e})") from None
    return out
