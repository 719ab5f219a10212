"""Sentence splitting and word tokenisation that follow UD treebank conventions.

The test items of the benchmark are built from UD treebanks, so the language
model must see words cut the way the treebank cuts them, or the items' words
fall out of its vocabulary. Measured by ``benchmarks/tokenizer_agreement.py``
against the ``# text`` lines of the shared UD treebanks.

Conventions (all languages): punctuation is split off words; runs of the same
end punctuation stay one token (``...``, ``!!``, ``?!``); hyphenated words are
split at the hyphen (``well - known``, as EWT, ISDT and ParTUT mostly do) except
a few fixed spellings (``e-mail``); slashes between words are split; URLs,
e-mail addresses, numbers with separators (``3.5``, ``1,000``, ``10:30``,
``9/11``, ``713-853-3989``), initialisms (``U.S.``, ``e.g.``), known
abbreviations (``Mr.``, ``etc.``, ``sig.``) and single capital initials
(``J.``) keep their periods.

- ``en``: clitics are split as in UD English (``don't`` -> ``do n't``,
  ``can't`` -> ``ca n't``, ``John's`` -> ``John 's``, ``I'm`` -> ``I 'm``,
  ``cannot`` -> ``can not``, ``gonna`` -> ``gon na``). This is the convention
  of the paper's corpora and test sets and of UD English before v2.8; UD 2.16
  EWT writes the same splits as *multiword tokens* whose surface form is
  ``don't``. ``clitics="keep"`` produces those surface tokens instead.
- ``it``: elided articles, prepositions and pronouns keep their apostrophe and
  become a token of their own (``l'``, ``dell'``, ``un'``, ``c'``, ``quest'``);
  articulated prepositions and verb-clitic compounds (``della``, ``dargli``)
  stay whole, as they are the treebank's surface tokens.
- ``fr``, ``ca``: elision as in Italian.
- ``de``, ``el``, ``cs``, ``ar``, ``he``: the generic rules (measured: see the
  benchmark); Hebrew-style acronyms with a quotation mark inside the word
  (``צה"ל``, ``צה״ל``) stay one token and never end a sentence.
- any other language: the generic rules above, with a warning
  (:func:`lang_warning`); apostrophes inside a word stay inside it.

Sentence ends: ``.``, ``!``, ``?``, ``…`` and the script-specific marks
:data:`SENTENCE_FINAL` (Arabic ``؟``, Urdu ``۔``, Devanagari ``।``/``॥``,
Burmese ``။``, CJK ``。！？``, Armenian ``։``, Ethiopic ``።``...). In a script with
case a new sentence starts with a capital; in a script without case (Hebrew,
Arabic, Devanagari...) the end mark must be followed by whitespace and then a
letter or digit, since there is no capital to look for.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

#: Titles and other abbreviations that never end a sentence (compared lower-cased,
#: with their final period).
_TITLES = {
    "en": "mr. mrs. ms. dr. prof. st. sen. rep. gov. gen. col. lt. capt. sgt. mt. ft. "
          "rev. hon. pres. messrs. no. nos. vs. v. cf. fig. figs. vol. pp. p. ca. approx. "
          "jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec.",
    "it": "sig. sigg. sig.ra dott. dott.ssa prof. prof.ssa avv. ing. on. sen. mons. "
          "s. ss. sant. art. artt. n. nn. p. pp. cap. capp. vol. fig. cfr. ca. lett. "
          "c.d. d.lgs. l. ord. gen. es. att. distr. tel. dr. mr. st. "
          "feb. mar. apr. giu. lug. ago. set. ott. nov. dic. v.",
}
#: Abbreviations that may end a sentence when the next word is capitalised.
_ABBREVS = {
    "en": "etc. inc. ltd. co. corp. jr. sr. bros. e.g. i.e. a.m. p.m. dept. univ. est. "
          "assn. ave. blvd. rd. ph.d. u.s. u.k. d.c. al.",
    "it": "ecc. ss. sgg. spa. s.p.a. s.r.l. d.c. a.c. ca. ed. rist. trad.",
}
#: Hyphenated spellings the treebanks keep whole.
_HYPHEN_WORDS = {"e-mail", "e-mails", "x-ray", "t-shirt", "t-shirts", "co-op"}
#: English prefixes that UD EWT keeps attached with their hyphen (non-profit, re-elect).
_EN_PREFIXES = set("e non anti pre re mid post co ex pro multi counter semi sub inter intra "
                   "mis over under neo bi tri micro macro mega mini quasi ultra".split())

#: Sentence-final marks of scripts other than Latin/Greek/Cyrillic (Arabic question
#: mark, Urdu full stop, danda and double danda, Burmese, CJK, Armenian, Ethiopic, Tibetan).
SENTENCE_FINAL = "؟۔।॥။。！？։።།"
_APOS = "'’"


def _mark_ranges() -> str:
    """A regex class body of every combining mark (Mn, Mc, Me) of the BMP: Devanagari
    vowel signs, Arabic and Hebrew points... are not ``\\w`` for ``re``, yet belong
    to the word they sit on."""
    out, start, prev = [], None, None
    for cp in range(0x300, 0x10000):
        if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me"):
            if start is None:
                start = cp
            elif cp != prev + 1:
                out.append((start, prev))
                start = cp
            prev = cp
    if start is not None:
        out.append((start, prev))
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in out)


_MARKS = _mark_ranges()
# a quotation mark (or gershayim/geresh) between two letters stays inside the word:
# Hebrew acronyms (צה"ל, ארה״ב) are written that way
_WORD = rf"[^\W_](?:[^\W_]|[{_MARKS}]|['’](?=[^\W_])|(?<=[^\W\d_])[\"״׳](?=[^\W\d_]))*"
_TOKEN_RE = re.compile(rf"""
    (?P<url>(?:https?://|ftp://|www\.)[^\s<>"]*[^\s<>".,;:!?)\]'’»])
  | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
  | (?P<initials>(?:[^\W\d_]\.){{2,}}(?![^\W_]))
  | (?P<num>\d+(?:[.,:]\d+)+(?![^\W_])|\d+(?:-\d+){{2,}}|\d{{3}}-\d{{4}}(?!\d)|['’]\d\d(?![^\W_]))
  | (?P<date>\d+(?:/\d+)+(?![^\W_]))
  | (?P<file>[^\W_][\w-]*\.(?:com|org|net|edu|gov|xls|doc|pdf|txt|html?|jpg|it)(?![^\W_]))
  | (?P<emoticon>(?<!\w)[:;=][-o^]?[()\[\]DPp/\\|*](?![^\W_]))
  | (?P<word>{_WORD})
  | (?P<punct>\.{{2,}}|[.!?]*[!?][.!?]*|[{SENTENCE_FINAL}]+|(?P<rep>[-=_*~#+])(?P=rep)+|<<|>>|``|''|\S)
""", re.VERBOSE)

_EN_CLITIC = re.compile(r"(?i)^(.+?)(n['’]t|['’](?:s|m|re|ve|ll|d))$")
_EN_FUSED = {"cannot": ("can", "not"), "gonna": ("gon", "na"), "wanna": ("wan", "na"),
             "gotta": ("got", "ta"), "gimme": ("gim", "me"), "dunno": ("dun", "no")}
_ELISION = re.compile(r"(?i)^([^\W\d_]+['’])(?=[^\W_])")
#: Italian words written with a final apostrophe (truncation or informal accent).
_IT_APOS_FINAL = {"po", "mo", "e", "de", "be", "di", "fa", "va", "sta", "da", "to",
                  "l", "un", "dell", "all", "nell", "sull", "dall", "quell", "bell",
                  "sant", "c", "d", "s", "m", "t", "v", "n", "quest", "anch", "tutt"}
_SENT_END = re.compile(rf"^(?:[.!?{SENTENCE_FINAL}]+|…)$")
#: Languages with rules of their own or measured with the generic ones (benchmark).
KNOWN_LANGS = frozenset({"en", "it", "fr", "ca", "de", "el", "cs", "ar", "he"})
#: agree demo's generated language: generic rules by design, no warning
GENERIC_BY_DESIGN = frozenset({"synth"})
_CLOSERS = {")", "]", "}", '"', "'", "’", "”", "»", ">>", "''"}


@dataclass(frozen=True)
class Tokenizer:
    """Tokenises text of one language.

    lang: ISO 639-1 code; ``en``, ``it``, ``fr``, ``ca`` have their own rules,
        others get the generic ones.
    clitics: ``"split"`` (``do n't``, UD words) or ``"keep"`` (``don't``, the
        surface tokens of UD 2.16 EWT); English only.
    """
    lang: str
    clitics: str = "split"
    titles: frozenset = field(default=frozenset(), repr=False)
    abbrevs: frozenset = field(default=frozenset(), repr=False)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` (a sentence or a paragraph), in order."""
        return [t for t, _ in self._tokens(text)]

    def sentences(self, text: str) -> list[list[str]]:
        """Split a paragraph into sentences of tokens."""
        return split_sentences(self._tokens(text), self)

    def _tokens(self, text: str) -> list[tuple[str, int]]:
        """(token, end offset) pairs; the offset lets callers see adjacency."""
        out: list[tuple[str, int]] = []
        lang = self.lang
        for m in _TOKEN_RE.finditer(text):
            kind, tok, start, end = m.lastgroup, m.group(), m.start(), m.end()
            if kind == "word":
                if out and out[-1][1] == start and self._joins_hyphen(out, tok):
                    out[-2:] = [(out[-2][0] + "-" + tok, end)]
                    continue
                for piece in self._split_word(tok):
                    out.append((piece, end))
                continue
            if kind == "date" and lang != "en":  # ISDT: direttiva 94 / 55 / CE
                for piece in re.split(r"(/)", tok):
                    out.append((piece, end))
                continue
            if kind == "punct" and tok in (".", "..") and out and out[-1][1] == start \
                    and self._is_abbrev(out[-1][0]):
                out[-1] = (out[-1][0] + ".", start + 1)
                if tok == "..":  # "Inc.." at the end of a sentence: Inc. + .
                    out.append((".", end))
                continue
            if kind == "punct" and tok in _APOS and lang == "it" and out and out[-1][1] == start \
                    and out[-1][0].lower() in _IT_APOS_FINAL:
                out[-1] = (out[-1][0] + tok, end)
                continue
            if kind == "punct" and tok in _APOS and lang == "en" and self.clitics == "keep" \
                    and out and out[-1][1] == start and out[-1][0][-1:] in "sS" \
                    and (end == len(text) or not text[end].isalnum()):
                out[-1] = (out[-1][0] + tok, end)  # plural possessive, teachers'
                continue
            out.append((tok, end))
        return out

    def _joins_hyphen(self, out: list[tuple[str, int]], tok: str) -> bool:
        if len(out) < 2 or out[-1][0] != "-" or out[-2][1] != out[-1][1] - 1:
            return False
        first = out[-2][0].lower()
        if self.lang == "en" and first in _EN_PREFIXES and tok[:1].isalpha():
            return True
        return f"{first}-{tok}".lower() in _HYPHEN_WORDS

    def _split_word(self, tok: str) -> list[str]:
        lang = self.lang
        if lang == "en" and self.clitics == "split":
            low = tok.lower()
            if low in _EN_FUSED:
                a, _ = _EN_FUSED[low]
                return [tok[:len(a)], tok[len(a):]]
            m = _EN_CLITIC.match(tok)
            if m and m.group(1).isalpha():
                head, clitic = m.group(1), m.group(2)
                return [head, clitic]
            return [tok]
        if lang in ("it", "fr", "ca"):
            pieces = []
            while (m := _ELISION.match(tok)) and tok[m.end():].lower() != "s":  # Martha 's
                pieces.append(m.group(1))
                tok = tok[m.end():]
            if tok[-2:-1] in _APOS and tok[-1:] in "sS" and len(tok) > 2:
                return pieces + [tok[:-2], tok[-2:]]  # English possessive in Italian text
            pieces.append(tok)
            return pieces
        return [tok]

    def _is_abbrev(self, word: str) -> bool:
        low = word.lower() + "."
        if low in self.titles or low in self.abbrevs:
            return True
        # A single capital letter is an initial (J. R. R. Tolkien) unless it is the
        # pronoun or a roman numeral that ends a sentence.
        if len(word) == 1 and word.isupper() and word not in "IVX":
            return True
        return False


def split_sentences(tokens: list[tuple[str, int]], tok: Tokenizer) -> list[list[str]]:
    """Cut a token sequence into sentences.

    A sentence ends after end punctuation (``.``, ``!``, ``?``, ``...``) and any
    closing quotes or brackets that follow it, when the next token can start a
    sentence (capital letter, digit, opening quote or bracket). An abbreviation
    with a final period (``etc.``, ``U.S.``; never a title such as ``Mr.`` or an
    initial such as ``J.``) ends one only before a capitalised common sentence
    opener (``The``, ``Il``), a heuristic that favours under-splitting.
    """
    sentences, current = [], []
    n, i = len(tokens), 0
    while i < n:
        word = tokens[i][0]
        current.append(word)
        i += 1
        strong = _SENT_END.match(word) is not None
        weak = (not strong and len(word) > 1 and word.endswith(".")
                and word.lower() not in tok.titles and not _is_initial(word))
        if not (strong or weak):
            continue
        while i < n and tokens[i][0] in _CLOSERS:
            current.append(tokens[i][0])
            i += 1
        nxt = tokens[i][0] if i < n else None
        if nxt is None or (strong and _starts_sentence(nxt, _spaced(tokens, i))) or \
                (weak and nxt[:1].isupper() and nxt.lower() in _COMMON_STARTERS):
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


def _is_initial(word: str) -> bool:
    return len(word) == 2 and word[0].isupper()


#: Words that commonly start a sentence; after an abbreviation such as "etc." a
#: capitalised word from this list signals a new sentence (English and Italian).
_COMMON_STARTERS = set("""the a an this that these those it he she they we i you there
in on at for but and or so as if when while after before however also his her their its
our my your one some many most all no not what which who how why where il lo la i gli le
un una uno in nel nella con per ma e o se quando mentre dopo prima però anche questo questa
questi queste quello quella è sono era erano non che""".split())


def _spaced(tokens: list[tuple[str, int]], i: int) -> bool:
    """Whether whitespace separates token i from the one before (offsets are ends)."""
    return tokens[i][1] - len(tokens[i][0]) > tokens[i - 1][1]


def _starts_sentence(word: str, spaced: bool = True) -> bool:
    c = word[:1]
    if c.isupper() or c.isdigit() or c in "\"'“‘«([¿¡-–—":
        return True
    # a letter of a caseless script (neither upper nor lower: Hebrew, Arabic,
    # Devanagari, CJK...): there is no capital to wait for, a space is the cue
    return spaced and c.isalpha() and not c.islower()


@lru_cache(maxsize=None)
def get_tokenizer(lang: str, clitics: str = "split") -> Tokenizer:
    """The tokenizer for ``lang`` (cached; safe to share between threads)."""
    if clitics not in ("split", "keep"):
        raise ValueError(f"clitics must be 'split' or 'keep', not {clitics!r}")
    lang = lang.lower().split("_")[0].split("-")[0]
    titles = frozenset(_TITLES.get(lang, "").split())
    abbrevs = frozenset(_ABBREVS.get(lang, "").split())
    return Tokenizer(lang=lang, clitics=clitics, titles=titles, abbrevs=abbrevs)


def lang_warning(lang: str | None) -> str | None:
    """A warning for a language the tokenizer has no rules for (None when it has)."""
    if lang is None:
        return None
    code = lang.lower().split("_")[0].split("-")[0]
    if code in KNOWN_LANGS or code in GENERIC_BY_DESIGN:
        return None
    return (f"the tokenizer has no rules for --lang {lang!r}; using the generic rules "
            f"(known: {', '.join(sorted(KNOWN_LANGS))})")


def tokenize(text: str, lang: str, *, clitics: str = "split") -> list[str]:
    """Tokens of ``text`` following the UD conventions of ``lang``."""
    return get_tokenizer(lang, clitics).tokenize(text)


def sentences(text: str, lang: str, *, clitics: str = "split") -> list[list[str]]:
    """Sentences (lists of tokens) of a paragraph of running text."""
    return get_tokenizer(lang, clitics).sentences(text)
