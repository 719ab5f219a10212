"""``digits``: numbers written in digits spelled out in words (WildNLP "digits2words").

Severity: the probability that each number in scope is spelled out. A number is
a token of ASCII digits, optionally grouped by thousands (en ``50,000``, it
``50.000``), from 0 to 999999 (option ``max``). English spells it in
words separated by spaces, so one token may become several (``2500`` -> ``two
thousand five hundred``; tens and units joined by a hyphen, ``forty-two``, no
"and"): every new token copies the number's POS and features with
``NumForm=Digit`` turned into ``NumForm=Word``. Italian writes one word
(``2500`` -> ``duemilacinquecento``), so its token count never changes.
"""
from __future__ import annotations

import re

from nonce.perturb.base import Aspect, Draft, Option, register

_NUMBER = {"en": re.compile(r"(?:[0-9]+|[0-9]{1,3}(?:,[0-9]{3})+)\Z"),
           "it": re.compile(r"(?:[0-9]+|[0-9]{1,3}(?:\.[0-9]{3})+)\Z")}


def value(token: str, lang: str) -> int | None:
    """The integer a digit token writes, or None when it is not one."""
    if not _NUMBER[lang].match(token):
        return None
    return int(token.replace("," if lang == "en" else ".", ""))

_EN_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
             "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_EN_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_IT_UNITS = ("zero uno due tre quattro cinque sei sette otto nove dieci undici dodici tredici "
             "quattordici quindici sedici diciassette diciotto diciannove").split()
_IT_TENS = "_ _ venti trenta quaranta cinquanta sessanta settanta ottanta novanta".split()


def english(n: int) -> list[str]:
    """``n`` (0..999999) in English words, one list element per space-separated word."""
    if n < 20:
        return [_EN_UNITS[n]]
    if n < 100:
        tens, unit = divmod(n, 10)
        return [_EN_TENS[tens] + (f"-{_EN_UNITS[unit]}" if unit else "")]
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return [_EN_UNITS[hundreds], "hundred"] + (english(rest) if rest else [])
    thousands, rest = divmod(n, 1000)
    return english(thousands) + ["thousand"] + (english(rest) if rest else [])


def italian(n: int) -> str:
    """``n`` (0..999999) as one Italian word (``ventitré``, ``milleduecento``)."""
    if n < 20:
        return _IT_UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        word = _IT_TENS[tens]
        if unit in (1, 8):  # venti + uno -> ventuno, venti + otto -> ventotto
            word = word[:-1]
        return word + ("" if unit == 0 else "tré" if unit == 3 else _IT_UNITS[unit])
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        word = ("" if hundreds == 1 else _IT_UNITS[hundreds]) + "cento"
        rest_word = italian(rest) if rest else ""
        if rest_word.startswith("ott"):  # cento + ottanta -> centottanta
            word = word[:-1]
        return word + rest_word
    thousands, rest = divmod(n, 1000)
    word = "mille" if thousands == 1 else italian(thousands) + "mila"
    return word + (italian(rest) if rest else "")


def spell(n: int, lang: str) -> list[str]:
    return english(n) if lang == "en" else [italian(n)]


def _word_feats(feats: str) -> str:
    return feats.replace("NumForm=Digit", "NumForm=Word")


@register
class Digits(Aspect):
    name = "digits"
    summary = "numbers in digits spelled out in words"
    severity_meaning = "a per-number probability"
    axis_label = "severity (per-number probability)"
    changes_length = True
    options_spec = {"max": Option(999999, "largest number spelled out (at most 999999)", type=int)}

    def prepare(self, items) -> None:
        self.lang = self.language(items, ("en", "it"))
        self.options["max"] = min(self.options["max"], 999999)

    def perturb(self, draft: Draft, rng) -> int:
        found = [(i, n) for i in draft.scope(self.options["scope"])
                 if (n := value(draft.tokens[i], self.lang)) is not None and n <= self.options["max"]]
        draw = rng("digits")
        chosen = [(i, n) for i, n in found if draw.random() < self.severity]
        for i, n in reversed(chosen):
            first, *more = spell(n, self.lang)
            pos, feats = draft.pos[i], _word_feats(draft.feats[i])
            draft.replace(i, first, feats=feats)
            for k, word in enumerate(more, start=1):
                draft.insert(i + k, word, pos, feats)
        return len(chosen)
