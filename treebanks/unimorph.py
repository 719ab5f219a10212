"""A UniMorph lexicon (lemma, form, feature bundle; tab-separated) read as UD analyses.

UniMorph (Kirov et al. 2018; schema: Sylak-Glassman 2016) publishes one file per
language, a line per inflected form: ``lemma<TAB>form<TAB>V;IND;PRS;3;SG`` (some
files add a fourth column, a segmentation, which is ignored). :func:`read_unimorph`
maps each bundle to a UD part of speech and FEATS with :data:`TAGS`:
``N;PL`` -> NOUN ``Number=Plur``; ``V;IND;PRS;3;SG`` -> VERB
``Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin`` (a verb with a mood is
finite: UniMorph leaves ``FIN`` out where UD writes ``VerbForm=Fin``).

* A bundle with a tag the map does not know (language-specific ``LGSPEC1``,
  possessor or argument marking such as ``PSS1S``, noun classes) is skipped whole,
  and counted by tag (:attr:`Lexicon.unknown_tags`): a half-read bundle could
  claim a cell it does not fill.
* UniMorph has no auxiliary class: its ``V`` entries also answer look-ups of UD's
  ``AUX`` (*be*, *have*), and its plain ``Number``/``Person``/``Gender`` those of a
  layered feature (``Number[subj]``).
* Blank lines are skipped; a non-blank line without three tab-separated fields is a
  :class:`TreebankError` naming the file and line (the file is not UniMorph's).

Look-up (:meth:`Lexicon.other_form`) is lenient where the two annotations differ in
detail: a UniMorph bundle rarely holds every feature a treebank writes (Aspect,
Polarity, Voice...), so features only one side has are not held against a form;
the features both have must agree, except the contrasted one.
"""
from __future__ import annotations

import gzip
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from treebanks.errors import TreebankError
from treebanks.features import format_feats

#: UniMorph part-of-speech tags -> (UD UPOS, features it implies)
POS = {
    "N": ("NOUN", {}), "PROPN": ("PROPN", {}), "ADJ": ("ADJ", {}), "ADV": ("ADV", {}),
    "V": ("VERB", {}), "V.PTCP": ("VERB", {"VerbForm": "Part"}), "V.MSDR": ("VERB", {"VerbForm": "Vnoun"}),
    "V.CVB": ("VERB", {"VerbForm": "Conv"}), "AUX": ("AUX", {}), "PRO": ("PRON", {}), "DET": ("DET", {}),
    "ART": ("DET", {"PronType": "Art"}), "NUM": ("NUM", {}), "ADP": ("ADP", {}), "CONJ": ("CCONJ", {}),
    "PART": ("PART", {}), "INTJ": ("INTJ", {}),
}

#: UniMorph feature tags -> (UD feature, value)
TAGS = {
    "SG": ("Number", "Sing"), "PL": ("Number", "Plur"), "DU": ("Number", "Dual"), "PAUC": ("Number", "Pauc"),
    "0": ("Person", "0"), "1": ("Person", "1"), "2": ("Person", "2"), "3": ("Person", "3"),
    "MASC": ("Gender", "Masc"), "FEM": ("Gender", "Fem"), "NEUT": ("Gender", "Neut"),
    "NOM": ("Case", "Nom"), "ACC": ("Case", "Acc"), "GEN": ("Case", "Gen"), "DAT": ("Case", "Dat"),
    "INS": ("Case", "Ins"), "VOC": ("Case", "Voc"), "ABL": ("Case", "Abl"), "ERG": ("Case", "Erg"),
    "ABS": ("Case", "Abs"), "ESS": ("Case", "Ess"), "COM": ("Case", "Com"), "PRT": ("Case", "Par"),
    "TRANS": ("Case", "Tra"), "FRML": ("Case", "Frm"), "PRIV": ("Case", "Abe"), "EQTV": ("Case", "Equ"),
    "BEN": ("Case", "Ben"), "PRP": ("Case", "Loc"), "IN+ESS": ("Case", "Ine"), "IN+ALL": ("Case", "Ill"),
    "IN+ABL": ("Case", "Ela"), "AT+ESS": ("Case", "Ade"), "AT+ALL": ("Case", "All"),
    "AT+ABL": ("Case", "Abl"), "LOC": ("Case", "Loc"),
    "PRS": ("Tense", "Pres"), "PST": ("Tense", "Past"), "FUT": ("Tense", "Fut"),
    "IND": ("Mood", "Ind"), "SBJV": ("Mood", "Sub"), "IMP": ("Mood", "Imp"), "COND": ("Mood", "Cnd"),
    "OPT": ("Mood", "Opt"), "POT": ("Mood", "Pot"), "QUOT": ("Mood", "Qot"),
    "IPFV": ("Aspect", "Imp"), "PFV": ("Aspect", "Perf"), "PRF": ("Aspect", "Perf"), "PROG": ("Aspect", "Prog"),
    "HAB": ("Aspect", "Hab"),
    "ACT": ("Voice", "Act"), "PASS": ("Voice", "Pass"), "MID": ("Voice", "Mid"),
    "FIN": ("VerbForm", "Fin"), "NFIN": ("VerbForm", "Inf"),
    "DEF": ("Definite", "Def"), "INDF": ("Definite", "Ind"),
    "CMPR": ("Degree", "Cmp"), "SPRL": ("Degree", "Sup"),
    "ANIM": ("Animacy", "Anim"), "INAN": ("Animacy", "Inan"), "HUM": ("Animacy", "Hum"),
    "NEG": ("Polarity", "Neg"), "POS": ("Polarity", "Pos"),
    "FORM": ("Polite", "Form"), "INFM": ("Polite", "Infm"),
}

