"""``agree extract`` on the real treebanks in ../shared/data (skipped when absent):
the figures method.md section 2 states for UD English EWT 2.16 and Italian."""
from __future__ import annotations

import pytest

from formats.testsets.colorlessgreen import read_colorlessgreen
from agreement.extraction.extract import ExtractConfig, extract_items
from conftest import run_agree, shared_path

pytestmark = pytest.mark.integration

EN_REJECTED = "R VERB NOUN CCONJ VERB"


@pytest.fixture(scope="module")
def english():
    return extract_items([shared_path("ud", "en_ewt")], ExtractConfig(explain=(EN_REJECTED,)))


def test_english_relative_clause_construction_kept(english):
    """L NOUN VERB VERB passes every filter: Sing>Sing 24, Plur>Plur 12."""
    assert english.sentences == 16622
    kept = {c.name: c for c in english.report.kept}
    sv = kept["L NOUN VERB VERB"]
    assert dict(((cv, tv), n) for cv, tv, n in sv.pairs if n > 1) == {("Sing", "Sing"): 24, ("Plur", "Plur"): 12}
    items = [it for it in english.items if it.construction == "NOUN VERB VERB"]
    assert len(items) == english.report.item_counts[("L", ("NOUN", "VERB", "VERB"))] > 10
    for it in items:
        assert it.correct == it.tokens[it.target_index] != it.wrong
        assert it.target_index - it.cue_index >= 4 and it.pos[it.cue_index] == "NOUN"


def test_english_coordination_construction_rejected_with_reason(english):
    """R VERB NOUN CCONJ VERB: coordinated verbs with different subjects (Plur>Sing
    twice) make H(cue | target) > 0 on this release."""
    c = {c.name: c for c in english.report.constructions}[EN_REJECTED]
    assert not c.kept and ("Plur", "Sing", 2) in c.pairs and c.entropy > 0.001
    text = english.report.explanations[0]
    assert text.startswith(f"{EN_REJECTED}: REJECTED") and "Plur>Sing 2" in text and "FAILS" in text


def test_italian_about_eight_constructions():
    r = extract_items([shared_path("ud", "it_isdt"), shared_path("ud", "it_partut")], ExtractConfig(min_count=5))
    assert 6 <= len(r.report.kept) <= 10
    assert {"L NOUN VERB VERB", "L DET ADJ NOUN"} <= {c.name for c in r.report.kept}
    assert len(r.items) > 80


def test_cli_on_english_with_explain(tmp_path):
    r = run_agree("extract", str(shared_path("ud", "en_ewt", "en_ewt-ud-dev.conllu")),
                                 "--out", str(tmp_path / "o"), "-q", "--min-count", "2", "--explain", EN_REJECTED)
    assert r.exit_code == 0, r.output
    assert f"{EN_REJECTED}: " in r.output and (tmp_path / "o" / "items.tsv").is_file()


@pytest.mark.parametrize("lang, rows, originals", [("English", 410, 41), ("Italian", 1190, 119)])
def test_read_the_papers_test_sets(lang, rows, originals):
    items = read_colorlessgreen(shared_path("colorlessgreen", lang))
    assert len(items) == rows
    assert sum(it.variant == 0 for it in items) == len({it.item_id for it in items}) == originals
    assert all(it.tokens[it.target_index] == it.correct and it.number in ("Sing", "Plur") for it in items)
    assert {it.perturbation for it in items} == {"original", "nonce"}
