"""Issue 41 point 3, MultiBLiMP's reach: a Person contrast passes over a person spelled
like the target (English 1sg *think* = 2sg *think*, so *I think* -> *thinks*); a subject
layer's Gender may come and go with its Person (the Abkhaz 1st person prefix has none),
plain Gender may not; a finite verb written with and without VerbForm=Fin is one cell; the reinflection model's rules of an agreement change learned across
tenses (Turkish 3sg -> 1sg) and kept apart from verbal nouns. Tiny inline treebanks and
paradigms."""
from __future__ import annotations

from test_relations import BASIC, V3, relation_items

from treebanks.paradigms import Analysis
from treebanks.reinflect import Reinflector, agreement_change

PRES = "Mood=Ind|Number=Sing|Person={p}|Tense=Pres|VerbForm=Fin"


def _say(pron, person, verb):
    return [(pron, pron, "PRON", f"Number=Sing|Person={person}|PronType=Prs", 2, "nsubj"),
            (verb, "pensare", "VERB", PRES.format(p=person), 0, "root")]


def test_person_passes_over_a_person_spelled_like_the_target(tmp_path):
    """1sg and 2sg `penso` are one form: `io penso` contrasts with the 3sg `pensa`."""
    rows = [_say("io", "1", "penso"), _say("tu", "2", "penso"), _say("lui", "3", "pensa")]
    r = relation_items(tmp_path, BASIC + rows)
    first = [it for it in r.items if it.feature == "Person" and it.correct == "penso"
             and it.tokens[it.cue_index] == "io"]
    assert [(it.wrong, it.wrong_value) for it in first] == [("pensa", "3")]
    second = [it for it in r.items if it.feature == "Person" and it.tokens[it.cue_index] == "tu"]
    assert [(it.wrong, it.wrong_value) for it in second] == [("pensa", "3")]   # 1 or 3: the one spelled apart
    third = [it for it in r.items if it.feature == "Person" and it.correct == "pensa"]
    assert [it.wrong for it in third] == ["penso"]


def test_a_person_with_no_other_spelling_is_still_same_spelling(tmp_path):
    rows = [_say("io", "1", "penso"), _say("tu", "2", "penso"), _say("lui", "3", "penso")]
    r = relation_items(tmp_path, BASIC + rows)
    assert not any(it.correct == "penso" and it.feature == "Person" for it in r.items)
    assert r.report.counts[("subj-verb", "Person")]["same_spelling"] == 3


LAYER = "Gender[subj]={g}|Mood=Ind|Number[subj]=Sing|Person[subj]={p}|Tense=Aor|VerbForm=Fin"
PLAIN = "Gender={g}|Mood=Ind|Number=Sing|Person={p}|Tense=Past|VerbForm=Fin"


def _went(pron, person, verb, feats, gender):
    g = "" if person == "1" else gender
    cell = feats.format(g=g, p=person).replace("Gender[subj]=|", "").replace("Gender=|", "")
    return [(pron, pron, "PRON", f"Number=Sing|Person={person}|PronType=Prs", 2, "nsubj"),
            (verb, "ацара", "VERB", cell, 0, "root")]


def test_a_subject_layers_gender_comes_and_goes_with_its_person(tmp_path):
    """Abkhaz-like: 3sg `дцеит` has Gender[subj], 1sg `сцеит` none: a Person[subj] item."""
    rows = [_went("иара", "3", "дцеит", LAYER, "Com"), _went("сара", "1", "сцеит", LAYER, "Com")]
    r = relation_items(tmp_path, BASIC + rows)
    person = {(it.correct, it.wrong) for it in r.items if it.feature == "Person[subj]"}
    assert person == {("дцеит", "сцеит"), ("сцеит", "дцеит")}


