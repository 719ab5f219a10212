"""The reinflection model (treebanks.reinflect): generated cells, syncretism, the
spelling-variant guard, lexicon conflicts, determinism. Tiny inline paradigms."""
from __future__ import annotations

import random
from pathlib import Path

from treebanks.paradigms import Analysis
from treebanks.reinflect import LEMMA, Reinflector
from treebanks.reinflect_cells import contrast
from treebanks.reinflect_rules import RuleIndex, edit_rule
from treebanks.sounds import is_spelling_variant as spelling_variant
from treebanks.unimorph import Lexicon

INF = "VerbForm=Inf"
SG3 = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
PL3 = "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"
REGULAR = ("walk", "talk", "jump", "play", "cook", "look", "kick", "want", "need", "help", "start", "open")


def english(hide: str = "jump") -> dict[Analysis, int]:
    """Regular verbs with infinitive, 3sg and 3pl present (3pl = infinitive); the
    3pl of ``hide`` is not in the treebank."""
    counts = {}
    for v in REGULAR:
        counts[Analysis(v, v, "VERB", INF)] = 3
        counts[Analysis(v + "s", v, "VERB", SG3)] = 2
        if v != hide:
            counts[Analysis(v, v, "VERB", PL3)] = 1
    return counts


class TestRules:
    def test_suffix_and_prefix_edits(self):
        rule, stem = edit_rule("verify", "verifies")
        assert (rule.src_suffix, rule.dst_suffix, stem) == ("y", "ies", "verif")
        rule, _ = edit_rule("يكتب", "تكتب")   # Arabic imperfect: the prefix changes
        assert rule.apply("يلعب") == "تلعب"

    def test_longest_ending_wins_and_a_pair_can_be_left_out(self):
        index = RuleIndex()
        for a, b in [("cry", "cries"), ("try", "tries"), ("play", "plays"), ("stay", "stays")]:
            index.add("x", a, b)
        assert index.apply("x", "fry")[0] == "fries"
        assert index.apply("x", "pray")[0] == "prays"
        # "stay" left out, "ay" -> "ays" still comes from "play"
        assert index.apply("x", "stay", exclude=("stay", "stays"))[0] == "stays"


class TestReinflector:
    def test_hidden_cell_is_generated(self):
        model = Reinflector.train(english())
        g = model.form_of("jump", "VERB", PL3)
        assert g is not None and g.form == "jump" and g.origin == "generated"
        assert g.reliability >= 0.95 and g.support >= 10
        assert model.form_of("walk", "VERB", PL3).origin == "attested"

    def test_form_to_form_rule(self):
        model = Reinflector.train(english())
        g = model.reinflect("jumps", "jump", "VERB", SG3, PL3)
        assert g is not None and g.form == "jump" and g.rule == "-s->∅"

    def test_held_out_accuracy(self):
        rows = {(r.upos, r.feature): r for r in Reinflector.train(english()).held_out()}
        row = rows["VERB", "Number"]
        assert row.tests == 2 * (len(REGULAR) - 1) and row.accuracy == 1.0

    def test_syncretism_found(self):
        model = Reinflector.train(english())
        found = {(s.cell_a, s.cell_b) for s in model.syncretisms()}
        assert (PL3, INF) in found
        assert not any(SG3 in pair for pair in found)

    def test_analyses_include_generated_cells(self):
        model = Reinflector.train(english())
        readings = {(r.feats, r.origin) for r in model.analyses("jump", "VERB")}
        assert readings == {(INF, "attested"), (PL3, "generated")}
        assert {r.feats for r in model.analyses("jumps", "VERB")} == {SG3}
        assert {r.feats for r in model.analyses("Jump", "VERB")} == {INF, PL3}   # sentence-initial

    def test_unreliable_class_generates_nothing(self):
        counts = english()
        for v in REGULAR[3:9]:   # half the verbs now make their 3pl otherwise
            counts.pop(Analysis(v, v, "VERB", PL3))
            counts[Analysis(v + "en", v, "VERB", PL3)] = 1
        model = Reinflector.train(counts)
        assert model.form_of("jump", "VERB", PL3) is None

    def test_one_form_per_lemma_gives_no_rules(self):
        counts = {Analysis(w, w, "NOUN", "Number=Sing"): 2 for w in ("ka", "pe", "lu", "mo")}
        model = Reinflector.train(counts)
        assert all(change[1] == LEMMA for change in model.index.changes())
        assert model.held_out() == [] and model.syncretisms() == []
        assert model.form_of("ka", "NOUN", "Number=Plur") is None

    def test_deterministic(self):
        rows = list(english().items())
        a = Reinflector.train(dict(rows))
        random.Random(3).shuffle(rows)
        b = Reinflector.train(dict(rows))
        assert a.index._rules == b.index._rules and a.stats == b.stats and a.held_out() == b.held_out()

    def test_sentence_initial_capitals_are_not_learned(self):
        counts = english()
        counts[Analysis("Walks", "walk", "VERB", SG3)] = 9   # more often sentence-initial than not
        model = Reinflector.train(counts)
        assert model.main_forms("walk", "VERB")[SG3] == "walks"

    def test_contrast(self):
        assert contrast(SG3, PL3) == "Number"
        assert contrast(INF, PL3) == ""
        assert contrast("Gender=Masc|Number=Sing", "Gender=Fem|Number=Plur") == "Number"


