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
fr    on     ``V`` vowel, ``C`` consonant or y, ``H:word`` an h-word:
             its own class (mute or aspirated h is not spelled)
ca    on     ``V`` a e o (h), ``I`` i u (h; stress decides *la/l'*),
             ``C`` consonant
el    on     ``N`` vowel or plosive (the ν of *την, στην* stays), ``C``
             other
other off    one class for every word
====  =====  ==================================================================

Words that do not start with a letter (digits, symbols) form their own class
``#`` in every language with the rule on: *an 8* vs *a 7* is not modelled.
The classes themselves live in :mod:`treebanks.sounds` (also used to render an
item's wrong article for the next word). German and Dutch adjectives also keep
their ending (:func:`ending_class`). The English rule goes by spelling, with the
few exception prefixes above; it is an approximation of pronunciation (*an MP*, *a Ukrainian* are not covered).

Capitalisation (:func:`case_class`, always on): ``lower``, ``title`` (first
letter upper case, e.g. sentence-initial *The*), ``upper`` (all letters upper
case, at least two, e.g. *NASA*) and ``none`` (no letter, e.g. *2003*).
"""
from __future__ import annotations

from nonce.errors import NonceError
from treebanks import sounds
from treebanks.errors import literal
from treebanks.sounds import base_lang

#: language code -> whether its function words depend on the next word's initial sound
#: (articles, elision: :mod:`treebanks.sounds` has the classes)
VOWEL_RULES: dict[str, bool] = {"ca": True, "el": True, "en": True, "fr": True, "it": True}

VOWEL_RULE_CHOICES = ("auto", "on", "off")

#: language code -> adjective endings that follow the determiner, not the features
#: (German ein richtiger / der richtige Minister: both Masc Sing Nom; Dutch een grote
#: man / een groot huis where Gender is not annotated); longest first
ADJ_ENDINGS: dict[str, tuple[str, ...]] = {"de": ("em", "en", "er", "es", "e"), "nl": ("en", "e")}


def vowel_rule_on(lang: str | None, option: str = "auto") -> bool:
    """Whether the initial-class rule applies: ``option`` ``on``/``off`` forces it,
    ``auto`` looks ``lang`` (e.g. ``en``, ``it_isdt``, ``it-IT``) up in :data:`VOWEL_RULES`."""
    if option not in VOWEL_RULE_CHOICES:
        raise NonceError(f"{{vowel_rule}} must be one of {', '.join(VOWEL_RULE_CHOICES)}, "
                         f"not {literal(repr(option))}", fields=True)
    if option != "auto":
        return option == "on"
    return VOWEL_RULES.get(base_lang(lang), False)


def initial_class(word: str, lang: str | None) -> str:
    """The article-relevant class of ``word``'s beginning in ``lang``
    (:func:`treebanks.sounds.initial_class`). Languages without classes there get
    the vowel-letter rule when forced on with ``--vowel-rule on``."""
    return sounds.initial_class(word, lang)


def ending_class(word: str, upos: str, lang: str | None) -> str:
    """The ending of an adjective in a language of :data:`ADJ_ENDINGS` (``""``: none
    of them, or another POS or language): a replacement must share it."""
    endings = ADJ_ENDINGS.get(base_lang(lang)) if upos == "ADJ" else None
    if not endings:
        return ""
    w = word.lower()
    return next((e for e in endings if w.endswith(e) and len(w) > len(e) + 1), "-")


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


def ending_langs(lang: str | None) -> bool:
    """Whether ``lang``'s adjective endings follow the determiner (:data:`ADJ_ENDINGS`)."""
    return base_lang(lang) in ADJ_ENDINGS