#: where a wrong form from a lexicon says it came from (``items.tsv``'s ``wrong_source``)
SOURCE = "unimorph"


def map_bundle(bundle: str) -> tuple[str, dict[str, str]] | str:
    """``"V;IND;PRS;3;SG"`` -> ``("VERB", {...})``, or the first tag it cannot map."""
    upos, feats = None, {}
    for tag in bundle.split(";"):
        tag = tag.strip()
        if tag in POS and upos is None:
            upos, implied = POS[tag]
            feats.update(implied)
        elif tag in TAGS:
            name, value = TAGS[tag]
            if name in feats and feats[name] != value:
                return tag  # two values of one feature: not a cell UD has
            feats[name] = value
        else:
            return tag or "(empty tag)"
    if upos is None:
        return "(no part of speech)"
    if upos in ("VERB", "AUX") and "Mood" in feats and "VerbForm" not in feats:
        feats["VerbForm"] = "Fin"
    return upos, feats


@dataclass
class Lexicon:
    """A UniMorph file, mapped: ``(lemma, upos) -> [(form, features)]``.

    lines         non-blank lines read
    entries       lines mapped and kept
    unknown_tags  tag -> lines skipped for it (the first unknown tag of each)
    """
    path: Path
    cells: dict[tuple[str, str], list[tuple[str, dict[str, str]]]] = field(default_factory=dict)
    lines: int = 0
    entries: int = 0
    unknown_tags: Counter = field(default_factory=Counter)

    @property
    def skipped(self) -> int:
        return sum(self.unknown_tags.values())

    def report(self) -> str:
        """One line for people: what was read and what was skipped."""
        line = f"{self.path}: {self.entries} of {self.lines} lexicon lines read"
        if self.unknown_tags:
            shown = ", ".join(f"{t} {n}" for t, n in self.unknown_tags.most_common(5))
            line += f"; {self.skipped} skipped for a tag UD has no feature for ({shown})"
        return line

    def other_form(self, lemma: str, upos: str, feats: dict[str, str], feature: str,
                   values) -> tuple[str, str, str] | None:
        """(form, its value of ``feature``, its FEATS as the target's with that value)
        of ``lemma``'s entry whose ``feature`` (its plain name for a layer such as
        ``Number[subj]``) is one of ``values`` and whose other features agree with
        ``feats`` where both have them; most shared features first, then the form."""
        plain = feature.split("[")[0]
        rows = self.cells.get((lemma, upos)) or (self.cells.get((lemma, "VERB")) if upos == "AUX" else None)
        best, best_key = None, None
        for form, u in rows or ():
            value = u.get(plain)
            if value is None or value not in values:
                continue
            shared = 0
            for k, v in u.items():
                if k == plain or k not in feats:
                    continue
                if feats[k] != v:
                    break
                shared += 1
            else:
                key = (-shared, len(u) - shared, form)
                if best_key is None or key < best_key:
                    best, best_key = (form, value), key
        if best is None:
            return None
        return best[0], best[1], format_feats({**feats, feature: best[1]})


def read_unimorph(path: str | os.PathLike) -> Lexicon:
    """Read a UniMorph file (plain, or ``.gz``); see the module docstring."""
    path = Path(path)
    if not path.is_file():
        raise TreebankError(f"{path}: no such lexicon file")
    lex = Lexicon(path)
    cells: dict = defaultdict(list)
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                lex.lines += 1
                cols = line.rstrip("\r\n").split("\t")
                if len(cols) < 3 or not cols[0] or not cols[1]:
                    raise TreebankError(f"{path}:{lineno}: not a UniMorph line (expected lemma, form and "
                                        f"features, tab-separated)")
                mapped = map_bundle(cols[2])
                if isinstance(mapped, str):
                    lex.unknown_tags[mapped] += 1
                    continue
                upos, feats = mapped
                cells[cols[0], upos].append((cols[1], feats))
                lex.entries += 1
    except UnicodeDecodeError as e:
        raise TreebankError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except (OSError, EOFError) as e:
        raise TreebankError(f"{path}: cannot read ({e})") from None
    lex.cells = dict(cells)
    return lex
