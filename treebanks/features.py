"""Morphological features (the CoNLL-U FEATS column) in canonical form.

Canonical order is UD's: features sorted by name, case-insensitively
(``Gender=Fem|Number=Sing``), and the values of a multi-valued feature sorted
the same way (``Gender=Fem,Masc``). An empty feature set is written ``_``.

The treebank reader meets the same few thousand FEATS strings again and again,
so :func:`canonical_feats` caches its answers; everything else here is small
and pure.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence


def _key(s: str) -> tuple[str, str]:
    # case-insensitive first, then case-sensitive, so the order is total
    return (s.lower(), s)


def parse_feats(s: str | None) -> dict[str, str]:
    """``"Number=Sing|Person=3"`` -> ``{"Number": "Sing", "Person": "3"}``; ``_`` -> ``{}``.

    Raises ValueError on a feature without ``=`` or with an empty name or value."""
    if not s or s == "_":
        return {}
    out: dict[str, str] = {}
    for part in s.split("|"):
        name, eq, value = part.partition("=")
        if not eq or not name or not value:
            raise ValueError(f"malformed feature {part!r} (expected Name=Value)")
        out[name] = value
    return out


def format_feats(d: Mapping[str, str]) -> str:
    """Canonical FEATS string of a feature dict (``_`` when empty)."""
    if not d:
        return "_"
    return "|".join(f"{k}={_sort_values(d[k])}" for k in sorted(d, key=_key))


def _sort_values(value: str) -> str:
    if "," not in value:
        return value
    return ",".join(sorted(value.split(","), key=_key))


@lru_cache(maxsize=1 << 16)
def canonical_feats(s: str | None) -> str:
    """The canonical spelling of a FEATS string (cached; ValueError when malformed)."""
    return format_feats(parse_feats(s))


@lru_cache(maxsize=1 << 16)
def feature_names(feats: str) -> frozenset[str]:
    """Names of the features in a canonical FEATS string."""
    return frozenset(parse_feats(feats))


def feature_values(feats: str, features: Sequence[str]) -> tuple[str, ...] | None:
    """The values of ``features`` (in the given order) in ``feats``, or None when any
    of them is missing. ``feature_values("Gender=Fem|Number=Sing", ("Number",)) == ("Sing",)``."""
    return _feature_values(feats, tuple(features))


@lru_cache(maxsize=1 << 16)
def _feature_values(feats: str, features: tuple[str, ...]) -> tuple[str, ...] | None:
    d = parse_feats(feats)
    try:
        return tuple(d[f] for f in features)
    except KeyError:
        return None


def infer_verb_number(upos: str, feats: str) -> str:
    """The paper's English fix, as an explicit function: a finite present-tense
    VERB or AUX without ``Number`` gets ``Number=Sing`` when it is third person
    (``Person=3``) and ``Number=Plur`` otherwise (non-3sg present forms such as
    *think*, *are* share the plural's spelling). Other tokens are returned unchanged.

    Older English UD releases (2.0, the paper's) marked Number only on 3sg forms;
    recent ones mark it on every finite verb, so this is off by default
    (``agree extract --infer-verb-number``).
    """
    if upos != "VERB" and upos != "AUX":
        return feats
    return _infer(feats)


@lru_cache(maxsize=1 << 12)
def _infer(feats: str) -> str:
    d = parse_feats(feats)
    if "Number" in d or d.get("Tense") != "Pres" or d.get("VerbForm") != "Fin":
        return feats
    d["Number"] = "Sing" if d.get("Person") == "3" else "Plur"
    return format_feats(d)
