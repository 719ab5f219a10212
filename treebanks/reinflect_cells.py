"""The cells of a paradigm as the reinflection model (:mod:`treebanks.reinflect`) reads
them: which agreement feature two cells contrast, which spelling of a form is the
cell's (a sentence-initial capital is not), a cell's most frequent form, and the
cells a UniMorph lexicon adds to the treebanks' own."""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Mapping

from treebanks.features import format_feats, parse_feats
from treebanks.paradigms import AGREEMENT_LIKE
from treebanks.unimorph import Lexicon

#: the order a pair's contrasted feature is named in (Number first: method.md)
_PIVOTS = ("Number", "Person", "Gender", "Animacy")


@lru_cache(maxsize=1 << 14)
def feats_key(feats: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(parse_feats(feats).items()))


def agreeing(feats: str) -> bool:
    return any(k.split("[")[0] in AGREEMENT_LIKE for k, _ in feats_key(feats))


def contrast(a: str, b: str) -> str:
    """The agreement feature two cells contrast (``Number``, ``Person[subj]``...), or ""
    when they differ in nothing or in anything but agreement features."""
    da, db = dict(feats_key(a)), dict(feats_key(b))
    diff = [k for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)]
    if not diff or any(k.split("[")[0] not in AGREEMENT_LIKE for k in diff):
        return ""
    return min(diff, key=lambda k: (_PIVOTS.index(k.split("[")[0]), k))


def uncapitalised(form: str, known) -> str:
    """``form`` as it is written inside a sentence when ``known`` (a language's forms)
    has that spelling: ``Leads`` -> ``leads``, ``BROKERS`` -> ``brokers``; German
    nouns keep their capital, having no other spelling. Rules learned from a
    sentence-initial capital would otherwise rewrite the capital too."""
    if form.islower() or not form[:1].isupper():
        return form
    for other in (form[:1].lower() + form[1:], form.lower(), form[:1] + form[1:].lower()):
        if other != form and other in known:
            return other
    return form


def spellings(form: str) -> set[str]:
    """``form`` and, for a sentence-initial capital, its lower-case start (``Gebe``, ``gebe``)."""
    return {form, form[:1].lower() + form[1:]}


def most_frequent(forms: Mapping[str, int]) -> str:
    """The most frequent form (ties: the one that sorts first)."""
    if len(forms) == 1:
        return next(iter(forms))
    return min(forms.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def lexicon_only_cells(lexicon: Lexicon | None, cells: Mapping) -> tuple[dict, int]:
    """(lemma, upos) -> feats -> form of the lexicon's cells, and how many cells it
    spells two ways that the treebanks do not settle (those are left out)."""
    if lexicon is None:
        return {}, 0
    out: dict = defaultdict(dict)
    conflicts = 0
    for (lemma, upos), entries in sorted(lexicon.cells.items()):
        spelled: dict[str, set] = defaultdict(set)
        for form, feats in entries:
            spelled[format_feats(feats)].add(form)
        for feats, forms in sorted(spelled.items()):
            attested = cells.get((lemma, upos), {}).get(feats)
            if attested:
                continue   # the treebanks' own form wins
            if len(forms) > 1:
                conflicts += 1
                continue
            out[lemma, upos][feats] = next(iter(forms))
    return dict(out), conflicts
