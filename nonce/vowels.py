"""Which words may replace which: capitalisation and article-relevant initial sounds.

A nonce word must fit the function words left around it. Where a language's
articles (and elided prepositions) change with the next word's first sound,
replacing *apple* by *pear* would leave ``an pear``; so, for those languages, a
candidate must have the same **initial class** as the word it replaces.

Per-language table (:data:`VOWEL_RULES`), overridable with ``--vowel-rule on|off``:

====  =====  ==================================================================
lang  rule   initial classes (:func:`initial_class`)
====  =====  ==================================================================
en    on     ``V`` vowel sound (*an*): a e i o u, plus *hour, honest, honour,
             heir*; ``C`` consonant sound (*a*), including *uni-, use-, eu-*
             words and *one* (*a university*; not *unim-, unin-, unid-*)
it    on     ``V`` vowel or h (*l'amico, l'hotel*); ``S`` the *lo/uno/gli* class:
             s + consonant, z, x, y, gn, ps, pn (*lo studente, lo zio,
             lo gnomo, lo psicologo*); ``C`` other consonants (*il, un, i*)
other off    one class for every word
====  =====  ==================================================================

Words that do not start with a letter (digits, symbols) form their own class
``#`` in every language with the rule on: *an 8* vs *a 7* is not modelled.
The English rule goes by spelling, with the few exception prefixes above; it
is an approximation of pronunciation (*an MP*, *a Ukrainian* are not covered).

Capitalisation (:func:`case_class`, always on): ``lower``, ``title`` (first
letter upper case, e.g. sentence-initial *The*), ``upper`` (all letters upper
case, at least two, e.g. *NASA*) and ``none`` (no letter, e.g. *2003*).
"""
from __future__ import annotations

from functools import lru_cache

from nonce.errors import NonceError
from treebanks.errors import literal

#: language code -> whether its articles depend on the next word's initial sound.
VOWEL_RULES: dict[str, bool] = {"en": True, "it": True}

VOWEL_RULE_CHOICES = ("auto", "on", "off")

_EN_VOWELS = frozenset("aeiou")
# Spelling says vowel, sound says consonant: "a university", "a one-time", "a eulogy"
# (but "an unimportant", "an uninformed", "an unidentified": the un- prefix).
_EN_CONSONANT_SOUND = ("uni", "use", "usu", "uti", "eu", "ewe", "one-")
_EN_CONSONANT_WORDS = frozenset({"one", "once"})
_EN_UN_PREFIX = ("unim", "unin", "unid")
# Spelling says consonant, sound says vowel: "an hour", "an honest".
_EN_VOWEL_SOUND = ("hour", "honest", "honor", "honour", "heir")

_IT_VOWELS = frozenset("aeiouàèéìíòóùúh")
_IT_S_CLASS_PREFIXES = ("gn", "ps", "pn")
_IT_S_CLASS_INITIALS = frozenset("zxy")
_IT_CONSONANTS = frozenset("bcdfghjklmnpqrstvwxz")


def vowel_rule_on(lang: str | None, option: str = "auto") -> bool:
    """Whether the initial-class rule applies: ``option`` ``on``/``off`` forces it,
    ``auto`` looks ``lang`` (e.g. ``en``, ``it_isdt``, ``it-IT``) up in :data:`VOWEL_RULES`."""
    if option not in VOWEL_RULE_CHOICES:
        raise NonceError(f"{{vowel_rule}} must be one of {', '.join(VOWEL_RULE_CHOICES)}, "
                         f"not {literal(repr(option))}", fields=True)
    if option != "auto":
        return option == "on"
    return VOWEL_RULES.get(base_lang(lang), False)


@lru_cache(maxsize=256)
def base_lang(lang: str | None) -> str:
    """``it_isdt`` / ``it-IT`` / ``IT`` -> ``it``; None -> ``""``."""
    if not lang:
        return ""
    return lang.replace("-", "_").split("_")[0].lower()


def initial_class(word: str, lang: str | None) -> str:
    """The article-relevant class of ``word``'s beginning in ``lang`` (see the module doc).

    Languages without a table entry get the English spelling rule when forced on
    with ``--vowel-rule on`` (vowel letter or not)."""
    w = word.lower()
    if not w or not w[0].isalpha():
        return "#"
    code = base_lang(lang)
    if code == "it":
        if w[0] in _IT_VOWELS:
            return "V"
        if (w[0] in _IT_S_CLASS_INITIALS or w.startswith(_IT_S_CLASS_PREFIXES)
                or (w[0] == "s" and len(w) > 1 and w[1] in _IT_CONSONANTS)):
            return "S"
        return "C"
    if code == "en":
        if w.startswith(_EN_VOWEL_SOUND):
            return "V"
        if w in _EN_CONSONANT_WORDS or (w.startswith(_EN_CONSONANT_SOUND)
                                         and not w.startswith(_EN_UN_PREFIX)):
            return "C"
    return "V" if w[0] in _EN_VOWELS else "C"


def case_class(word: str) -> str:
    """``lower``, ``title``, ``upper`` or ``none`` (see the module doc)."""
    if word.islower():  # the common case: no upper-case letter, at least one lower-case
        return "lower"
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return "none"
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return "upper"
    return "title" if letters[0].isupper() else "lower"
