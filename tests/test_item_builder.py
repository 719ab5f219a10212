"""agreement.extraction.item_builder: the one item step both arc sources feed, and
its hook points (a wrong-form source, filters with named counters), on the toy
treebank of test_extract."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agreement.extraction.constructions import table_wrong_forms
from agreement.extraction.extract import ExtractConfig, extract_items
from agreement.extraction.item_builder import (Attractors, CandidateArc, ItemBuilder, ItemFilter, Rejection,
                                               WrongChoice, default_filters)
from agreement.extraction.tree_arrays import global_heads, within_distance
from test_extract import toy_treebank
from treebanks.cache import load_columns
from treebanks.paradigms import ParadigmTable

CONSTRUCTION = ("L", ("NOUN", "VERB", "VERB"))


@pytest.fixture
def toy(tmp_path):
    path = toy_treebank(tmp_path)
    tb, _ = load_columns([path], workers=1)
    return path, tb, ParadigmTable(tb.analyses())


def subject_verb_arcs(tb):
    """The subject-verb arcs of the toy's ``sv-*`` sentences (noun 1 -> verb 6), as a source yields them."""
    for s in range(len(tb)):
        sentence = tb.sentence(s)
        if sentence.sent_id.startswith("sv-"):
            number = sentence.tokens[1].feats.split("Number=")[1].split("|")[0]
            yield CandidateArc(sentence, 1, 6, ("Number",), (number,), "NOUN VERB VERB", group=CONSTRUCTION,
                               direction="L")


def test_the_default_step_makes_the_construction_miners_items(toy):
    path, tb, table = toy
    config = ExtractConfig()
    builder = ItemBuilder(table_wrong_forms(table, config), default_filters(None), Attractors(table))
    items = builder.items(subject_verb_arcs(tb))
    mined = extract_items([path], config).items
    assert [it for it in mined if ":sv-" in it.item_id] == items
    assert builder.counts[CONSTRUCTION]["items"] == len(items) == 24


def test_a_filter_plugs_in_with_its_own_counter(toy):
    _, tb, table = toy
    config = ExtractConfig()
    elision = ItemFilter("elision", lambda arc, wrong: wrong.form.startswith("b"))  # bark / barks
    builder = ItemBuilder(table_wrong_forms(table, config), [elision, *default_filters(None)], Attractors(table))
    items = builder.items(subject_verb_arcs(tb))
    assert builder.counts[CONSTRUCTION]["elision"] == 8
    assert len(items) == 16 and not any(it.wrong.startswith("b") for it in items)


def test_a_wrong_form_source_plugs_in_and_is_recorded(toy):
    _, tb, table = toy

    def reinflect(arc):
        if arc.value == ("Plur",):
            return Rejection("no_alternative")
        form = arc.sentence.tokens[arc.target].form
        return WrongChoice(form.removesuffix("s"), value="Plur", source="model")

    builder = ItemBuilder(reinflect, default_filters(None), Attractors(table))
    items = builder.items(subject_verb_arcs(tb))
    assert builder.counts[CONSTRUCTION]["no_alternative"] == 12
    assert {(it.correct, it.wrong) for it in items} == {("barks", "bark"), ("sleeps", "sleep"), ("runs", "run")}
    assert {(it.wrong_value, it.wrong_source) for it in items} == {("Plur", "model")}


def test_a_rejection_with_detail_is_explained(toy):
    _, tb, table = toy
    builder = ItemBuilder(lambda arc: Rejection("non_contrast_difference", ("x", ["Tense"])), [], Attractors(table))
    assert builder.items(subject_verb_arcs(tb)) == []
    assert builder.counts[CONSTRUCTION] == {"non_contrast_difference": 24}
    assert "differs beyond number: 24 (e.g. barks / x: Tense" in builder.explain_rejections(CONSTRUCTION)


def test_attractors_count_only_the_allowed_values(toy):
    _, tb, table = toy
    arc = next(a for a in subject_verb_arcs(tb) if a.sentence.sent_id == "sv-Sing-0")  # the cats see: Plur between
    attractors = Attractors(table)
    assert attractors.count(arc) == 1
    assert attractors.count(dataclasses.replace(arc, contrast=frozenset({("Dual",)}))) == 0


def test_the_shared_array_steps(toy):
    _, tb, _ = toy
    sent, base, gh = global_heads(tb)
    roots = tb.heads < 0
    assert (gh[roots] == -1).all() and (gh[~roots] - base[~roots] == tb.heads[~roots]).all()
    assert (base == tb.starts[sent]).all()
    assert within_distance(np.array([1, 4, 14, 15]), 4, 14).tolist() == [False, True, True, False]
    assert within_distance(np.array([1, 4, 99]), 2, None).tolist() == [False, True, True]
