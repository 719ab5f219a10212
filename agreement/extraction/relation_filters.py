"""Relation items' wrong forms from a language's morphology, and the filters for every
way a pair goes wrong (issue 41; :mod:`agreement.extraction.relations` uses them).

Wrong forms (:func:`morphology_wrong_forms`), in order: the treebank files' own
paradigm tables and a UniMorph lexicon as before (``wrong_source`` the file's stem,
or ``unimorph``), then the reinflection model (:class:`treebanks.reinflect.Reinflector`,
trained on the run's pooled counts): the target's cell with the contrasted feature
changed, generated only when its rule class is at least 95% right on held-out cells
(``wrong_source`` ``generated``), else the target's own form rewritten by the rule of the
agreement change alone, learned across tenses and moods, for verbs (:meth:`Reinflector.by_change`:
Turkish *geliyor* -> 1sg *geliyorum*, where no lemma has both cells of that tense often enough).
A value whose form is spelled like the target is passed over for the next one (Person).

Filters (:func:`relation_filters`), each an :class:`ItemFilter` counted under its name,
after ``same_spelling`` and before ``vocab``:

* ``spelling_variant``: the wrong form is the correct one written otherwise (case,
  ß/ss, hyphen, apostrophe: *muß* / *muss*, *Є* / *є*), or not the most frequent form
  of its cell (:meth:`Reinflector.guard`) unless it is the item's own treebank's spelling;
* ``elision``: one form is elided or holds an apostrophe and the other not (*dont* ->
  *don't*, *l'* -> *les*; *doesn't* -> *don't* is kept), or the wrong form is not
  written as the language writes it before the next word (:func:`treebanks.sounds.render_before`
  gives another form or spacing): the item is dropped rather than glued into a non-word
  (*l'apport* -> *lesapport*); an English *a* / *an* or Italian *il* / *lo* is re-rendered;
  or the wrong form fuses with the preposition before it (French *de la* -> *de les*, written
  *des*; Spanish *a la* -> *a el*, written *al*: :func:`treebanks.sounds.contracts`), or the
  word before it is written for the target and would be written otherwise before the wrong form
  (French *C'est* -> *C'sont*, *Ce sont* -> *Ce êtes*);
* ``other_feature_difference``: the wrong form's features differ from the target's in
  another feature than the contrasted one, except the features tied to it (:data:`TIES`:
  Gender neutralised in the plural, where one of the two forms has no Gender; :data:`LAYER_TIES`:
  a subject layer's Gender, absent in its 1st person, when Person[subj] is contrasted);
* ``syncretism``: the wrong form has an analysis (any cell of its lemma, in any mood or
  tense, attested in the treebanks or the lexicon) whose contrasted value is the cue's and
  whose other agreement features do not clash with the cue's: the bad sentence may be
  grammatical (German 1sg *gebe* is also the 3sg subjunctive of reported speech). An
  analysis in another mood than the target's counts only in a complement, adverbial or
  reported clause (``ccomp``, ``advcl``, ``parataxis``, ``csubj``, ``acl``, ``xcomp``),
  where that mood can stand: *if it was* -> *were* is dropped, a main clause's *it was* ->
  *it were* kept.
  Generated cells do not count: English *say* is also the 3sg mandative subjunctive, a
  rare construction, and *the doctor beg* stays an item, as MultiBLiMP has it;
* ``ambiguous_cue``: the cue has an attested analysis of its lemma (same part of speech
  and case) with the wrong value (Czech *situace*, singular and plural; Hindi *वह*, he
  and she), or, for Gender, is a first or second person pronoun (no inherent gender).
"""
from __future__ import annotations

from functools import partial
from typing import Sequence

from agreement.extraction.item_builder import CandidateArc, ItemFilter, Rejection, WrongChoice, WrongForms
from agreement.extraction.itemtools import file_stem, match_case
from treebanks.features import format_feats, parse_feats
from treebanks.paradigms import Analysis
from treebanks.pooled import PooledParadigms
from treebanks.reinflect import Reinflector
from treebanks.sounds import contracts, has_apostrophe, is_elided, render_before

GENERATED = "generated"
#: filter names, in the order they are applied (relations.tsv columns)
FILTER_NAMES = ("spelling_variant", "elision", "other_feature_difference", "syncretism", "ambiguous_cue")
#: features a contrast may change along with it: a form without Gender in the plural
TIES = {"Number": ("Gender", "Animacy")}
#: features a subject-layer contrast may change along with it, in the same layer: the
#: Abkhaz 1st person subject prefix has no gender (3sg *д-* Gender[subj]=Com -> 1sg *с-*);
#: plain Person is not tied (Arabic 3sg masc *قرر* -> 1sg *قررت* is also the 3sg feminine,
#: Hindi participles carry no person of their own)
LAYER_TIES = {"Person": ("Gender",)}
#: agreement features read when the wrong form's analyses are set against the cue
_AGREEMENT = ("Number", "Person", "Gender")
#: clause relations under which another mood of the wrong form can stand
_SUBORDINATE = frozenset({"ccomp", "advcl", "parataxis", "csubj", "acl", "xcomp"})


