"""agree swap-targets (nonce.target_swaps) and EW/MW (agreement.reporting.analysis.systematicity)."""
from __future__ import annotations

import json
import math
import random

import pytest

from conftest import run_agree
from formats.items import Item
from nonce.errors import NonceError
from nonce.pool import CandidatePool, PoolOptions
from nonce.target_swaps import make_swaps
from treebanks.paradigms import ParadigmTable
from conftest import raises_as_cli

V_SG = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
V_PL = "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"
V_PAST = "Mood=Ind|Tense=Past|VerbForm=Fin"
VERBS = ("bark", "run", "eat", "sleep", "sing", "walk")


def table() -> ParadigmTable:
    t = ParadigmTable()
    for v in VERBS:
        t.add(v + "s", v, "VERB", V_SG, 4)
        t.add(v, v, "VERB", V_PL, 4)
    t.add("grew", "grow", "VERB", V_PAST, 5)
    t.add("dog", "dog", "NOUN", "Number=Sing", 3)
    t.add("dogs", "dog", "NOUN", "Number=Plur", 3)
    return t


def item(item_id, target, feats, lemma, wrong):
    words = ("the", "dog", "that", "sings", target, ".")
    return Item(item_id=item_id, variant=0, construction="NOUN VERB VERB", direction="L", tokens=words,
                pos=("DET", "NOUN", "PRON", "VERB", "VERB", "PUNCT"),
                feats=("_", "Number=Sing", "_", V_SG, feats, "_"), correct=target, wrong=wrong,
                lemma=lemma, number="Sing", cue_index=1, target_index=4, attractors=0, punct=False)


ITEMS = [item("s1", "barks", V_SG, "bark", "bark"), item("s2", "runs", V_SG, "run", "run"),
         item("s3", "grew", V_PAST, "grow", "grow")]


def swaps(k, items=ITEMS, seed=1):
    return make_swaps(items, CandidatePool(table(), PoolOptions()), k, random.Random(seed))


def test_k_other_lemmas_only_the_target_changes():
    res = swaps(3)
    s1 = [it for it in res.items if it.item_id == "s1"]
    assert [it.variant for it in s1] == [0, 1, 2, 3]
    assert s1[0] == ITEMS[0] and s1[0].perturbation == "original"
    lemmas = [it.lemma for it in s1[1:]]
    assert len(set(lemmas)) == 3 and "bark" not in lemmas
    for it in s1[1:]:
        assert it.perturbation == "swap"
        assert it.correct == it.lemma + "s" and it.wrong == it.lemma
        assert it.tokens[:4] == ITEMS[0].tokens[:4] and it.tokens[4] == it.correct
        assert (it.attractors, it.construction, it.cue_index) == (0, "NOUN VERB VERB", 1)


def test_fewer_lemmas_than_k_and_no_pair_are_counted():
    res = swaps(20)
    counts = res.counts()
    assert counts["fewer_than_k"] == {"VERB": 2}  # 5 other lemmas each
    assert counts["no_pair"] == {"VERB": 1}  # a past tense has no number contrast
    assert counts["swaps"] == 10 and counts["originals"] == 3
    assert [it.variant for it in res.items if it.item_id == "s3"] == [0]


def test_seeded_and_independent_of_other_items():
    a = [it for it in swaps(2).items if it.item_id == "s2"]
    b = [it for it in swaps(2, items=ITEMS[1:]).items if it.item_id == "s2"]
    assert a == b
    assert swaps(2).items == swaps(2).items
    with raises_as_cli(NonceError, "swap-targets", "--k must be at least 1"):
        swaps(0)


# --------------------------------------------------------------------------- EW / MW

pytest.importorskip("scipy", reason="scipy not installed (pip install 'agree-bench[analysis]')")


def scored_dir(tmp_path, rows):
    from test_analysis import write_score_dir
    return write_score_dir(tmp_path / "s", rows)


def test_ew_equals_accuracy_when_k_is_1(tmp_path):
    from agreement.reporting.analysis.rows import scored_table
    from agreement.reporting.analysis.systematicity import systematicity

    rng = random.Random(3)
    rows = []
    for i in range(50):
        rows.append((f"i{i}", 0, "original", "N V", 0, "m", -1.0, -2.0))
        lc, lw = -rng.uniform(1, 5), -rng.uniform(1, 5)
        rows.append((f"i{i}", 1, "swap", "N V", 0, "m", lc, lw))
    (s,) = [x for x in systematicity(scored_table([scored_dir(tmp_path, rows)])) if x.construction == "all"]
    assert s.k_min == s.k_max == 1 and s.items == 50
    assert s.ew == pytest.approx(s.swap_accuracy) and s.mw == pytest.approx(s.swap_accuracy)
    assert s.accuracy == 1.0


def test_ew_and_mw_by_hand(tmp_path):
    from agreement.reporting.analysis.rows import scored_table
    from agreement.reporting.analysis.systematicity import systematicity

    ln = math.log
    rows = [  # item a: lemma 1 right (P = .3 + .1), lemma 2 wrong (P = .05 + .05): EW 1/2, MW .4/.5
        ("a", 0, "original", "N V", 0, "m", ln(0.5), ln(0.1)),
        ("a", 1, "swap", "N V", 0, "m", ln(0.3), ln(0.1)),
        ("a", 2, "swap", "N V", 0, "m", ln(0.04), ln(0.06)),
        # item b (another construction): three lemmas, all right: EW = MW = 1
        *[("b", v, "swap", "N N V", 1, "m", ln(0.2), ln(0.01 * v)) for v in (1, 2, 3)],
    ]
    res = {s.construction: s for s in systematicity(scored_table([scored_dir(tmp_path, rows)]))}
    assert res["N V"].ew == pytest.approx(0.5) and res["N V"].mw == pytest.approx(0.8)
    assert res["N N V"].ew == 1 and res["N N V"].mw == 1 and math.isnan(res["N N V"].accuracy)
    assert res["all"].ew == pytest.approx(0.75) and res["all"].mw == pytest.approx(0.9)
    assert (res["all"].items, res["all"].k_min, res["all"].k_max) == (2, 2, 3)
    assert res["all"].swap_accuracy == pytest.approx(4 / 5)


def test_swap_targets_cli_on_an_extract_dir(tmp_path, shared):

    ud = shared("ud", "en_ewt")
    res = run_agree("extract", str(ud), "--lang", "en", "--out", str(tmp_path / "x"), "--quiet")
    assert res.exit_code == 0, res.output
    for name in ("s1", "s2"):
        res = run_agree("swap-targets", str(tmp_path / "x"), "--k", "20", "--seed", "1",
                                  "--out", str(tmp_path / name), "--quiet")
        assert res.exit_code == 0, res.output
    assert (tmp_path / "s1" / "items.tsv").read_bytes() == (tmp_path / "s2" / "items.tsv").read_bytes()
    manifest = json.loads((tmp_path / "s1" / "manifest.json").read_text())
    assert manifest["command"] == "swap-targets" and manifest["counts"]["swaps"] > 0
    res = run_agree("swap-targets", str(tmp_path / "s1"), "--out", str(tmp_path / "bad"))
    assert res.exit_code == 1 and res.output.startswith("Error: ")
