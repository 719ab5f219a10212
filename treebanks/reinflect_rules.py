"""String edit rules for reinflection.

An *edit rule* turns one word form into another: ``(src_prefix, dst_prefix,
src_suffix, dst_suffix)``. It is read off a training pair as the SIGMORPHON
shared task's non-neural baseline does: the two forms are aligned on their stem
(their longest common prefix; when their first letters differ, as with Arabic
``يكتب`` / ``تكتب``, their longest common substring), and what stands before and
after the stem on each side is the change (``verify`` -> ``verifies``: ``("", "",
"y", "ies")``; ``is`` -> ``are``: nothing shared, the whole word replaced).

A :class:`RuleIndex` holds, per *cell change* (a key the caller chooses: part of
speech, source cell, target cell), the rules seen with each *ending* of the source
form: the replaced suffix with 0 to :data:`CONTEXT` letters of the stem before it,
and the whole word anchored (``^verify``), which only that word matches. A form is
reinflected by its longest ending the index knows, with that ending's most frequent
rule (ties: the rule that sorts first), so the answer never depends on the order
pairs were added. A pair can be left out of a look-up (``exclude``): its own
contribution is subtracted, which is what held-out evaluation needs (hide one cell
of a lemma, predict it from the rest) without training again.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from treebanks.features import parse_feats
from treebanks.paradigms import AGREEMENT_LIKE

#: letters of stem context an ending carries beyond the replaced suffix
CONTEXT = 4
#: the mark of a whole-word ending (``^`` + the form)
ANCHOR = "^"


class Rule(NamedTuple):
    """Replace ``src_prefix`` by ``dst_prefix`` and ``src_suffix`` by ``dst_suffix``."""
    src_prefix: str
    dst_prefix: str
    src_suffix: str
    dst_suffix: str

    def applies(self, form: str) -> bool:
        return (form.startswith(self.src_prefix) and form.endswith(self.src_suffix)
                and len(form) >= len(self.src_prefix) + len(self.src_suffix))

    def apply(self, form: str) -> str:
        stem = form[len(self.src_prefix):len(form) - len(self.src_suffix)]
        return self.dst_prefix + stem + self.dst_suffix

    def __str__(self) -> str:
        pre = f"{self.src_prefix or '∅'}->{self.dst_prefix or '∅'}- " if self.src_prefix or self.dst_prefix else ""
        return f"{pre}-{self.src_suffix or '∅'}->{self.dst_suffix or '∅'}"


@lru_cache(maxsize=1 << 16)
def edit_rule(src: str, dst: str) -> tuple[Rule, str]:
    """The rule turning ``src`` into ``dst``, and the stem they share (cached: held-out
    evaluation asks again for every pair it trained on)."""
    n = 0
    for a, b in zip(src, dst):
        if a != b:
            break
        n += 1
    if n == 0 and src and dst:
        found = _common_substring(src, dst)
        if found is not None:
            i, j, size = found
            return Rule(src[:i], dst[:j], src[i + size:], dst[j + size:]), src[i:i + size]
    return Rule("", "", src[n:], dst[n:]), src[:n]


def _common_substring(src: str, dst: str) -> tuple[int, int, int] | None:
    """(start in src, start in dst, length) of the longest substring the two share, the
    leftmost in ``src`` among the longest; None below two letters (a one-letter "stem"
    is a coincidence, not an alignment). Substring tests run in C: words are short."""
    for size in range(min(len(src), len(dst)), 1, -1):
        for i in range(len(src) - size + 1):
            j = dst.find(src[i:i + size])
            if j >= 0:
                return i, j, size
    return None


def endings(src: str, rule: Rule, stem: str) -> list[str]:
    """The endings a training pair files its rule under: the replaced suffix with 0
    to :data:`CONTEXT` stem letters before it, and the anchored whole word."""
    out = [stem[len(stem) - k:] + rule.src_suffix for k in range(min(CONTEXT, len(stem)) + 1)]
    out.append(ANCHOR + src)
    return out


def candidate_endings(form: str) -> list[str]:
    """A form's endings, longest first (the anchored word, then every suffix)."""
    return [ANCHOR + form] + [form[len(form) - k:] for k in range(len(form), -1, -1)]


class RuleIndex:
    """Rules per (cell change, ending), counted (module docstring)."""

    def __init__(self) -> None:
        self._rules: dict = {}   # change -> ending -> {Rule: count}

    def add(self, change, src: str, dst: str) -> None:
        rule, stem = edit_rule(src, dst)
        by_ending = self._rules.setdefault(change, {})
        for e in endings(src, rule, stem):
            c = by_ending.get(e)
            if c is None:
                by_ending[e] = {rule: 1}   # a plain dict: Counter() costs a Python call per ending
            else:
                c[rule] = c.get(rule, 0) + 1

    def changes(self) -> list:
        return sorted(self._rules)

    def has(self, change) -> bool:
        return change in self._rules

    def apply(self, change, form: str, exclude: tuple[str, str] | None = None) -> tuple[str, Rule, str, int] | None:
        """(new form, rule, ending matched, its count) by the longest known ending of
        ``form`` with a rule that applies, or None. ``exclude``: a (src, dst) pair
        added before whose own counts are left out (held-out evaluation)."""
        by_ending = self._rules.get(change)
        if not by_ending:
            return None
        own: dict[str, Rule] = {}
        if exclude is not None:
            rule, stem = edit_rule(*exclude)
            own = {e: rule for e in endings(exclude[0], rule, stem)}
        for e in candidate_endings(form):
            counts = by_ending.get(e)
            if not counts:
                continue
            best = None
            for rule, n in counts.items():
                if own.get(e) == rule:
                    n -= 1
                if n <= 0 or not rule.applies(form):
                    continue
                key = (-n, rule)
                if best is None or key < best[0]:
                    best = (key, rule, n)
            if best is not None:
                return best[1].apply(form), best[1], e, best[2]
        return None


@lru_cache(maxsize=1 << 16)
def agreement_change(src: str, dst: str) -> str:
    """The change of agreement features from cell ``src`` to ``dst`` (``Person=3>2``), with
    the source's VerbForm and whether it has a Case, or "" when the cells differ in nothing
    or in anything but agreement features."""
    da, db = parse_feats(src), parse_feats(dst)
    diff = [k for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)]
    if not diff or any(k.split("[")[0] not in AGREEMENT_LIKE for k in diff):
        return ""
    # the source's verb form and whether it has a case are kept: a Turkish verbal noun
    # (*bitmesi*, with Case) does not take the finite verb's endings (*bitmesim*)
    shape = f"VerbForm={da.get('VerbForm', '')};Case={'Case' in da}"
    return "|".join(f"{k}={da.get(k, '')}>{db.get(k, '')}" for k in diff) + ";" + shape


def change_classes(upos: str, change: str, form: str) -> tuple[tuple, ...]:
    """The rule class of an agreement change applied to ``form``: no back-off to one letter,
    which would pool the past *-di* with the necessitative *-meli* (1sg *-meliyim*, not *-melim*)."""
    return ((upos, change, form[-2:]),)
