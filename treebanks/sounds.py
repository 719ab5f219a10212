"""Words whose written form depends on the next word's first sound: elision,
articles, contractions; and the initial-sound classes they read.

Two users: nonce variants keep each replaced word's initial class, so the
function word before it stays right (:mod:`nonce.vowels`); relation items
render a determiner, article or elided target's other form for the word that
follows it (:func:`render_before`), or are dropped when the language cannot write
it, never glued into a non-word (French ``l'apport`` -> ``les apport``, not
``lesapport``; Italian ``un'altra`` -> ``un altra``, not ``unaltra``).

Initial classes (:func:`initial_class`, by language; one class ``V``/``C`` by
vowel letter elsewhere; words not starting with a letter are ``#``):

====  ======================================================================
lang  classes
====  ======================================================================
en    ``V`` vowel sound (*an*): a e i o u, plus *hour, honest, honour, heir*;
      ``C`` consonant sound (*a*), including *uni-, use-, eu-* words and *one*
it    ``V`` vowel or h (*l'amico, l'hotel*); ``S`` the *lo/uno/gli* class: s +
      consonant, z, x, y, gn, ps, pn; ``C`` other consonants (*il, un, i*)
fr    ``V`` vowel (*l'arbre*); ``C`` consonant and y (*le yaourt*); an h-word is
      its own class ``H:word``: mute (*l'homme*) and aspirated h (*le héros*)
      are not told apart by spelling
ca    ``V`` a e o or h + those (*l'arbre, l'home*); ``I`` i u, hi hu (*la
      universitat* does not elide, *l'illa* does: stress decides, so these
      only replace each other); ``C`` other consonants
el    ``N`` vowel, or κ π τ ξ ψ, μπ ντ γκ τσ τζ (*την εικόνα, στην πόλη*: the
      final ν of την, στην, δεν stays); ``C`` other consonants (*τη χώρα*)
====  ======================================================================

The English rule goes by spelling with the few exception prefixes above (*an
MP*, *a Ukrainian* are not covered).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from treebanks.features import parse_feats

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

_FR_VOWELS = frozenset("aeiouàâäéèêëîïôöùûüœæ")
_CA_VOWELS = frozenset("aeoàèéòó")
_CA_HIGH = frozenset("iuíúïü")
_EL_VOWELS = frozenset("αεηιουωάέήίόύώϊϋΐΰ")
_EL_KEEP_N = frozenset("κπτξψ")
_EL_KEEP_N_PAIRS = ("μπ", "ντ", "γκ", "τσ", "τζ")

#: languages whose classes :func:`initial_class` knows (others: vowel letter or not)
SOUND_LANGS = ("ca", "el", "en", "fr", "it")


@lru_cache(maxsize=256)
def base_lang(lang: str | None) -> str:
    """``it_isdt`` / ``it-IT`` / ``IT`` -> ``it``; None -> ``""``."""
    if not lang:
        return ""
    return lang.replace("-", "_").split("_")[0].lower()


def initial_class(word: str, lang: str | None) -> str:
    """The class of ``word``'s first sound that the function words before it
    read in ``lang`` (the module doc's table)."""
    w = word.lower()
    if not w or not w[0].isalpha():
        return "#"
    code = base_lang(lang)
    if code == "it":
        return _italian(w)
    if code == "fr":
        return f"H:{w}" if w[0] == "h" else ("V" if w[0] in _FR_VOWELS else "C")
    if code == "ca":
        return _catalan(w)
    if code == "el":
        return "N" if (w[0] in _EL_VOWELS or w[0] in _EL_KEEP_N or w.startswith(_EL_KEEP_N_PAIRS)) else "C"
    if code == "en":
        if w.startswith(_EN_VOWEL_SOUND):
            return "V"
        if w in _EN_CONSONANT_WORDS or (w.startswith(_EN_CONSONANT_SOUND) and not w.startswith(_EN_UN_PREFIX)):
            return "C"
    return "V" if w[0] in _EN_VOWELS else "C"


def _italian(w: str) -> str:
    if w[0] in _IT_VOWELS:
        return "V"
    if (w[0] in _IT_S_CLASS_INITIALS or w.startswith(_IT_S_CLASS_PREFIXES)
            or (w[0] == "s" and len(w) > 1 and w[1] in _IT_CONSONANTS)):
        return "S"
    return "C"


def _catalan(w: str) -> str:
    bare = w[1:] if w[0] == "h" and len(w) > 1 else w
    if bare[0] in _CA_HIGH:
        return "I"
    return "V" if bare[0] in _CA_VOWELS else "C"


# -- rendering a function word before the next word ----------------------------
#: per language: full form -> its elided form (written glued to the next word)
_ELIDE = {
    "fr": {"le": "l'", "la": "l'", "de": "d'", "que": "qu'", "ne": "n'", "se": "s'", "je": "j'", "me": "m'",
           "te": "t'", "jusque": "jusqu'", "lorsque": "lorsqu'", "puisque": "puisqu'"},
    "it": {"lo": "l'", "la": "l'", "una": "un'", "dello": "dell'", "della": "dell'", "nello": "nell'",
           "nella": "nell'", "allo": "all'", "alla": "all'", "dallo": "dall'", "dalla": "dall'",
           "sullo": "sull'", "sulla": "sull'", "quello": "quell'", "quella": "quell'"},
    "ca": {"el": "l'", "la": "l'", "de": "d'"},
}
#: per language: forms that have no written form before a vowel (a contraction that
#: would need two words there: French du -> de l', au -> à l'; Catalan del -> de l')
_NO_VOWEL_FORM = {"fr": frozenset({"du", "au"}), "ca": frozenset({"del", "al", "pel"})}
#: Italian masculine forms by class of the next word: C, S, V
_IT_MASC = {"il": ("il", "lo", "l'"), "lo": ("il", "lo", "l'"), "un": ("un", "uno", "un"),
            "uno": ("un", "uno", "un"), "i": ("i", "gli", "gli"), "gli": ("i", "gli", "gli"),
            "del": ("del", "dello", "dell'"), "dello": ("del", "dello", "dell'"),
            **{m: (f"{p}l", f"{p}llo", f"{p}ll'") for p in ("ne", "a", "da", "su", "que")
               for m in (f"{p}l", f"{p}llo")}, "dei": ("dei", "degli", "degli"), "degli": ("dei", "degli", "degli"),
            "quei": ("quei", "quegli", "quegli"), "quegli": ("quei", "quegli", "quegli")}
#: Greek words whose final ν stays before a vowel or a plosive: (without, with)
_EL_FINAL_N = {w: (w.rstrip("ν"), w.rstrip("ν") + "ν") for w in ("την", "τη", "στην", "στη", "δεν", "δε",
                                                                   "μην", "μη")}
_APOSTROPHES = ("'", "\u2019")


@dataclass(frozen=True)
class Written:
    """A word as the language writes it before the next one: ``form`` and whether a
    space separates it from the next word (``space_after``)."""
    form: str
    space_after: bool


#: a preposition and the articles it fuses with, where the language must write them as
#: one word (French de + les = des, Spanish a + el = al, Italian di + il = del...)
_CONTRACTING = {
    "fr": {"de": {"le", "les"}, "à": {"le", "les"}},
    "es": {"de": {"el"}, "a": {"el"}},
    "ca": {"de": {"el", "els"}, "a": {"el", "els"}, "per": {"el", "els"}},
    "pt": {p: {"o", "a", "os", "as"} for p in ("de", "em", "a", "por")},
    "gl": {p: {"o", "a", "os", "as"} for p in ("de", "en", "a", "por")},
    "it": {p: {"il", "lo", "la", "i", "gli", "le", "l'"} for p in ("di", "a", "da", "in", "su")},
}


def contracts(previous: str, form: str, lang: str | None) -> bool:
    """Whether ``lang`` writes ``previous form`` as one word (French *de les* -> *des*): a
    pair whose two words are kept apart in a sentence would then be no word of the
    language. Capitalised articles (Spanish *de El Salvador*) stay apart."""
    articles = _CONTRACTING.get(base_lang(lang), {}).get(previous.lower())
    return bool(articles) and form in articles


def is_elided(form: str) -> bool:
    """Whether ``form`` ends in an apostrophe (written glued to the next word)."""
    return form.endswith(_APOSTROPHES)


def has_apostrophe(form: str) -> bool:
    """Whether ``form`` holds an apostrophe anywhere (*don't*, *l'*)."""
    return any(a in form for a in _APOSTROPHES)


def render_before(form: str, following: str, lang: str | None, *, feats: str = "",
                  space_after: bool = True) -> Written | None:
    """``form`` (an article, determiner, pronoun or preposition; e.g. an item's wrong
    form) written before ``following`` in ``lang``, or None when the language cannot
    write it there (the item or variant is then dropped).

    ``feats``: ``form``'s features (its Gender decides French ``l'`` -> ``le``/``la``
    before a consonant); ``space_after``: how the word it replaces was written, kept
    where no rule here applies (a language written without spaces stays so). An
    elided form is glued to the next word, any other form gets a space. French,
    Italian and Catalan elide by the next word's class, Greek ``την``/``στην``/``δεν``
    keep their ν by it, English ``a``/``an`` follow it. An apostrophe ``'`` or ``’``
    is written as ``form`` writes it."""
    code = base_lang(lang)
    key = form.lower().replace("\u2019", "'")
    cls = initial_class(following, code)
    if code == "en" and key in ("a", "an"):
        return Written(_recase("an" if cls == "V" else "a", form), True)
    if code == "el" and key in _EL_FINAL_N:
        return Written(_recase(_EL_FINAL_N[key][cls == "N"], form), True)
    if code not in _ELIDE:
        return Written(form, space_after)
    if code == "fr" and cls.startswith("H:"):
        # mute or aspirated h: the spelling does not say which (l'homme, le héros)
        risky = key in _ELIDE[code] or key in _NO_VOWEL_FORM[code] or is_elided(key) or key == "ce"
        return None if risky else Written(form, True)
    if code == "ca" and cls == "I" and key in ("la", "l'"):
        return None  # la universitat, l'illa: stress decides
    new = _render_key(key, code, cls, feats)
    if new is None:
        return None
    apostrophe = "\u2019" if "\u2019" in form else "'"
    written = _recase(new.replace("'", apostrophe), form)
    return Written(written, not is_elided(written))


def _render_key(key: str, code: str, cls: str, feats: str) -> str | None:
    """The lower-case form of ``key`` before a word of class ``cls`` (None: not writable)."""
    vowel = cls in ("V", "I") if code == "ca" else cls == "V"
    if is_elided(key):
        full = [f for f, e in _ELIDE[code].items() if e == key]
        if len(full) > 1:  # le/la, dello/della: the gender decides
            ending = {"Masc": ("e", "o", "l"), "Fem": ("a",)}.get(_gender(feats), ())
            full = [f for f in full if f.endswith(ending)] if ending else []
        if len(full) != 1:
            return None
        key = full[0]
    if code == "it" and key in _IT_MASC:
        return _IT_MASC[key][{"C": 0, "S": 1}.get(cls, 2)]
    if not vowel:
        return key
    if key in _NO_VOWEL_FORM.get(code, ()):
        return None
    if code == "fr" and key == "ce":
        return "cet"  # the determiner (ce arbre -> cet arbre); the pronoun's c' is not an agreement target
    return _ELIDE[code].get(key, key)


def _gender(feats: str) -> str:
    try:
        return parse_feats(feats).get("Gender", "")
    except ValueError:
        return ""


def _recase(new: str, old: str) -> str:
    letters = [c for c in old if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return new.upper()
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


_SPELLING_MARKS = str.maketrans("", "", "'\u2019-\u2010\u2011\u00ad")


def spelling_key(form: str) -> str:
    """``form`` without case, apostrophes, hyphens or soft hyphens, ß as ss
    (``casefold``): two forms with one key are one word spelled two ways."""
    return form.casefold().translate(_SPELLING_MARKS)


def is_spelling_variant(form: str, other: str) -> bool:
    """Whether ``other`` is ``form`` written otherwise, not another word: case only
    (*Є* / *є*), ß / ss (*muß* / *muss*), a hyphen or an apostrophe (*haven't* /
    *havent*). Such a pair contrasts nothing; drop it."""
    return form != other and spelling_key(form) == spelling_key(other)


# -- vowel harmony: a clitic or suffix written after the word follows its last vowel ----
#: languages whose clitics and suffixes harmonise with the word before them (Turkic)
HARMONY_LANGS = frozenset({"tr", "az", "kk", "ky", "ug", "sah", "tt", "ba", "uz", "tk"})
_BACK_UNROUNDED, _BACK_ROUNDED = frozenset("aıаыاى"), frozenset("ouоұуўۇو")
_FRONT_UNROUNDED, _FRONT_ROUNDED = frozenset("eiâîəеэіиیې"), frozenset("öüûөүۆۈ")
_VOICELESS = frozenset("çfhkpsştкпсттфхцчшщ")
#: clitics written as words of their own whose vowel follows the word before them:
#: Turkish de/da (also), mi/mı/mu/mü (question) and their inflected forms
_HARMONISING = {"tr": ("de", "da", "te", "ta", "mi", "mı", "mu", "mü"),
                "az": ("də", "da", "mi", "mı", "mu", "mü"),
                "kk": ("да", "де", "та", "те", "ма", "ме", "ба", "бе", "па", "пе"),
                "ky": ("да", "де", "та", "те", "бы", "би", "бу", "бү", "мы", "ми", "му", "мү")}


def harmony_class(word: str, lang: str | None) -> str:
    """What a harmonising clitic after ``word`` reads in ``lang`` (:data:`HARMONY_LANGS`):
    the class of its last vowel (back or front, rounded or not) and whether it ends in
    a voiceless consonant (Turkish *Kıbrıs'ta da*, *kitap mı*, *göz mü*); ``""`` in
    other languages or for a word without a vowel."""
    if base_lang(lang) not in HARMONY_LANGS:
        return ""
    w = word.lower()
    vowel = next((c for c in reversed(w) if c in _BACK_UNROUNDED or c in _BACK_ROUNDED
                  or c in _FRONT_UNROUNDED or c in _FRONT_ROUNDED), "")
    if not vowel:
        return ""
    cls = ("a" if vowel in _BACK_UNROUNDED else "o" if vowel in _BACK_ROUNDED
           else "e" if vowel in _FRONT_UNROUNDED else "ö")
    return cls + ("t" if w[-1:] in _VOICELESS else "")


def harmonises(following: str, lang: str | None, lemma: str = "") -> bool:
    """Whether ``following`` (with ``lemma``), the word after a replaced one, harmonises
    with it in ``lang``: a clitic of :data:`_HARMONISING` written as a word of its own,
    also inflected (lemma *mi*: *misin*, *mıydı*), or a suffix written apart after an
    apostrophe (*'ta*, *'nın*)."""
    code = base_lang(lang)
    if code not in HARMONY_LANGS or not following:
        return False
    if following[0] in _APOSTROPHES:
        return True
    clitics = _HARMONISING.get(code, ())
    return following.lower() in clitics or lemma.lower() in clitics
