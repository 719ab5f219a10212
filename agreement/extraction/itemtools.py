"""What both mining methods do the same way when they make an item: the item id's
file stem, a word as items.tsv writes it, the wrong form's case, and a pause of the
cyclic garbage collector for the allocation-heavy part of a run."""
from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

#: an attractor analysis must be at least this share of the word's most frequent one
ATTRACTOR_MIN_SHARE = 0.1


@lru_cache(maxsize=256)  # asked once per candidate arc and item, of a few files
def file_stem(path: str | os.PathLike) -> str:
    """``.../en_ewt-ud-train.conllu.gz`` -> ``en_ewt-ud-train``."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".conllu"):
        name = name.removesuffix(suffix)
    return name


def as_word(form: str) -> str:
    # items.tsv separates words by spaces; a few treebanks have spaces inside a form
    return form.replace(" ", "\u00a0")


def match_case(form: str, like: str, capitalise: bool = False) -> str:
    # the table may know the other form only sentence-initially ("Dormono"); a
    # lowercase target gets a lowercase alternative (all-caps forms stay)
    if like[:1].islower() and form[:1].isupper() and not form.isupper():
        return form[0].lower() + form[1:]
    # relation items: a capitalised target (sentence-initial "This company") gets a
    # capitalised wrong form ("These"), so that the pair differs in the feature only
    if capitalise and like[:1].isupper() and not like.isupper() and form[:1].islower():
        return form[0].upper() + form[1:]
    return form


@contextmanager
def gc_paused():
    """An extract run allocates millions of small objects, none in reference
    cycles (reference counting frees them); the cyclic collector's repeated scans
    of the growing heap would cost a tenth of the run or more."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # the millions of objects allocated meanwhile would all be "young": the
            # first collection after enable() would scan them all (half a second on
            # EWT); freeze + unfreeze moves them to the oldest generation unscanned
            gc.freeze()
            gc.unfreeze()
            gc.enable()
