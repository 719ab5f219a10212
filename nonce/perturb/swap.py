"""``swap``: two adjacent, different letters of a word exchanged (WildNLP "swap").

Severity: the probability that a candidate word is noised; POS groups, direction
and the matched random control work as for ``qwerty`` (:mod:`nonce.perturb.select`).
A word is a candidate when it has two different adjacent letters; digits and
symbols are never moved (a swapped digit would change a number, not spell it wrong).
"""
from __future__ import annotations

from nonce.perturb.base import register
from nonce.perturb.select import WordEditAspect


def _pairs(word: str) -> list[int]:
    return [i for i in range(len(word) - 1)
            if word[i] != word[i + 1] and word[i].isalpha() and word[i + 1].isalpha()]


def swapped(word: str, rng) -> str:
    """``word`` with one random pair of different adjacent letters exchanged."""
    i = rng.choice(_pairs(word))
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


@register
class Swap(WordEditAspect):
    name = "swap"
    summary = "two adjacent characters of a word swapped"
    eligible = staticmethod(lambda word: bool(_pairs(word)))
    edit = staticmethod(swapped)
