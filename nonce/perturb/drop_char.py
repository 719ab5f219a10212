"""``drop-char``: one letter of a word deleted (WildNLP-style character noise).

Severity: the probability that a candidate word is noised; POS groups, direction
and the matched random control work as for ``qwerty`` (:mod:`nonce.perturb.select`).
Candidates have at least two characters, one of them a letter (so no token ever
becomes empty and punctuation is left alone); the dropped character is a letter.
"""
from __future__ import annotations

from nonce.perturb.base import register
from nonce.perturb.select import WordEditAspect


def droppable(word: str) -> bool:
    return len(word) >= 2 and any(ch.isalpha() for ch in word)


def dropped(word: str, rng) -> str:
    i = rng.choice([i for i, ch in enumerate(word) if ch.isalpha()])
    return word[:i] + word[i + 1:]


@register
class DropChar(WordEditAspect):
    name = "drop-char"
    summary = "one letter of a word deleted"
    eligible = staticmethod(droppable)
    edit = staticmethod(dropped)
