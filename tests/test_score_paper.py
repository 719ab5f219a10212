"""Integration: `agree score` on the paper's released outputs reproduces its published
figures (Gulordava et al. 2018, Table 2 and the Italian attractor breakdown; method.md 6)."""
from __future__ import annotations

import json

import pytest

from conftest import run_agree
pytestmark = pytest.mark.integration

IT_BEST = "hidden650_batch64_dropout0.2_lr10.0"
EN_BEST = "hidden650_batch128_dropout0.2_lr20.0"


def score(tmp_path, *args):
    out = tmp_path / "out"
    r = run_agree("score", *args, "--out", str(out), "-q")
    assert r.exit_code == 0, r.stderr
    table = {line.split("\t")[0]: line.split("\t")[3:] for line in r.stdout.splitlines()[1:]}
    return table, json.loads((out / "summary.json").read_text()), r.stdout


def test_italian_model_humans_and_unigram(tmp_path, shared):
    tab = shared("colorlessgreen", "Italian", "best_model_mturk.tab")
    table, summary, stdout = score(tmp_path, tab, "--from-outputs", IT_BEST, "--humans", tab)
    assert stdout.splitlines()[0] == "model\tkind\tmodels\toriginal\tnonce"
    assert table["humans"] == ["94.5", "88.4"]
    assert table[IT_BEST] == ["93.3", "86.6"]
    assert table["unigram[freq]"] == ["54.6", "54.1"]
    assert summary["humans"]["matched_items"] == 1190
    # nonce items by number of attractors (0 / 1 / 2): humans 92.5 / 82.3 / 70.0, LSTM 91.8 / 74.9 / 68.9
    rows = summary["accuracy"] + summary["humans"]["rows"]
    cell = {(r["group"], r["value"]): round(r["accuracy"], 1)
            for r in rows if r["by"] == "attractors" and r["condition"] == "nonce"}
    assert [cell[("humans", k)] for k in (0, 1, 2)] == [92.5, 82.3, 70.0]
    # one nonce item with 0 attractors is a tie in the released output (undecidable): over the
    # 764 decidable items 91.9; counted as wrong, as the paper did, its 91.8
    assert [cell[(IT_BEST, k)] for k in (0, 1, 2)] == [91.9, 74.9, 68.9]
    zero = next(r for r in summary["accuracy"] if r["group"] == IT_BEST and r["by"] == "attractors"
                and r["condition"] == "nonce" and r["value"] == 0)
    assert (zero["items"], zero["undecidable"]) == (764, 1)
    right = round(zero["accuracy"] * zero["items"] / 100)
    assert round(100 * right / (zero["items"] + zero["undecidable"]), 1) == 91.8


def test_english_model_and_unigram(tmp_path, shared):
    tab = shared("colorlessgreen", "English", "best_model.tab")
    table, summary, _ = score(tmp_path, tab, "--from-outputs", EN_BEST)
    assert table[EN_BEST] == ["80.5", "71.8"]
    assert table["unigram[freq]"] == ["65.9", "42.5"]
    items = {r["condition"]: r["items"] for r in summary["accuracy"] if r["by"] == "all"}
    assert items == {"original": 41, "nonce": 369}


@pytest.mark.parametrize("lang,n", [("Italian", 1190), ("English", 410)])
def test_the_released_test_set_reads_the_same_items(shared, lang, n):
    """The generated.text/.gold set (read by formats.testsets.colorlessgreen) and the evaluation
    output hold the same items, so outputs, judgments and our scores line up."""
    from formats.testsets import load_testset

    tab = load_testset(shared("colorlessgreen", lang, "best_model.tab"))
    generated = load_testset(shared("colorlessgreen", lang))
    assert generated.kind == "colorlessgreen"
    key = lambda it: (it.item_id, it.variant, it.prefix, it.correct, it.wrong, it.attractors)
    assert len(tab.items) == len(generated.items) == n
    only_tab = set(map(key, tab.items)) - set(map(key, generated.items))
    only_generated = {k[:2]: k for k in set(map(key, generated.items)) - set(map(key, tab.items))}
    # The English .tab writes 13 prefixes with <unk> where generated.text has the word
    # ("Whie I do n't ..."): those match word for word elsewhere.
    assert len(only_tab) == {"Italian": 0, "English": 13}[lang]
    for k in only_tab:
        other = only_generated[k[:2]]
        assert [w for w, o in zip(k[2], other[2]) if w != o] == ["<unk>"]
        assert k[3:] == other[3:]
