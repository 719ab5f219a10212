"""Which words a word-level noise aspect changes: POS groups, counts, direction.

Typo studies (Kumar et al. 2020) noise a share of the words of a sentence; the
POS-targeted variant restricts the candidates to a part-of-speech group and
compares it with a *random* control that noises the same number of words per
sentence, chosen among all words. Our procedure, per item:

1. candidates = the words in scope that belong to the group and that the aspect
   can change (e.g. ``swap`` needs two different adjacent characters);
2. the count ``k`` ~ Binomial(len(candidates), severity), i.e. every candidate
   word is noised with probability ``severity`` (and at most ``max_words``); the
   uniform draws behind it come from a per-item stream, so with one seed a higher
   severity never noises fewer words, and the noised words are nested;
3. which ``k`` words: a uniform random subset (no direction), the ``k`` first in
   the sentence (``direction=start``) or the ``k`` last, nearest the target
   (``direction=end``). With a cap the direction decides which words lose out.

The random control (group ``random`` with ``match_group=G``) draws ``k`` exactly
as group ``G`` would for the same item and seed (the count comes from its own
seeded stream), then picks its ``k`` words among *all* candidates. Without
``match_group`` the ``random`` group is simply every word.
"""
from __future__ import annotations

import random
from typing import Callable

from nonce.errors import NonceError
from nonce.perturb.base import Aspect, Draft, Option, _optional_int

#: POS group -> UPOS tags (None: every word). "mid" follows the typo studies' middle
#: group (adjectives and adpositions); function words are UD's closed classes.
POS_GROUPS: dict[str, frozenset[str] | None] = {
    "function": frozenset({"ADP", "AUX", "CCONJ", "DET", "PART", "PRON", "SCONJ"}),
    "mid": frozenset({"ADJ", "ADP"}),
    "nouns": frozenset({"NOUN", "PROPN"}),
    "verbs": frozenset({"VERB"}),
    "content": frozenset({"NOUN", "PROPN", "VERB"}),
    "random": None,
}
DIRECTIONS = ("start", "end")

WORD_OPTIONS = {
    "pos_group": Option(None, "only words of this POS group are noised: "
                        + ", ".join(POS_GROUPS), choices=(None, *POS_GROUPS)),
    "match_group": Option(None, "with pos_group=random: noise as many words per sentence "
                          "as this group would", choices=(None, *[g for g in POS_GROUPS if g != "random"])),
    "direction": Option(None, "which candidate words come first: 'start' or 'end' of the "
                        "sentence (default: a random subset)", choices=(None, *DIRECTIONS)),
    "max_words": Option(None, "at most this many noised words per sentence", type=_optional_int),
}


def check_word_options(aspect: str, options: dict) -> None:
    if options["match_group"] and options["pos_group"] != "random":
        raise NonceError(f"{aspect}: {{match_group}} needs {{pos_group}} random "
                         "(it matches a random control to a POS group)", fields=True)
    if options["max_words"] is not None and options["max_words"] < 0:
        raise NonceError(f"{aspect}: max_words must be >= 0")


def word_condition(options: dict) -> str:
    """Label part after '@': ``nouns``, ``random~nouns``, ``verbs/end`` or ''."""
    group = options["pos_group"]
    if group and options["match_group"]:
        group = f"{group}~{options['match_group']}"
    if options["direction"]:
        return f"{group or 'random'}/{options['direction']}"
    return group or ""


def in_group(draft: Draft, i: int, group: str | None) -> bool:
    tags = POS_GROUPS.get(group) if group else None
    return tags is None or draft.pos[i] in tags


def choose_words(draft: Draft, rng: Callable[[str], random.Random], severity: float,
                 options: dict, can_change: Callable[[str], bool]) -> list[int]:
    """Indices of the words to noise in this item (sentence order)."""
    scope = [i for i in draft.scope(options["scope"]) if can_change(draft.tokens[i])]
    group = options["pos_group"]
    count_group = options["match_group"] or group
    counted = [i for i in scope if in_group(draft, i, count_group)]
    count_rng = rng("count")
    k = sum(count_rng.random() < severity for _ in counted)
    if options["max_words"] is not None:
        k = min(k, options["max_words"])
    pool = [i for i in scope if in_group(draft, i, group)]
    k = min(k, len(pool))
    if options["direction"] == "start":
        return pool[:k]
    if options["direction"] == "end":
        return pool[len(pool) - k:]
    # shuffle-then-take: with the same seed, the words noised at a lower severity are
    # a subset of those noised at a higher one, so a curve's points differ only by
    # the added noise
    order = list(pool)
    rng("pick").shuffle(order)
    return sorted(order[:k])


class WordEditAspect(Aspect):
    """A character-level noise aspect: each chosen word gets one edit.

    Subclasses name the aspect and give two functions: ``eligible(word)`` (the
    aspect can change this word) and ``edit(word, rng)`` (the changed word). Which
    words are chosen (POS group, count, direction, matched control) is this
    module's procedure, the same for every such aspect."""

    options_spec = WORD_OPTIONS

    def __init__(self, severity, options=None):
        super().__init__(severity, options)
        check_word_options(self.name, self.options)

    def condition(self) -> str:
        return word_condition(self.options)

    @staticmethod
    def eligible(word: str) -> bool:
        raise NotImplementedError

    @staticmethod
    def edit(word: str, rng: random.Random) -> str:
        raise NotImplementedError

    def perturb(self, draft: Draft, rng) -> int:
        chosen = choose_words(draft, rng, self.severity, self.options, self.eligible)
        edit_rng = rng("edit")
        for i in chosen:
            draft.replace(i, self.edit(draft.tokens[i], edit_rng))
        return len(chosen)
