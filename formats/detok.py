"""The detokenization rule: where the spaces go in a sentence given only as
tokenized words (the paper's released sets, an ``items.tsv`` without a ``text``
column, words typed without spacing).

A subword model should read text as people write it, ``don't`` and ``herself.``,
not ``do n't`` and ``herself .``. Tokenized text has lost that information, so
the spacing is restored by this rule, the same for every language (the clitic
and elision lists cover English and Italian, the paper's languages; other words
keep their spaces). Between two words there is a space unless:

1. the second is closing punctuation: ``. , ; : ! ? ) ] } % ... ?? !! ”  »  ’``
   and any run of these (``?!``), or the ellipsis ``…``;
2. the first is opening punctuation: ``( [ { “ « ‘ ¿ ¡``;
3. the second is an English clitic: ``n't 's 're 've 'll 'd 'm`` (any case, straight
   or curly apostrophe), so that ``do n't`` -> ``don't`` and ``one 's`` -> ``one's``;
4. the first is an elided article or preposition ending in an apostrophe: Italian
   ``l' dell' all' dall' nell' sull' coll' un' quest' quell' c' d' s' m' t' v' n'
   bell' sant' tutt' anch' com' dov' cos'`` and French ``j' qu' lorsqu' jusqu'
   puisqu'`` (any case, straight or curly apostrophe): ``l' uomo`` -> ``l'uomo``.
   Other words ending in an apostrophe (``po'``, English ``students'``) keep their
   space;
5. straight quotes ``"`` (and a lone ``'``) alternate within the sentence: the
   first opens (no space after it), the next closes (no space before it), and so on.

Hyphens and dashes keep their spaces (``al - Qaeda`` stays: a dash between spaces
and a hyphenated word cannot be told apart). The rule never changes a word, only
the spaces between words.
"""
from __future__ import annotations

import functools
import re
from typing import Sequence

from formats.spacing import render

_CLOSING = re.compile(r"^(?:[.,;:!?)\]}%”»’…]+|\.\.\.)$")
_OPENING = frozenset("([{“«‘¿¡")
_CLITICS = frozenset({"n't", "'s", "'re", "'ve", "'ll", "'d", "'m"})
_ELISIONS = frozenset({
    "l'", "dell'", "all'", "dall'", "nell'", "sull'", "coll'", "un'", "quest'", "quell'",
    "c'", "d'", "s'", "m'", "t'", "v'", "n'", "bell'", "sant'", "tutt'", "anch'", "com'",
    "dov'", "cos'", "j'", "qu'", "lorsqu'", "jusqu'", "puisqu'"})
_QUOTES = frozenset({'"', "'"})


def _plain(word: str) -> str:
    return word.replace("’", "'").lower()


def attaches_left(word: str) -> bool:
    """Whether ``word`` is written without a space before it (rules 1 and 3)."""
    return bool(_CLOSING.match(word)) or _plain(word) in _CLITICS


def attaches_right(word: str) -> bool:
    """Whether ``word`` is written without a space after it (rules 2 and 4)."""
    return word in _OPENING or _plain(word) in _ELISIONS


@functools.lru_cache(maxsize=1 << 16)
def _attachment(word: str) -> tuple[bool, bool]:
    """(attaches left, attaches right), asked once per distinct word (every item's words
    are spaced on every score call)."""
    return attaches_left(word), attaches_right(word)


def space_after(words: Sequence[str]) -> tuple[bool, ...]:
    """The rule's spacing flags for ``words`` (one per word; the last is False)."""
    n = len(words)
    flags = [True] * n
    open_quote = {q: False for q in _QUOTES}
    for i, w in enumerate(words):
        if w in _QUOTES:
            if open_quote[w] and i > 0:        # a closing quote: no space before it
                flags[i - 1] = False
            elif not open_quote[w]:            # an opening quote: no space after it
                flags[i] = False
            open_quote[w] = not open_quote[w]
        left, right = _attachment(w)
        if i > 0 and left:
            flags[i - 1] = False
        if right:
            flags[i] = False
    if n:
        flags[-1] = False
    return tuple(flags)


def detokenize(words: Sequence[str]) -> str:
    """The words as text by :func:`space_after`."""
    return render(words, space_after(words))
