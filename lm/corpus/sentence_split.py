"""Where a paragraph's tokens are cut into sentences (:meth:`lm.corpus.tokenize.Tokenizer.sentences`).

Sentence ends: ``.``, ``!``, ``?``, ``…`` and the script-specific marks
:data:`SENTENCE_FINAL` (Arabic ``؟``, Urdu ``۔``, Devanagari ``।``/``॥``,
Burmese ``။``, CJK ``。！？``, Armenian ``։``, Ethiopic ``።``...). In a script with
case a new sentence starts with a capital; in a script without case (Hebrew,
Arabic, Devanagari...) the end mark must be followed by whitespace and then a
letter or digit, since there is no capital to look for.
"""
from __future__ import annotations

import re

from lm.corpus.lang_rules import LangRules

#: Sentence-final marks of scripts other than Latin/Greek/Cyrillic (Arabic question
#: mark, Urdu full stop, danda and double danda, Burmese, CJK, Armenian, Ethiopic, Tibetan).
SENTENCE_FINAL = "؟۔।॥။。！？։።།"
_SENT_END = re.compile(rf"^(?:[.!?{SENTENCE_FINAL}]+|…)$")
_CLOSERS = {")", "]", "}", '"', "'", "’", "”", "»", ">>", "''"}


def split_sentences(tokens: list[tuple[str, int]], rules: LangRules, end_chars: frozenset[str]) -> list[list[str]]:
    """Cut a token sequence into sentences.

    A sentence ends after end punctuation (``.``, ``!``, ``?``, ``...``) and any
    closing quotes or brackets that follow it, when the next token can start a
    sentence (capital letter, digit, opening quote or bracket). An abbreviation
    with a final period (``etc.``, ``U.S.``; never a title such as ``Mr.`` or an
    initial such as ``J.``) ends one only before a capitalised common sentence
    opener (``The``, ``Il``), a heuristic that favours under-splitting.
    ``tokens`` are (token, end offset) pairs; ``end_chars`` the last characters of the
    tokens that may end a sentence (:attr:`lm.corpus.tokenize.Tokenizer.end_chars`).
    """
    words = [t for t, _ in tokens]
    sentences, start, i, n = [], 0, 0, len(words)
    ends, marks, titles = end_chars, rules.sentence_marks, rules.titles
    # only a word ending in a period, an end mark or a language's sentence mark can end one
    for j in [k for k, w in enumerate(words) if w[-1] in ends]:
        if j < i:
            continue  # a closer already taken into the sentence before
        word = words[j]
        i = j + 1
        strong = _SENT_END.match(word) is not None or word in marks
        weak = (not strong and len(word) > 1 and word.endswith(".")
                and word.lower() not in titles and not _is_initial(word))
        if not (strong or weak):
            continue
        while i < n and words[i] in _CLOSERS:
            i += 1
        nxt = words[i] if i < n else None
        if nxt is None or (strong and _starts_sentence(nxt, _spaced(tokens, i), rules.cased)) or \
                (weak and nxt[:1].isupper() and nxt.lower() in _COMMON_STARTERS):
            sentences.append(words[start:i])
            start = i
    if start < n:
        sentences.append(words[start:])
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


def _starts_sentence(word: str, spaced: bool = True, cased: bool = True) -> bool:
    c = word[:1]
    if c.isupper() or c.isdigit() or c in "\"'“‘«([¿¡-–—":
        return True
    # a letter of a caseless script (neither upper nor lower: Hebrew, Arabic,
    # Devanagari, CJK...), or of a language that writes no capitals (Georgian's
    # letters are lower case for Unicode): there is no capital to wait for, a
    # space is the cue
    return spaced and c.isalpha() and (not cased or not c.islower())
