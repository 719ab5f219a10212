"""``agree export``: items as BLiMP jsonl / MultiBLiMP TSV, and the round trip
export -> ``agree score`` giving the accuracies of the items themselves."""
from __future__ import annotations

import json

import pytest

from formats.testsets.blimp import read_blimp
from conftest import run_agree
from formats.items import Item, write_items

from test_minimal_pairs import count_models  # noqa: F401  (fixture)


def invoke(*args):
    return run_agree(*args)


def item(i, variant, prefix, correct, wrong, perturbation=None, attractors=0):
    tokens = tuple(prefix.split()) + (correct, ".")
    return Item(f"i{i}", variant, "NOUN VERB" if attractors == 0 else "NOUN ADP NOUN VERB", "L",
                tokens, ("_",) * len(tokens), ("_",) * len(tokens), correct, wrong, "_", "Sing", 1,
                len(tokens) - 2, attractors, False,
                perturbation or ("original" if variant == 0 else "nonce"))


ITEMS = [item(0, 0, "the dog", "runs", "run"), item(0, 1, "the cats", "run", "runs"),
         item(1, 0, "the dogs", "run", "runs"),
         item(2, 0, "the dog near the cats", "runs", "run", attractors=1),
         item(2, 1, "the cats near the dog", "run", "runs", attractors=1),
         item(2, 0, "the dog near teh cats", "runs", "run", "qwerty:0.2", attractors=1)]


@pytest.fixture
def testset(tmp_path):
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", ITEMS)
    return tmp_path / "ext"


def test_blimp_files_and_fields(tmp_path, testset):
    r = invoke("export", testset, "--format", "blimp", "--out", tmp_path / "b", "-q")
    assert r.exit_code == 0, r.stderr
    names = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert names == ["L_NOUN_ADP_NOUN_VERB_nonce.jsonl", "L_NOUN_ADP_NOUN_VERB_original.jsonl",
                     "L_NOUN_ADP_NOUN_VERB_qwerty_0_2.jsonl", "L_NOUN_VERB_nonce.jsonl",
                     "L_NOUN_VERB_original.jsonl", "manifest.json"]
    row = json.loads((tmp_path / "b" / "L_NOUN_VERB_original.jsonl").read_text().splitlines()[0])
    assert {k: row[k] for k in ("sentence_good", "sentence_bad", "UID", "one_prefix_method",
                                "one_prefix_prefix", "one_prefix_word_good", "one_prefix_word_bad",
                                "pairID")} == {
        "sentence_good": "the dog runs.", "sentence_bad": "the dog run.", "UID": "L_NOUN_VERB_original",
        "one_prefix_method": True, "one_prefix_prefix": "the dog", "one_prefix_word_good": "runs",
        "one_prefix_word_bad": "run", "pairID": "0"}
    back = sorted(read_blimp(tmp_path / "b"), key=lambda it: (it.item_id, it.variant, it.perturbation))
    ours = sorted(ITEMS, key=lambda it: (it.item_id, it.variant, it.perturbation))
    assert [(b.item_id, b.variant, b.perturbation, b.construction, b.tokens, b.correct, b.wrong,
             b.target_index, b.attractors, b.cue_index) for b in back] == \
        [(a.item_id, a.variant, a.perturbation, a.construction, a.tokens, a.correct, a.wrong,
          a.target_index, a.attractors, a.cue_index) for a in ours]
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["counts"]["pairs"] == len(ITEMS)


@pytest.mark.parametrize("fmt", ["blimp", "multiblimp"])
def test_round_trip_gives_the_same_accuracies(tmp_path, testset, count_models, fmt):
    r = invoke("export", testset, "--format", fmt, "--out", tmp_path / "x", "-q")
    assert r.exit_code == 0, r.stderr
    models = [a for m in count_models if m is not None for a in ("--model", m)]
    for method in ("target", "sentence"):
        direct = invoke("score", testset, *models, "--method", method, "--out", tmp_path / "d", "-q")
        trip = invoke("score", tmp_path / "x", *models, "--method", method, "--out", tmp_path / "t", "-q")
        assert direct.exit_code == 0 and trip.exit_code == 0, (direct.stderr, trip.stderr)
        assert trip.stdout == direct.stdout
        assert len(trip.stdout.splitlines()) == 1 + len(models) // 2
        rows = [json.loads((tmp_path / d / "summary.json").read_text())["accuracy"] for d in ("d", "t")]
        by_construction = [[(r["group"], r["condition"], r["value"], r["items"], r["accuracy"])
                            for r in rs if r["by"] == "construction"] for rs in rows]
        assert by_construction[0] == by_construction[1] and by_construction[0]


def test_multiblimp_columns(tmp_path, testset):
    r = invoke("export", testset, "--format", "multiblimp", "--lang", "eng", "--out", tmp_path / "m", "-q")
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [
        "manifest.json", "nonce.tsv", "original.tsv", "qwerty_0.2.tsv"]
    header, first = (tmp_path / "m" / "original.tsv").read_text().splitlines()[:2]
    row = dict(zip(header.split("\t"), first.split("\t")))
    assert {k: row[k] for k in ("sen", "wrong_sen", "verb", "wrong_verb", "verb_idx", "lang", "phenomenon",
                                "grammatical_feature", "ungrammatical_feature", "child", "child_idx")} == {
        "sen": "the dog runs.", "wrong_sen": "the dog run.", "verb": "runs", "wrong_verb": "run",
        "verb_idx": "2", "lang": "eng", "phenomenon": "NOUN VERB/original", "grammatical_feature": "Sing",
        "ungrammatical_feature": "Plur", "child": "dog", "child_idx": "1"}


def test_help_and_bad_testset(tmp_path):
    r = invoke("export", "--help")
    assert r.exit_code == 0 and "Example:" in r.stdout and "--format" in r.stdout
    r = invoke("export", tmp_path / "missing", "--format", "blimp", "--out", tmp_path / "o")
    assert r.exit_code == 1 and r.stderr.startswith("Error: ") and "Traceback" not in r.output
    assert not (tmp_path / "o").exists()
