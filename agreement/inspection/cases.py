"""Test items as inspection reads them (:class:`Case`): the subject's number, the positions
that matter (cue, nearest attractor, the word before the target, the target), the
conditions every table breaks down by, and, for patching, the other-number twin.

The subject's number is the item's agreement value (``number``: ``Sing``/``Plur``).
BLiMP pairs carry none; for the six subject-verb paradigms (:data:`BLIMP_TARGET_POS`)
it is read from a paradigm table (``paradigms.tsv`` of an extract directory): the
correct form's most frequent analysis with a Number among the parts of speech that
paradigm varies (its verb, or in the ``_2`` paradigms its subject noun). Other pairs
have no known number and are left out, counted.

The cue is known when the item names its part of speech (our items, the paper's
files); BLiMP's reader fills a placeholder, so BLiMP pairs have no cue (nor
attractor) position. The nearest attractor: the last word between cue and target
with the cue's part of speech and the other Number (items with features only).

The twin (patching): the sentence with the cue in the other number, from the test
set itself (an item whose words differ only at the cue and whose number differs) or
from the paradigm table (the cue's analysis with the subject's Number, and that
lemma's other-number form, :meth:`treebanks.paradigms.ParadigmTable.alternative`;
the determiners and adjectives right before the cue that agree with it are swapped
too: ``These islands`` becomes ``This island``, not ``These island``).
Its target is scored with the forms swapped: the original's wrong form is the
twin's correct one.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from agreement.scoring.score import target_query
from formats.items import Item
from lm.base import TargetQuery
from treebanks.features import parse_feats
from treebanks.paradigms import ParadigmTable

NUMBERS = ("Sing", "Plur")
#: BLiMP's subject-verb paradigms and the parts of speech of their target word
BLIMP_TARGET_POS = {
    "regular_plural_subject_verb_agreement_1": ("VERB", "AUX"),
    "irregular_plural_subject_verb_agreement_1": ("VERB", "AUX"),
    "distractor_agreement_relational_noun": ("VERB", "AUX"),
    "distractor_agreement_relative_clause": ("VERB", "AUX"),
    "regular_plural_subject_verb_agreement_2": ("NOUN", "PROPN"),
    "irregular_plural_subject_verb_agreement_2": ("NOUN", "PROPN"),
}
#: position classes of the probes, in the order tables and plots show them
POSITIONS = ("cue", "attractor", "before target", "target")


@dataclass(frozen=True)
class Case:
    """One item for inspection.

    item        the test item
    plural      1 when the subject is plural, 0 when singular
    cue         word index of the cue, None when unknown
    attractor   word index of the attractor nearest the target, None when none is known
    attractors  the condition ``0``, ``1`` or ``2+`` (attractors between cue and target)
    variant     ``original`` or the perturbation (``nonce`` ...)
    construction the item's construction (BLiMP: the paradigm)
    """
    item: Item
    plural: int
    cue: int | None
    attractor: int | None
    attractors: str
    variant: str
    construction: str

    @property
    def query(self) -> TargetQuery:
        return target_query(self.item)

    def word(self, position: str) -> int | None:
        """The word index of a position class (:data:`POSITIONS`), None when unknown."""
        t = self.item.target_index
        return {"cue": self.cue, "attractor": self.attractor,
                "before target": t - 1 if t > 0 else None, "target": t}[position]


def subject_number(item: Item, table: ParadigmTable | None) -> str | None:
    """``Sing`` or ``Plur``: the item's own value, else (BLiMP subject-verb pairs) the
    paradigm table's for the correct form; None when unknown."""
    own = [v for v in item.number.split(",") if v in NUMBERS]
    if own:
        return own[0]
    pos = BLIMP_TARGET_POS.get(item.construction)
    if table is None or pos is None:
        return None
    found = Counter()
    for analysis, n in table.analyses(item.correct):
        value = parse_feats(analysis.feats).get("Number")
        if analysis.upos in pos and value in NUMBERS:
            found[value] += n
    return found.most_common(1)[0][0] if found else None


def _attractor(item: Item) -> int | None:
    """The last word between cue and target with the cue's POS and the other Number."""
    c, t = item.cue_index, item.target_index
    number = parse_feats(item.feats[c]).get("Number") if item.feats[c] != "_" else None
    if number is None:
        return None
    for i in range(t - 1, c, -1):
        if item.pos[i] == item.pos[c] and parse_feats(item.feats[i]).get("Number") not in (None, number):
            return i
    return None


def bucket(attractors: int) -> str:
    return "2+" if attractors >= 2 else str(attractors)


def make_cases(items: Sequence[Item], table: ParadigmTable | None) -> tuple[list[Case], Counter]:
    """The items with a known subject number as cases, and the others counted by reason."""
    cases, skipped = [], Counter()
    for it in items:
        number = subject_number(it, table)
        if number is None:
            skipped["the subject's number is unknown" + ("" if it.construction in BLIMP_TARGET_POS
                                                          or it.number != "_" else
                                                          " (not a subject-verb pair)")] += 1
            continue
        known = 0 <= it.cue_index < it.target_index and it.pos[it.cue_index] != "_"
        cases.append(Case(it, int(number == "Plur"), it.cue_index if known else None,
                          _attractor(it) if known else None, bucket(it.attractors),
                          "original" if it.perturbation == "original" else it.perturbation,
                          it.construction))
    return cases, skipped