def _base(name: str) -> str:
    return name.split("[")[0]


def morphology_wrong_forms(pooled: PooledParadigms, model: Reinflector, alt: str,
                           values_of, generated: dict) -> WrongForms:
    """The relations wrong-form hook (module docstring); ``values_of(feature, value)``
    gives the value sets to try in turn; each generated cell is added to ``generated``
    (an :class:`Analysis` -> 0, for ``paradigms.tsv``)."""
    def choose(arc: CandidateArc) -> WrongChoice | Rejection:
        t = arc.sentence.tokens[arc.target]
        stem, tried = file_stem(arc.sentence.source), values_of(arc.features[0], arc.value[0])
        # a value spelled like the target (English 2sg *think* for 1sg *think*) makes no pair:
        # the next value is tried (3sg *thinks*); the first such form is kept for same_spelling
        same, syncretic = None, set()
        for vals in tried:
            for cell in _finite_spellings(t.upos, t.feats):
                wrong = pooled.wrong_form(stem, t.lemma, t.upos, cell, arc.carried, vals, alt)
                if wrong is not None:
                    choice = WrongChoice(match_case(wrong.form, t.form, capitalise=True), wrong.value,
                                         wrong.source, wrong.feats)
                    if choice.form != t.form:
                        return choice
                    same = same or choice
                    syncretic.add(vals)   # attested as the target's spelling: not generated otherwise
        feats = parse_feats(t.feats)
        own = t.form[:1].lower() + t.form[1:]   # the model's rules are learned on forms inside a sentence
        for vals in tried:
            if vals in syncretic:
                continue   # Croatian genitive plural *novih* is every gender's: no *novh* for the neuter
            for v in vals:
                cell = format_feats({**feats, arc.carried: v})
                # else, for a verb, the change of agreement alone, learned across tenses, from the
                # target's own form (not for adjectives: Croatian genitive *indijskog* -> *indijskih*
                # is right, but *premijera* is also the genitive plural, which no treebank attests)
                g = model.form_of(t.lemma, t.upos, cell) or (
                    model.by_change(own, t.lemma, t.upos, t.feats, cell) if t.upos in ("VERB", "AUX") else None)
                if g is not None and g.origin == GENERATED:
                    choice = WrongChoice(match_case(g.form, t.form, capitalise=True), v, GENERATED, cell)
                    if choice.form != t.form:
                        generated[Analysis(g.form, t.lemma, t.upos, cell)] = 0
                        return choice
                    same = same or choice
                    break   # one value of the set spelled like the target: the set is syncretic
        if same is not None:
            return same
        rejected = any(pooled.rejected(t.lemma, t.upos, t.feats, arc.carried, vals) for vals in tried)
        return Rejection("non_contrast_difference" if rejected else "no_alternative")
    return choose


def _finite_spellings(upos: str, feats: str) -> tuple[str, ...]:
    """A finite verb's cell as written, then with ``VerbForm=Fin`` added or taken away: a
    verb without VerbForm counts as finite, and some treebanks write it on half their finite
    verbs only (Moksha: 318 of 596 verbs with a subject layer), so the other cell is the same one."""
    if upos not in ("VERB", "AUX"):
        return (feats,)
    d = parse_feats(feats)
    if "VerbForm" not in d:
        return feats, format_feats({**d, "VerbForm": "Fin"})
    if d["VerbForm"] == "Fin":
        return feats, format_feats({k: v for k, v in d.items() if k != "VerbForm"})
    return (feats,)


def relation_filters(model: Reinflector, lang: str | None) -> list[ItemFilter]:
    """The filters of the module docstring, in order."""
    return [ItemFilter("spelling_variant", partial(_spelling_variant, model)),
            ItemFilter("elision", partial(_elision, lang)),
            ItemFilter("other_feature_difference", _other_feature),
            ItemFilter("syncretism", partial(_syncretism, model)),
            ItemFilter("ambiguous_cue", partial(_ambiguous_cue, model))]


