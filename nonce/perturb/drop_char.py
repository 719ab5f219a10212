"""``drop-char``: one letter of a word deleted (WildNLP-style character noise).

Severity: the probability that a candidate word is noised; POS groups, direction
and the matched random control work as for ``qwerty`` (:mod:`nonce.perturb.select`).
Candidates have at least two characters, one of them a letter (so no token ever
becomes empty and punctuation is left alone); the dropped character is a letter.
"""
from __future__ import annotations

from nonce.perturb.base import Aspect, Draft, register
from nonce.perturb.select import WORD_OPTIONS, check_word_options, choose_words, word_condition


def droppable(word: str) -> bool:
    return len(word) >= 2 and any(ch.isalpha() for ch in word)


def dropped(word: str, rng) -> str:
    i = rng.choice([i for i, ch in enumerate(word) if ch.isalpha()])
    return word[:i] + word[i + 1:]


@register
class DropChar(Aspect):
    name = "drop-char"
    summary = "one letter of a word deleted"
    options_spec = WORD_OPTIONS

    def __init__(self, severity, options=None):
        super().__init__(severity, options)
        check_word_options(self.name, self.options)

    def condition(self) -> str:
        return word_condition(self.options)

    def perturb(self, draft: Draft, rng) -> int:
        chosen = choose_words(draft, rng, self.severity, self.options, droppable)
        edit = rng("edit")
        for i in chosen:
            draft.replace(i, dropped(draft.tokens[i], edit))
        return len(chosen)
