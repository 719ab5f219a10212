"""Is each item what it claims? A checker of mined items and their nonce variants
against the paradigm table they came with (``paradigms.tsv``).

For an original item (relation items; construction items contrast ``Number``):

* ``correct_is_token``: the correct form is the treebank's token at the target;
* ``wrong_attested``: the table has the wrong form with the target's lemma and POS;
* ``wrong_exact``: ... in an analysis whose features differ from the target's in
  the contrasted feature only;
* ``wrong_closest``: ... or differ beyond it only as relation mining's ``closest``
  rule allows: an agreement feature (Gender, Animacy, Number, Person) that comes
  and goes with the contrasted one in this table, such as Gender on Russian plural
  past tenses; overlapping multi-values.

For a nonce variant (variant > 0, perturbation ``nonce``):

* ``words_kept``: every word it replaced (the target aside) is, in the table, a
  word with the replaced word's POS and full FEATS;
* ``pair_kept``: its target is a word with the original target's POS and FEATS,
  and its wrong form that word's lemma in an analysis contrasting the feature as
  ``wrong_closest`` requires.

:func:`check_items` counts them; ``scripts/check_items.py`` prints them per
directory, ``benchmarks/ud_languages.py --relations`` per language.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from formats.items import Item
from treebanks.features import parse_feats
from treebanks.paradigms import AGREEMENT_LIKE, ParadigmTable

ORIGINAL_CHECKS = ("correct_is_token", "wrong_attested", "wrong_exact", "wrong_closest")
VARIANT_CHECKS = ("words_kept", "pair_kept")


@dataclass(frozen=True)
class Validity:
    """Counts of items and variants passing each check (module docstring)."""
    items: int = 0
    variants: int = 0
    passed: dict[str, int] = field(default_factory=dict)

    def share(self, check: str) -> float | None:
        """The share passing ``check``, of items or of variants (None: none to check)."""
        n = self.items if check in ORIGINAL_CHECKS else self.variants
        return self.passed.get(check, 0) / n if n else None

    def line(self) -> str:
        """One line for people: each share in percent."""
        parts = [f"{c} {s:.1%}" for c in ORIGINAL_CHECKS + VARIANT_CHECKS if (s := self.share(c)) is not None]
        return f"{self.items} items, {self.variants} nonce variants: " + (", ".join(parts) or "nothing to check")


def check_items(items: Iterable[Item], table: ParadigmTable) -> Validity:
    """Check originals and nonce variants (module docstring) against ``table``."""
    checker = _Checker(table)
    originals: dict[str, Item] = {}
    passed = dict.fromkeys(ORIGINAL_CHECKS + VARIANT_CHECKS, 0)
    n_items = n_variants = 0
    for it in items:
        if it.variant == 0:
            originals[it.item_id] = it
            n_items += 1
            for name in checker.original(it):
                passed[name] += 1
        elif it.perturbation == "nonce" and it.item_id in originals:
            n_variants += 1
            for name in checker.variant(originals[it.item_id], it):
                passed[name] += 1
    return Validity(n_items, n_variants, passed)


class _Checker:
    def __init__(self, table: ParadigmTable):
        self.table = table
        self._analyses: dict[str, set] = {}

    def analyses(self, form: str) -> set:
        """(lemma, upos, feats) of ``form`` and of it with the first letter's case
        changed (a wrong form takes the target's capitalisation)."""
        got = self._analyses.get(form)
        if got is None:
            form = form.replace("\u00a0", " ")  # items.tsv's spelling of a space inside a form
            other = form[:1].upper() + form[1:] if form[:1].islower() else form[:1].lower() + form[1:]
            rows = self.table.analyses(form) + (self.table.analyses(other) if other != form else [])
            got = self._analyses[form] = {(a.lemma, a.upos, a.feats) for a, _ in rows}
        return got

    def original(self, it: Item) -> list[str]:
        t = it.target_index
        out = ["correct_is_token"] if it.tokens[t] == it.correct else []
        verdict = self.contrast(it.wrong, it.lemma, it.pos[t], it.feats[t], it.feature or "Number")
        return out + verdict

    def contrast(self, wrong: str, lemma: str, upos: str, feats: str, feature: str) -> list[str]:
        """Which of wrong_attested / wrong_exact / wrong_closest ``wrong`` passes."""
        own = parse_feats(feats)
        same_lemma = [f for lem, u, f in self.analyses(wrong) if lem == lemma and u == upos]
        if not same_lemma:
            return []
        out, best = ["wrong_attested"], None
        for f in same_lemma:
            other = parse_feats(f)
            if other.get(feature) is None or other.get(feature) == own.get(feature):
                continue
            diff = [k for k in set(own) | set(other) if k != feature and own.get(k) != other.get(k)]
            if not diff:
                return out + ["wrong_exact", "wrong_closest"]
            cov = {k for k in self.table.covarying(upos, feature) if k.split("[")[0] in AGREEMENT_LIKE}
            if all((k in own and k in other and set(own[k].split(",")) & set(other[k].split(",")))
                   or ((k in own) != (k in other) and k in cov) for k in diff):
                best = "wrong_closest"
        return out + ([best] if best else [])

    def variant(self, original: Item, v: Item) -> list[str]:
        t = original.target_index
        words = all(changed == kept or any(u == original.pos[i] and f == original.feats[i]
                                           for _, u, f in self.analyses(changed))
                    for i, (kept, changed) in enumerate(zip(original.tokens, v.tokens)) if i != t)
        target_ok = v.tokens[t] == v.correct and any(u == original.pos[t] and f == original.feats[t]
                                                     for _, u, f in self.analyses(v.correct))
        pair = target_ok and "wrong_closest" in self.contrast(v.wrong, v.lemma, original.pos[t], original.feats[t],
                                                              original.feature or "Number")
        return (["words_kept"] if words else []) + (["pair_kept"] if pair else [])
