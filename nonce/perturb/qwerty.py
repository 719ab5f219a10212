"""``qwerty``: a character of a word replaced by a neighbouring key (Kumar et al. 2020).

Severity: the probability that a candidate word is noised (see
:mod:`nonce.perturb.select` for POS groups, direction and the matched random
control). One character per noised word: a random ASCII letter of the word is
replaced by one of its neighbours on a US QWERTY keyboard (same row, or an
overlapping key of the row above or below), keeping its case. Words without an
ASCII letter (punctuation, numbers, ``è``) are never candidates.
"""
from __future__ import annotations

from nonce.perturb.base import register
from nonce.perturb.select import WordEditAspect

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_OFFSETS = (0.0, 0.25, 0.75)  # horizontal stagger of the rows, in key widths


def _neighbours() -> dict[str, str]:
    place = {ch: (r, c + _OFFSETS[r]) for r, row in enumerate(_ROWS) for c, ch in enumerate(row)}
    out = {}
    for ch, (r, x) in place.items():
        near = [o for o, (r2, x2) in place.items() if o != ch and (
            (r2 == r and abs(x2 - x) == 1) or (abs(r2 - r) == 1 and abs(x2 - x) < 1))]
        out[ch] = "".join(sorted(near))
    return out


#: letter -> its neighbouring keys, e.g. ``NEIGHBOURS["g"] == "bfhtvy"``
NEIGHBOURS = _neighbours()


def has_key(word: str) -> bool:
    return any(ch.lower() in NEIGHBOURS for ch in word)


def typo(word: str, rng) -> str:
    """``word`` with one random ASCII letter replaced by a keyboard neighbour."""
    positions = [i for i, ch in enumerate(word) if ch.lower() in NEIGHBOURS]
    i = rng.choice(positions)
    new = rng.choice(NEIGHBOURS[word[i].lower()])
    if word[i].isupper():
        new = new.upper()
    return word[:i] + new + word[i + 1:]


@register
class Qwerty(WordEditAspect):
    name = "qwerty"
    summary = "a letter replaced by a neighbouring QWERTY key, by POS group"
    eligible = staticmethod(has_key)
    edit = staticmethod(typo)
