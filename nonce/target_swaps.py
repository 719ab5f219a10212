"""Target swaps for systematicity (Newman et al. 2021): each original item with
its target pair replaced by the two forms of K other lemmas.

For an original item whose target is ``form`` (POS, features), the candidates are
the target pairs of :class:`nonce.pool.CandidatePool` for that key: another
lemma's form with the same POS, features, capitalisation (and initial class where
the language's articles need it) and its other-number form, the two spelled
differently (the same rules as the nonce targets). K distinct lemmas other than
the item's own are drawn without replacement, uniformly over lemmas; a lemma
with several such pairs contributes its most frequent one. Nothing else in the
sentence changes.

Id scheme (what ``agree analyze`` groups by): every item keeps its ``item_id``;
variant 0 is the original (perturbation ``original``), variants 1..k are the
swaps (perturbation ``swap``), one lemma each. An item with fewer than K other
lemmas gets all it has (counted in ``short``); one with none keeps only
variant 0 (counted in ``no_pair``).

Seeds: one 64-bit base from the caller's ``random.Random``, then
``random.Random("swap:<base>:<item_id>")`` per item, so an item's lemmas do not
depend on the other items.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from formats.items import Item
from nonce.errors import NonceError
from nonce.generate import check_item
from nonce.pool import CandidatePool, Pair

PERTURBATION = "swap"


@dataclass(frozen=True)
class SwapResult:
    """items: per original, variant 0 then its swaps; counts per target POS."""
    items: tuple[Item, ...]
    originals: int
    k: int
    targets: dict[str, int] = field(default_factory=dict)
    short: dict[str, int] = field(default_factory=dict)
    no_pair: dict[str, int] = field(default_factory=dict)

    def counts(self) -> dict:
        srt = lambda d: dict(sorted(d.items()))  # noqa: E731
        return {"originals": self.originals, "k": self.k, "swaps": len(self.items) - self.originals,
                "targets": srt(self.targets), "fewer_than_k": srt(self.short), "no_pair": srt(self.no_pair)}


def _lemma_pairs(pool: CandidatePool, item: Item) -> list[Pair]:
    """One pair per other lemma (its most frequent), sorted by lemma."""
    t = item.target_index
    choices = pool.pairs(pool.key(item.tokens[t], item.pos[t], item.feats[t]))
    if choices is None:
        return []
    out = []
    for lemma, (start, end) in sorted(choices.groups.items()):
        if lemma == item.lemma:
            continue
        weights = [choices.cum[i] - (choices.cum[i - 1] if i else 0) for i in range(start, end)]
        out.append(choices.values[start + weights.index(max(weights))])
    return out


def make_swaps(items: Iterable[Item], pool: CandidatePool, k: int, rng: random.Random) -> SwapResult:
    """Swap variants of the original items (variant 0) among ``items``."""
    if k < 1:
        raise NonceError(f"{{k}} must be at least 1, not {k}", fields=True)
    originals = [it for it in items if it.variant == 0]
    for it in originals:
        check_item(it)
    base = rng.getrandbits(64)
    out: list[Item] = []
    targets, short, no_pair = Counter(), Counter(), Counter()
    for item in originals:
        out.append(item)
        upos = item.pos[item.target_index]
        targets[upos] += 1
        pairs = _lemma_pairs(pool, item)
        if not pairs:
            no_pair[upos] += 1
            continue
        if len(pairs) < k:
            short[upos] += 1
        chosen = random.Random(f"swap:{base}:{item.item_id}").sample(pairs, min(k, len(pairs)))
        for v, pair in enumerate(chosen, start=1):
            tokens = list(item.tokens)
            tokens[item.target_index] = pair.form
            out.append(item.replace(variant=v, tokens=tuple(tokens), correct=pair.form,
                                    wrong=pair.alternative, lemma=pair.lemma, perturbation=PERTURBATION))
    return SwapResult(tuple(out), len(originals), k, dict(targets), dict(short), dict(no_pair))