class TestGuard:
    def test_spelling_variants(self):
        assert spelling_variant("muss", "muß")
        assert spelling_variant("Є", "є")
        assert spelling_variant("haven't", "havent")
        assert spelling_variant("e-mail", "email")
        assert not spelling_variant("walk", "walks")
        assert not spelling_variant("walk", "walk")

    def test_guard_refuses_variant_and_rare_spelling(self):
        counts = english()
        counts[Analysis("muss", "müssen", "VERB", SG3)] = 5
        counts[Analysis("muß", "müssen", "VERB", SG3)] = 1
        counts[Analysis("müssen", "müssen", "VERB", PL3)] = 4
        model = Reinflector.train(counts)
        assert "spelling variant" in model.guard("muss", "muß", "müssen", "VERB", SG3)
        assert "most frequent" in model.guard("müssen", "muß", "müssen", "VERB", SG3)
        assert model.guard("müssen", "muss", "müssen", "VERB", SG3) == ""
        assert model.guard("müssen", "Muss", "müssen", "VERB", SG3) == ""   # sentence-initial


class TestLexicon:
    def test_conflicting_forms_are_left_out(self):
        lex = Lexicon(Path("lex.tsv"), cells={
            ("run", "VERB"): [("runs", {"Number": "Sing", "Person": "3"}), ("runnes", {"Number": "Sing", "Person": "3"}),
                              ("run", {"Number": "Plur", "Person": "3"})],
            ("walk", "VERB"): [("walkes", dict(Mood="Ind", Number="Sing", Person="3", Tense="Pres",
                                               VerbForm="Fin"))]})
        model = Reinflector.train(english(), lexicon=lex)
        assert model.lexicon_conflicts == 1
        assert model.form_of("run", "VERB", "Number=Sing|Person=3") is None or \
            model.form_of("run", "VERB", "Number=Sing|Person=3").origin != "lexicon"
        assert model.form_of("run", "VERB", "Number=Plur|Person=3").origin == "lexicon"
        assert model.form_of("walk", "VERB", SG3).form == "walks"   # the treebank's own form wins


def test_misspellings_are_no_cells():
    counts = english()
    counts[Analysis("walkz", "walk", "VERB", "Mood=Ind|Number=Plur|Person=3|Tense=Pres|Typo=Yes|VerbForm=Fin")] = 1
    model = Reinflector.train(counts)
    assert all("Typo" not in feats for feats in model.main_forms("walk", "VERB"))