def _spelling_variant(model: Reinflector, arc: CandidateArc, wrong: WrongChoice) -> bool:
    t = arc.sentence.tokens[arc.target]
    why = model.guard(t.form, wrong.form, t.lemma, t.upos, wrong.feats) if wrong.feats else ""
    # the item's own treebank's spelling of the cell stands even where another treebank's is more frequent
    return bool(why) and not (why.startswith("not the most frequent")
                              and wrong.source == file_stem(arc.sentence.source))


def _elision(lang: str | None, arc: CandidateArc, wrong: WrongChoice) -> bool:
    tokens = arc.sentence.tokens
    t = tokens[arc.target]
    if has_apostrophe(t.form) != has_apostrophe(wrong.form) or is_elided(t.form) != is_elided(wrong.form):
        return True
    if arc.target:
        before = tokens[arc.target - 1]
        if contracts(before.form, wrong.form, lang):
            return True   # de + les is written des: the bad sentence would hold no word of the language
        # the word before is written for the target (C'est, Ce sont): it must stay so for the wrong form
        kept = render_before(before.form, wrong.form, lang, space_after=before.space_after)
        if kept is None or kept.form != before.form or kept.space_after != before.space_after:
            return True
    if arc.target + 1 >= len(tokens):
        return False
    written = render_before(wrong.form, tokens[arc.target + 1].form, lang, feats=wrong.feats,
                            space_after=t.space_after)
    return written is None or written.space_after != t.space_after or written.form != wrong.form


def _other_feature(arc: CandidateArc, wrong: WrongChoice) -> bool:
    if not wrong.feats:
        return False
    a = parse_feats(arc.sentence.tokens[arc.target].feats)
    b = parse_feats(wrong.feats)
    feature = arc.features[0]
    ties = TIES.get(feature, ())
    layer = arc.carried[len(feature):] if arc.carried != feature else ""
    layered = {f"{n}{layer}" for n in LAYER_TIES.get(feature, ())} if layer else set()
    for name in set(a) | set(b):
        if _base(name) == feature or a.get(name) == b.get(name):
            continue
        if name == "VerbForm" and {a.get(name), b.get(name)} <= {"Fin", None}:
            continue   # a verb without VerbForm is finite (_finite_spellings)
        if (_base(name) in ties or name in layered) and (name not in a or name not in b):
            continue
        return True
    return False


def _syncretism(model: Reinflector, arc: CandidateArc, wrong: WrongChoice) -> bool:
    t = arc.sentence.tokens[arc.target]
    cue = _cue_values(arc)
    mood = parse_feats(t.feats).get("Mood")
    other_moods = _subordinate(arc.sentence.tokens, arc.target)
    for r in model.attested(wrong.form, t.upos, t.lemma):
        f = parse_feats(r.feats)
        if f.get("Mood") != mood and not other_moods:
            continue
        if f.get(arc.carried) != arc.value[0]:
            continue
        if all(cue.get(_base(n), v) == v for n, v in f.items() if _base(n) in _AGREEMENT):
            return True
    return False


def _ambiguous_cue(model: Reinflector, arc: CandidateArc, wrong: WrongChoice) -> bool:
    c = arc.sentence.tokens[arc.cue]
    mine = parse_feats(c.feats)
    feature = arc.features[0]
    if feature == "Gender" and c.upos == "PRON" and mine.get("Person") in ("1", "2"):
        return True
    case = mine.get("Case")
    for r in model.attested(c.form, c.upos, c.lemma):
        f = parse_feats(r.feats)
        if f.get(feature) == wrong.value and (case is None or f.get("Case") == case):
            return True
    return False


def _subordinate(tokens, target: int) -> bool:
    """Whether the target's clause is a complement, adverbial or reported clause (where
    another mood, a subjunctive of reported speech or of a condition, can stand)."""
    t = tokens[target]
    if t.deprel.split(":")[0] in ("aux", "cop") and t.head >= 0:
        t = tokens[t.head]
    return t.deprel.split(":")[0] in _SUBORDINATE


def _cue_values(arc: CandidateArc) -> dict[str, str]:
    """The cue's agreement features (a cue without Person is third person)."""
    c = arc.sentence.tokens[arc.cue]
    f = {n: v for n, v in parse_feats(c.feats).items() if n in _AGREEMENT}
    f.setdefault("Person", "3")  # nouns, demonstratives: third person (UD leaves it out)
    f[arc.features[0]] = arc.value[0]
    return f


def with_filters(filters: Sequence[ItemFilter], extra: Sequence[ItemFilter]) -> list[ItemFilter]:
    """``extra`` inserted after ``same_spelling`` (before ``vocab``)."""
    out = list(filters)
    at = next((i + 1 for i, f in enumerate(out) if f.name == "same_spelling"), 0)
    return out[:at] + list(extra) + out[at:]