# ---------------------------------------------------------------------------- twins

def twin_queries(cases: Sequence[Case], table: ParadigmTable | None) -> tuple[
        list[TargetQuery | None], Counter]:
    """Per case, its twin (the cue in the other number; the forms swapped), or None;
    and the reasons of the Nones, counted."""
    own = _own_twins(cases)
    dets = _determiner_index(table)
    out: list[TargetQuery | None] = []
    why = Counter()
    for i, case in enumerate(cases):
        if case.cue is None:
            out.append(None)
            why["no known cue position (BLiMP pairs name none)"] += 1
            continue
        q = case.query
        other = own.get(i) or _table_form(case, table, case.cue)
        if other is None:
            out.append(None)
            why["the cue's other-number form is unknown" + ("" if table is not None else
                                                            " (no paradigm table given)")] += 1
            continue
        words = list(q.words)
        words[case.cue] = other
        if i not in own:
            for j, form in _determiners(case, table, dets):
                words[j] = form
        words[case.item.target_index] = case.item.wrong
        out.append(TargetQuery(tuple(words), q.index, (case.item.wrong, case.item.correct), q.space_after))
    return out, why


def _own_twins(cases: Sequence[Case]) -> dict[int, str]:
    """Twins found in the test set: the same words but the cue, the other number."""
    index: dict[tuple, list[int]] = {}
    for i, c in enumerate(cases):
        if c.cue is not None:
            key = (c.item.prefix[:c.cue] + ("",) + c.item.prefix[c.cue + 1:], c.cue, c.item.target_index)
            index.setdefault(key, []).append(i)
    out = {}
    for members in index.values():
        for i in members:
            for j in members:
                if cases[j].plural != cases[i].plural:
                    out[i] = cases[j].item.tokens[cases[j].cue]
                    break
    return out


def _table_form(case: Case, table: ParadigmTable | None, j: int, upos: str | None = None) -> str | None:
    """Word ``j``'s other-number form in the paradigm table (its analysis with the
    subject's Number, of ``upos`` or the item's part of speech there)."""
    if table is None:
        return None
    it, want = case.item, NUMBERS[case.plural]
    form, feats = it.tokens[j], it.feats[j]
    upos = upos or it.pos[j]
    for analysis, _ in table.analyses(form):
        if analysis.upos != upos or parse_feats(analysis.feats).get("Number") != want:
            continue
        if feats != "_" and analysis.feats != feats:
            continue
        other = table.alternative(analysis.lemma, upos, analysis.feats)
        if other and other != form:
            return other
    return None


def _determiner_index(table: ParadigmTable | None) -> dict:
    """(features but Number, Number) -> determiner forms, most frequent first: the
    other-number determiner where the table gives the two numbers different lemmas
    (``these``/``this``)."""
    index: dict = {}
    for analysis, n in sorted(table.rows() if table is not None else [], key=lambda r: (-r[1], r[0].form)):
        feats = parse_feats(analysis.feats)
        number = feats.pop("Number", None)
        if analysis.upos == "DET" and number in NUMBERS:
            index.setdefault((tuple(sorted(feats.items())), number), []).append(analysis.form)
    return index


def _other_determiner(form: str, feats: str, plural: int, table: ParadigmTable, dets: dict) -> str | None:
    """The other-number determiner with the same other features and capitalisation."""
    for analysis, _ in table.analyses(form):
        rest = parse_feats(analysis.feats if feats == "_" else feats)
        if analysis.upos != "DET" or rest.pop("Number", None) != NUMBERS[plural]:
            continue
        for other in dets.get((tuple(sorted(rest.items())), NUMBERS[1 - plural]), ()):
            if other[:1].isupper() == form[:1].isupper():
                return other
    return None


def _determiners(case: Case, table: ParadigmTable | None, dets: dict) -> list[tuple[int, str]]:
    """The determiners right before the cue that agree with it (``These islands``), with
    their other-number forms (:func:`_table_form`, else :func:`_other_determiner`): a
    twin swaps them too, or the sentence would still say the old number (``These
    island``). A word of unknown part of speech counts as a determiner when the
    paradigm table knows it as one."""
    out = []
    j = case.cue - 1
    while j >= 0 and table is not None:
        pos = case.item.pos[j]
        if pos == "_":
            pos = "DET" if any(a.upos == "DET" for a, _ in table.analyses(case.item.tokens[j])) else "_"
        if pos not in ("DET", "ADJ", "NUM"):
            break
        other = _table_form(case, table, j, pos) or (None if pos != "DET" else _other_determiner(
            case.item.tokens[j], case.item.feats[j], case.plural, table, dets))
        if other is not None:
            out.append((j, other))
        j -= 1
    return out
