"""Issue 41's relation filters and reach (agreement.extraction.relation_filters,
relation_arcs) on tiny Italian-like treebanks: each filter drops what it names and
counts it, a noun subject is third person for Person, a marker case child makes a
subject non-controlling, a relation x feature under 90% agreement gives nothing."""
from __future__ import annotations

from test_relations import BASIC, V3, by_key, relation_items

from agreement.extraction.relation_filters import FILTER_NAMES


def _counts(r, relation="subj-verb", feature="Number"):
    return r.report.counts[(relation, feature)]


def test_ambiguous_cue_is_dropped_and_counted():
    """A noun spelled alike in both numbers (Czech situace): the wrong verb could agree."""
    import tempfile
    from pathlib import Path
    rows = [[("città", "città", "NOUN", f"Gender=Fem|Number={n}", 2, "nsubj"),
             (v, "dormire", "VERB", V3.format(n=n), 0, "root")] for n, v in (("Sing", "dorme"), ("Plur", "dormono"))]
    with tempfile.TemporaryDirectory() as d:
        r = relation_items(Path(d), BASIC + rows)
    assert _counts(r)["ambiguous_cue"] == 2
    assert not any(it.tokens[it.cue_index] == "città" and it.feature == "Number" for it in r.items)


def test_noun_subject_is_third_person(tmp_path):
    first = [("io", "io", "PRON", "Number=Sing|Person=1|PronType=Prs", 2, "nsubj"),
             ("dormo", "dormire", "VERB", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin", 0, "root")]
    r = relation_items(tmp_path, BASIC + [first])
    person = [it for it in r.items if it.feature == "Person" and it.pos[it.cue_index] == "NOUN"]
    assert person and all(it.number == "3" and it.wrong_value in ("1", "2") and it.wrong != it.correct
                          for it in person)


def test_case_marker_child_makes_the_subject_noncontrolling(tmp_path):
    marked = [("gatto", "gatto", "NOUN", "Case=Acc|Gender=Masc|Number=Sing", 3, "nsubj"),
              ("ने", "ने", "ADP", "_", 1, "case"),
              ("dormono", "dormire", "VERB", V3.format(n="Plur"), 0, "root")]
    r = relation_items(tmp_path, BASIC + [marked])
    assert r.filters["noncontrolling_case"] == 1


def test_low_agreement_rate_drops_the_whole_condition(tmp_path):
    """Number on subj-verb disagreeing more often than 1 in 10: nothing of it is kept."""
    odd = [[("gatto", "gatto", "NOUN", "Gender=Masc|Number=Sing", 2, "nsubj"),
            ("dormono", "dormire", "VERB", V3.format(n="Plur"), 0, "root")]] * 3
    r = relation_items(tmp_path, BASIC + odd)
    c = _counts(r)
    assert c["low_agreement_rate"] == c["agreeing"] > 0 and c["items"] == 0
    assert by_key(r).get(("det-noun", "Number", "i")) is not None   # other conditions stand


def test_elided_article_is_dropped_not_glued(tmp_path):
    elided = [("l'", "il", "DET", "Definite=Def|Gender=Masc|Number=Sing|PronType=Art", 2, "det"),
              ("albero", "albero", "NOUN", "Gender=Masc|Number=Sing", 0, "root")]
    r = relation_items(tmp_path, BASIC + [elided], lang="it")
    assert _counts(r, "det-noun", "Number")["elision"] >= 1
    assert not any("'" in it.correct or "'" in it.wrong for it in r.items)


def test_filter_columns_in_relations_tsv(tmp_path):
    r = relation_items(tmp_path, BASIC)
    for name in FILTER_NAMES + ("low_agreement_rate", "wrong_generated", "correct_more_frequent"):
        assert name in _counts(r)


def test_a_nominalised_predicate_is_no_subject_predicate_arc(tmp_path):
    """`il gatto è il migliore`: the predicate has its own determiner, it agrees with that."""
    nominal = [("gatto", "gatto", "NOUN", "Gender=Masc|Number=Sing", 4, "nsubj"),
               ("è", "essere", "AUX", V3.format(n="Sing"), 4, "cop"),
               ("il", "il", "DET", "Definite=Def|Gender=Masc|Number=Sing|PronType=Art", 4, "det"),
               ("migliore", "migliore", "ADJ", "Gender=Masc|Number=Sing", 0, "root")]
    r = relation_items(tmp_path, BASIC + [nominal])
    assert r.filters["nominalised"] == 1
    assert not any(it.relation == "subj-pred" and it.tokens[it.target_index] == "migliore" for it in r.items)


def test_a_target_lemma_that_agrees_under_90_percent_is_dropped_alone(tmp_path):
    """A determiner lemma (Romanian's genitive article al, which agrees with the possessed
    noun) agreeing in 17 of its 20 arcs is dropped, counted as low_agreement_rate; the
    relation's other determiners, which keep its rate at 95%, stay."""
    def det(form, lemma, number, noun, noun_number):
        return [(form, lemma, "DET", f"Gender=Masc|Number={number}|PronType=Art", 2, "det"),
                (noun, "gatto", "NOUN", f"Gender=Masc|Number={noun_number}", 0, "root")]
    odd = [det("al", "al", "Sing", "gatto", "Sing")] * 17 + [det("al", "al", "Sing", "gatti", "Plur")] * 3
    plain = [det("il", "il", "Sing", "gatto", "Sing")] * 20 + [det("i", "il", "Plur", "gatti", "Plur")] * 20
    r = relation_items(tmp_path, BASIC + odd + plain)
    counts = _counts(r, "det-noun", "Number")
    assert counts["low_agreement_rate"] == 17
    assert not any(it.relation == "det-noun" and it.lemma == "al" for it in r.items)
    assert any(it.relation == "det-noun" and it.lemma == "il" for it in r.items)


def test_a_wrong_article_that_fuses_with_its_preposition_is_dropped(tmp_path):
    """French `de la maison` -> `de les maison` is written `des`: dropped as elision, counted."""
    rows = [[("vue", "vue", "NOUN", "Gender=Fem|Number=Sing", 0, "root"),
             ("de", "de", "ADP", "_", 4, "case"),
             ("la", "le", "DET", "Definite=Def|Gender=Fem|Number=Sing|PronType=Art", 4, "det"),
             ("maison", "maison", "NOUN", "Gender=Fem|Number=Sing", 1, "nmod")],
            [("les", "le", "DET", "Definite=Def|Gender=Fem|Number=Plur|PronType=Art", 2, "det"),
             ("maisons", "maison", "NOUN", "Gender=Fem|Number=Plur", 0, "root")]]
    r = relation_items(tmp_path, BASIC + rows, lang="fr")
    assert _counts(r, "det-noun", "Number")["elision"] == 1
    assert any(it.wrong == "la" and it.tokens[it.cue_index] == "maisons" for it in r.items)  # les -> la stays
    assert not any(it.tokens[it.target_index - 1] == "de" and it.wrong == "les" for it in r.items)


def test_contractions_by_language():
    from treebanks.sounds import contracts
    assert contracts("de", "les", "fr") and contracts("à", "le", "fr") and not contracts("de", "la", "fr")
    assert contracts("a", "el", "es") and not contracts("de", "El", "es") and not contracts("de", "les", "en")


def test_a_wrong_form_after_a_word_elided_for_the_target_is_dropped(tmp_path):
    """French `C'est` -> `C'sont`: the elided pronoun was written for `est`; dropped as elision."""
    ce = [("C'", "ce", "PRON", "Number=Sing|Person=3|PronType=Dem", 2, "nsubj"),
          ("est", "être", "AUX", V3.format(n="Sing"), 0, "root")]
    plural = [("ils", "il", "PRON", "Number=Plur|Person=3|PronType=Prs", 2, "nsubj"),
              ("sont", "être", "AUX", V3.format(n="Plur"), 0, "root")]
    r = relation_items(tmp_path, BASIC + [ce, plural], lang="fr")
    assert not any(it.tokens[it.cue_index] == "C'" for it in r.items)
    assert _counts(r)["elision"] >= 1
    assert any(it.correct == "sont" and it.wrong == "est" for it in r.items)   # ils sont -> ils est stays
