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

Languages differ in a table of rules (:mod:`lm.corpus.lang_rules`, one
record per language code; docs/corpora.md has the measured table):

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
- ``fr``, ``ca``, ``fro``: elision as in Italian; Old French numerals between
  periods (``.VII.``) are one token.
- ``br``, ``gd``, ``mt``: hyphenated words stay whole, but Breton's enclitics
  (``bloaz -mañ``) and Maltese's article (``il- kampanja``) are cut off; an
  apostrophe marking an elided letter stays with its word (``a’``, ``'s``, ``ta'``).
- ``ar``: the clitics Arabic PUD writes as words (``و ال...``, ``ل ها``), where
  rules can tell them (see :mod:`lm.corpus.lang_rules`).
- ``ka``, ``hy``, ``hyw``: the generic word rules; Georgian sentences may start
  lower-case, an Armenian colon ends a sentence (typed for ``։``).
- the other languages of the shared UD treebanks, and ``he``: the generic rules,
  measured at 95% or more of each treebank's tokens; Hebrew-style acronyms with
  a quotation mark inside the word (``צה"ל``, ``צה״ל``) stay one token and never
  end a sentence.
- any other language: the generic rules above, with a warning
  (:func:`lang_warning`); apostrophes inside a word stay inside it.

Where a paragraph's tokens end a sentence: :mod:`lm.corpus.sentence_split`.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from lm.corpus.lang_rules import GENERIC, GENERIC_MEASURED, RULES, LangRules, rules_for
from lm.corpus.sentence_split import SENTENCE_FINAL, split_sentences

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
_TOKEN_PATTERN = rf"""
    (?P<url>(?:https?://|ftp://|www\.)[^\s<>"]*[^\s<>".,;:!?)\]'’»])
  | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
  | (?P<initials>(?:[^\W\d_]\.){{2,}}(?![^\W_]))
  | (?P<num>\d+(?:[.,:]\d+)+(?![^\W_])|\d+(?:-\d+){{2,}}|\d{{3}}-\d{{4}}(?!\d)|['’]\d\d(?![^\W_]))
  | (?P<date>\d+(?:/\d+)+(?![^\W_]))
  | (?P<file>[^\W_][\w-]*\.(?:com|org|net|edu|gov|xls|doc|pdf|txt|html?|jpg|it)(?![^\W_]))
  | (?P<emoticon>(?<!\w)[:;=][-o^]?[()\[\]DPp/\\|*](?![^\W_]))
  | (?P<word>{_WORD})
  | (?P<punct>\.{{2,}}|[.!?]*[!?][.!?]*|[{SENTENCE_FINAL}]+|(?P<rep>[-=_*~#+])(?P=rep)+|<<|>>|``|''|\S)
"""


@lru_cache(maxsize=None)
def _token_re(extra: str = "") -> re.Pattern:
    """The token pattern, with a language's extra token patterns tried first."""
    return re.compile((f"(?P<extra>{extra})\n  |" if extra else "") + _TOKEN_PATTERN, re.VERBOSE)


#: marks that are a token of their own after a word (no language rule joins them to it;
#: a period may join it as an abbreviation's)
_TAIL = frozenset(',;:)!?".')
#: the split cache's value for a word that stays whole (a marker, tested by identity)
_WHOLE = ("",)
#: words of a tokenizer's split cache before it is emptied (bounded memory)
_CACHE_WORDS = 200_000
#: Languages with rules of their own or measured with the generic ones (benchmark).
KNOWN_LANGS = frozenset(RULES) | GENERIC_MEASURED
#: agree demo's generated language: generic rules by design, no warning
GENERIC_BY_DESIGN = frozenset({"synth"})
#: apostrophes a word may keep at its start (Scottish Gaelic writes ‘s too)
_INITIAL_APOS = "'’‘"


@dataclass(frozen=True)
class Tokenizer:
    """Tokenises text of one language.

    lang: language code (ISO 639-1, else 639-3 as UD names treebanks: ``fro``);
        :data:`lm.corpus.lang_rules.RULES` holds the languages with rules of
        their own, others get the generic ones.
    clitics: ``"split"`` (``do n't``, UD words) or ``"keep"`` (``don't``, the
        surface tokens of UD 2.16 EWT); English only.
    """
    lang: str
    clitics: str = "split"
    rules: LangRules = field(default=GENERIC, repr=False)

    @property
    def titles(self) -> frozenset[str]:
        return self.rules.titles

    @property
    def end_chars(self) -> frozenset[str]:
        """Last characters of the tokens that may end a sentence."""
        return self._end_chars

    @property
    def abbrevs(self) -> frozenset[str]:
        return self.rules.abbrevs

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` (a sentence or a paragraph), in order."""
        return [t for t, _ in self._tokens(text)]

    def sentences(self, text: str) -> list[list[str]]:
        """Split a paragraph into sentences of tokens."""
        return split_sentences(self._tokens(text), self.rules, self._end_chars)

    def __post_init__(self):
        # derived once: the hot loop below reads them for every token
        rules = self.rules
        object.__setattr__(self, "_pattern", _token_re(rules.extra_tokens))
        object.__setattr__(self, "_splits", bool(rules.fused or rules.splits or rules.elision))
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_end_chars", frozenset(".!?…" + SENTENCE_FINAL)
                           | {m[-1] for m in rules.sentence_marks if m})
        # a piece of letters only is one word token unless a language's extra pattern could
        # take it (Old French numerals start with a period, so none can)
        object.__setattr__(self, "_alpha_fast", not rules.extra_tokens or rules.extra_tokens.startswith(r"(?i:\."))

    def _tokens(self, text: str) -> list[tuple[str, int]]:
        """(token, end offset) pairs; the offsets let callers see adjacency.

        No token spans whitespace, so the text is cut at whitespace first (``str.split``)
        and each piece tokenised alone; the offsets are those of the pieces laid out with
        one space between them, which keeps every adjacency the offsets are read for. A
        piece of letters only is one word (or the pieces of a clitic split, cached): most
        of running text never reaches the token pattern."""
        out: list[tuple[str, int]] = []
        append, split_cached, chunk_tokens = out.append, self._split_cached, self._chunk_tokens
        fast, cache = self._alpha_fast, self._cache
        base = 0
        for chunk in text.split():
            end = base + len(chunk)
            base = end + 1
            if fast:
                # the shapes of most pieces, each one word token (letters and digits match
                # no other token pattern) with at most one mark after or before it
                if chunk.isalnum():
                    word, after, before = chunk, None, None
                elif chunk[-1] in _TAIL and chunk[:-1].isalnum():
                    word, after, before = chunk[:-1], chunk[-1], None
                elif chunk[0] == "(" and chunk[1:].isalnum():
                    word, after, before = chunk[1:], None, "("
                else:
                    chunk_tokens(chunk, end - len(chunk), out)
                    continue
                if before:
                    append((before, end - len(word)))
                word_end = end - 1 if after else end
                pieces = cache.get(word) or split_cached(word)
                if pieces is _WHOLE:
                    append((word, word_end))
                else:
                    for piece in pieces:
                        append((piece, word_end))
                if after:
                    if after == "." and self._is_abbrev(out[-1][0]):
                        out[-1] = (out[-1][0] + ".", end)
                    else:
                        append((after, end))
            else:
                chunk_tokens(chunk, end - len(chunk), out)
        return out

    def _split_cached(self, word: str) -> tuple[str, ...]:
        """``_split_word`` of a word, remembered (a bounded cache: words repeat)."""
        cache = self._cache
        pieces = cache.get(word)
        if pieces is None:
            pieces = tuple(self._split_word(word)) if self._splits else (word,)
            if pieces == (word,):
                pieces = _WHOLE
            if len(cache) > _CACHE_WORDS:
                cache.clear()
            cache[word] = pieces
        return (word,) if pieces is _WHOLE else pieces

    def _chunk_tokens(self, text: str, base: int, out: list[tuple[str, int]]) -> None:
        """Tokens of one piece of text without whitespace, offsets shifted by ``base``;
        the piece follows whitespace unless it starts the text (``base`` 0)."""
        rules = self.rules
        initial, final, proclitics = rules.apostrophe_initial, rules.apostrophe_final, rules.hyphen_proclitics
        split_dates, splits = rules.slashed_numbers == "split", self._splits
        for m in self._pattern.finditer(text):
            kind, tok, start, end = m.lastgroup, m.group(), m.start() + base, m.end() + base
            glued = bool(out) and out[-1][1] == start  # no space before this token
            if kind == "word":
                if glued and out[-1][0] == "-" and self._hyphenated(out, tok, end):
                    continue
                if not splits and initial is None:
                    out.append((tok, end))
                    continue
                pieces = list(self._split_cached(tok))
                if glued and initial is not None and self._initial_apostrophe(out, pieces[0], text,
                                                                              start - base, base):
                    out[-1] = (out[-1][0] + pieces[0], end)
                    pieces = pieces[1:]
                for piece in pieces:
                    out.append((piece, end))
                continue
            if kind == "date" and split_dates:  # ISDT: direttiva 94 / 55 / CE
                out.extend((piece, end) for piece in re.split(r"(/)", tok))
                continue
            if kind == "punct" and glued:
                if tok in (".", "..") and self._is_abbrev(out[-1][0]):
                    out[-1] = (out[-1][0] + ".", start + 1)
                    if tok == "..":  # "Inc.." at the end of a sentence: Inc. + .
                        out.append((".", end))
                    continue
                if final is not None and tok in _APOS and final.fullmatch(out[-1][0]) \
                        and rules.apostrophe_final_next.match(text, end - base):
                    out[-1] = (out[-1][0] + tok, end)  # po', ta', teachers' (English, clitics kept)
                    continue
                if proclitics is not None and tok == "-" and end - base < len(text) \
                        and text[end - base].isalnum() and proclitics.fullmatch(out[-1][0]):
                    out[-1] = (out[-1][0] + "-", end)  # Maltese il-kampanja: il- kampanja
                    continue
            out.append((tok, end))

    def _hyphenated(self, out: list[tuple[str, int]], tok: str, end: int) -> bool:
        """Whether ``tok`` (a word right after ``word -``) joins the tokens before it;
        if it does, ``out`` is updated."""
        if len(out) < 2 or out[-1][0] != "-" or out[-2][1] != out[-1][1] - 1:
            return False
        rules, first = self.rules, out[-2][0].lower()
        if rules.hyphen == "keep":
            if not first[-1:].isalnum():
                return False
            if tok.lower() in rules.hyphen_enclitics and f"{first}-{tok}".lower() not in rules.hyphen_whole:
                out[-1] = ("-" + tok, end)  # Breton ar bloaz -mañ
                return True
        elif not ((first in rules.hyphen_prefixes and tok[:1].isalpha())
                  or f"{first}-{tok}".lower() in rules.hyphen_whole):
            return False
        out[-2:] = [(out[-2][0] + "-" + tok, end)]
        return True

    def _initial_apostrophe(self, out: list[tuple[str, int]], word: str, text: str, start: int,
                            base: int) -> bool:
        """Whether the apostrophe just before ``word`` (at ``start`` in the piece ``text``,
        which starts at ``base``) belongs to it ('s, 'l): it follows a space or starts the
        text, and the language's rule takes the word."""
        if out[-1][0] not in _INITIAL_APOS:
            return False
        before = start - 2
        if before >= 0 and not text[before].isspace():
            return False
        if (before >= 0 or base > 0) and word[:1].isupper():  # after a space, not at the text's start
            return False
        return self.rules.apostrophe_initial.fullmatch(word) is not None

    def _split_word(self, tok: str) -> list[str]:
        rules = self.rules
        low = tok.lower()
        if low in rules.fused:
            pieces, pos = [], 0
            for part in rules.fused[low]:
                pieces.append(tok[pos:pos + len(part)])
                pos += len(part)
            return pieces
        for pattern in rules.splits:
            m = pattern.match(tok)
            if m and (pieces := [g for g in m.groups() if g]) and pieces[0].isalpha():
                return pieces
        if rules.elision is None:
            return [tok]
        pieces = []
        while (m := rules.elision.match(tok)) and tok[m.end():].lower() != "s" \
                and tok.lower().replace("’", "'") not in rules.elision_whole:  # Martha 's; d'ar
            pieces.append(m.group(1))
            tok = tok[m.end():]
        if rules.possessive_s and tok[-2:-1] in _APOS and tok[-1:] in "sS" and len(tok) > 2:
            return pieces + [tok[:-2], tok[-2:]]  # English possessive in Italian text
        pieces.append(tok)
        return pieces

    def _is_abbrev(self, word: str) -> bool:
        low = word.lower() + "."
        if low in self.titles or low in self.abbrevs:
            return True
        # A single capital letter is an initial (J. R. R. Tolkien) unless it is the
        # pronoun or a roman numeral that ends a sentence.
        if len(word) == 1 and word.isupper() and word not in "IVX":
            return True
        return False


@lru_cache(maxsize=None)
def get_tokenizer(lang: str, clitics: str = "split") -> Tokenizer:
    """The tokenizer for ``lang`` (cached; safe to share between threads)."""
    if clitics not in ("split", "keep"):
        raise ValueError(f"clitics must be 'split' or 'keep', not {clitics!r}")
    lang = lang.lower().split("_")[0].split("-")[0]
    return Tokenizer(lang=lang, clitics=clitics, rules=rules_for(lang, clitics))


def lang_warning(lang: str | None) -> str | None:
    """A warning for a language the tokenizer has neither rules for nor measured
    the generic rules on (None when it has), in the library's words: the language
    is named by its code, not by the option that gave it."""
    if lang is None:
        return None
    code = lang.lower().split("_")[0].split("-")[0]
    if code in KNOWN_LANGS or code in GENERIC_BY_DESIGN:
        return None
    return (f"the tokenizer has no rules for language {lang!r}; using the generic rules "
            f"(known: {', '.join(sorted(KNOWN_LANGS))})")


def tokenize(text: str, lang: str, *, clitics: str = "split") -> list[str]:
    """Tokens of ``text`` following the UD conventions of ``lang``."""
    return get_tokenizer(lang, clitics).tokenize(text)


def sentences(text: str, lang: str, *, clitics: str = "split") -> list[list[str]]:
    """Sentences (lists of tokens) of a paragraph of running text."""
    return get_tokenizer(lang, clitics).sentences(text)