def test_plain_gender_does_not_come_and_go_with_person(tmp_path):
    """Without a subject layer the same pair differs in Gender: dropped (an Arabic 1sg past
    is spelled like the 3sg feminine)."""
    rows = [_went("huwa", "3", "qarrara", PLAIN, "Masc"), _went("ana", "1", "qarrartu", PLAIN, "Masc")]
    r = relation_items(tmp_path, BASIC + rows)
    assert not any(it.correct in ("qarrara", "qarrartu") and it.feature == "Person" for it in r.items)
    assert r.report.counts[("subj-verb", "Person")]["other_feature_difference"] == 2


def test_a_finite_verb_without_verbform_finds_its_other_number(tmp_path):
    """Moksha-like: the singular is written without VerbForm, the plural with VerbForm=Fin;
    both are finite, so each is the other's wrong form and no other feature differs."""
    bare = "Mood=Ind|Number={n}|Person=3|Tense=Past"
    rows = [[("kal", "kal", "NOUN", "Number=Sing", 2, "nsubj"), ("tusь", "tums", "VERB", bare.format(n="Sing"), 0, "root")],
            [("kalt", "kal", "NOUN", "Number=Plur", 2, "nsubj"),
             ("tustь", "tums", "VERB", bare.format(n="Plur") + "|VerbForm=Fin", 0, "root")]]
    r = relation_items(tmp_path, BASIC + rows)
    pairs = {(it.correct, it.wrong) for it in r.items if it.feature == "Number" and it.lemma == "tums"}
    assert pairs == {("tusь", "tustь"), ("tustь", "tusь")}


PAST = "Aspect=Perf|Number=Sing|Person={p}|Tense=Past"
HAB = "Aspect=Hab|Number=Sing|Person={p}|Tense=Past"
NOMINAL = "Case=Nom|Number=Sing|Person={p}"


def turkish() -> dict[Analysis, int]:
    """Six verbs with a 3sg and 1sg past, six with a 3sg and 1sg habitual past (both end in
    *-di*): too few for a rule of one pair of cells, enough for the change Person 3 -> 1 across
    both; ``gir`` has its 3sg past only, ``bit`` a verbal noun only."""
    counts = {}
    for stem in ("gel", "bil", "sil", "del", "ekle", "dinle"):
        counts[Analysis(stem + "di", stem, "VERB", PAST.format(p=3))] = 2
        counts[Analysis(stem + "dim", stem, "VERB", PAST.format(p=1))] = 1
    for stem in ("gel", "bil", "sil", "del", "ekle", "dinle"):
        counts[Analysis(stem + "irdi", stem, "VERB", HAB.format(p=3))] = 2
        counts[Analysis(stem + "irdim", stem, "VERB", HAB.format(p=1))] = 1
    counts[Analysis("girdi", "gir", "VERB", PAST.format(p=3))] = 1
    counts[Analysis("bitmesi", "bit", "VERB", NOMINAL.format(p=3))] = 1
    return counts


def test_an_agreement_change_is_learned_across_tenses():
    model = Reinflector.train(turkish())
    # one pair of cells has six lemmas: under the support a class needs on its own
    assert model.reinflect("girdi", "gir", "VERB", PAST.format(p=3), PAST.format(p=1)) is None
    g = model.by_change("girdi", "gir", "VERB", PAST.format(p=3), PAST.format(p=1))
    assert g is not None and g.form == "girdim" and g.origin == "generated"
    assert g.reliability >= 0.95 and g.support >= 10 and g.source_feats == PAST.format(p=3)
    assert model.by_change("girdi", "gir", "VERB", PAST.format(p=3), PAST.format(p=1), 1.01) is None


def test_a_verbal_noun_takes_no_finite_ending():
    """`bitmesi` (with Case) is no finite verb: the finite change does not apply (*bitmesim*)."""
    model = Reinflector.train(turkish())
    assert model.by_change("bitmesi", "bit", "VERB", NOMINAL.format(p=3), NOMINAL.format(p=1)) is None
    assert agreement_change(PAST.format(p=3), PAST.format(p=1)) != agreement_change(
        NOMINAL.format(p=3), NOMINAL.format(p=1))
    assert agreement_change(PAST.format(p=3), HAB.format(p=1)) == ""   # tense differs too
