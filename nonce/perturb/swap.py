"""``swap``: two adjacent, different letters of a word exchanged (WildNLP "swap").

Severity: the probability that a candidate word is noised; POS groups, direction
and the matched random control work as for ``qwerty`` (:mod:`nonce.perturb.select`).
A word is a candidate when it has two different adjacent letters; digits and
symbols are never moved (a swapped digit would change a number, not spell it wrong).
"""
from __future__ import annotations

from nonce.perturb.base import Aspect, Draft, register
from nonce.perturb.select import WORD_OPTIONS, check_word_options, choose_words, word_condition


def _pairs(word: str) -> list[int]:
    return [i for i in range(len(word) - 1)
            if word[i] != word[i + 1] and word[i].isalpha() and word[i + 1].isalpha()]


def swapped(word: str, rng) -> str:
    """``word`` with one random pair of different adjacent letters exchanged."""
    i = rng.choice(_pairs(word))
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


@register
class Swap(Aspect):
    name = "swap"
    summary = "two adjacent characters of a word swapped"
    options_spec = WORD_OPTIONS

    def __init__(self, severity, options=None):
        super().__init__(severity, options)
        check_word_options(self.name, self.options)

    def condition(self) -> str:
        return word_condition(self.options)

    def perturb(self, draft: Draft, rng) -> int:
        chosen = choose_words(draft, rng, self.severity, self.options, lambda w: bool(_pairs(w)))
        edit = rng("edit")
        for i in chosen:
            draft.replace(i, swapped(draft.tokens[i], edit))
        return len(chosen)
