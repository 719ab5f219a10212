"""Scoring what the new readers give: the target method over a contiguous differing span,
and SyntaxGym's own predictions beside the whole-sentence pairs (``agree score``)."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from agreement.scoring.span import differing_span, span_logprobs, target_span
from formats.testsets import load_testset
from lm.load import load_model

from conftest import run_agree, tiny_corpus

LINES = (["le chien est petit ."] * 5 + ["les chiens sont petits ."] * 4 + ["le chien court ."] * 3
         + ["les chiens courent ."] * 2 + ["the dog runs ."] * 4 + ["the dogs run ."] * 3
         + ["the dog often runs ."] * 2 + ["no dogs have ever run ."] * 2)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A 3-gram KenLM model of a tiny French and English corpus (a unigram one without KenLM)."""
    from lm.corpus.prepare import load_corpus
    from lm.errors import LMError
    from lm.unigram import train_unigram

    root = tmp_path_factory.mktemp("span-model")
    corpus = tiny_corpus(root / "corpus", LINES, lang="fr")
    try:
        from lm.kenlm.scorer import train_kn5

        train_kn5(load_corpus(corpus), root / "kn", order=3)
        return root / "kn"
    except (ImportError, LMError):
        train_unigram(load_corpus(corpus), root / "uni")
        return root / "uni"


def clams(root):
    d = root / "fr_evalset"
    d.mkdir(parents=True)
    (d / "simple_agrmt.txt").write_text(
        "True\tle chien est petit\nFalse\tle chien sont petits\n"   # two contiguous words
        "True\tles chiens courent\nFalse\tles chiens court\n"        # one word
        "True\tno dogs have ever run\nFalse\tthe dogs have no run\n", encoding="utf-8")  # not contiguous
    return d


def test_differing_span_rule():
    assert differing_span("a b c d".split(), "a x y d".split()) == (1, 3, 3)
    assert differing_span("a b".split(), "a b c".split()) == (2, 2, 3)
    assert differing_span("le chien est petit".split(), "le chien sont petits".split()) == (2, 4, 4)


def test_span_scores_are_the_product_over_the_span(tmp_path, model):
    ts = load_testset(clams(tmp_path))
    items = {" ".join(it.tokens): it for it in ts.items}
    two, one, apart = (items["le chien est petit"], items["les chiens courent"], items["no dogs have ever run"])
    assert target_span(two) == (2, 4, 4) and target_span(one) is None and target_span(apart) is None
    scorer = load_model(model)
    (got,) = span_logprobs(scorer, [two], [target_span(two)])
    good, bad = scorer.word_logprobs([list(two.tokens), list(two.extra["wrong_tokens"])])
    assert np.allclose(got, [good[2:4].sum(), bad[2:4].sum()])
    # P(est petit | le chien) = P(est | le chien) P(petit | le chien est)
    ref = scorer.logprob([["le", "chien"], ["le", "chien", "est"]], [["est"], ["petit"]])[:, 0]
    assert got[0] == pytest.approx(ref.sum())


def test_target_method_scores_contiguous_spans_and_says_so(tmp_path, model):
    d = clams(tmp_path)
    r = run_agree("score", d, "--model", model, "--out", tmp_path / "t")
    assert r.exit_code == 0, r.stderr
    rows = list(csv.DictReader(open(tmp_path / "t" / "items.tsv", encoding="utf-8"), delimiter="\t"))
    assert sorted(r["item_id"] for r in rows) == ["fr:simple_agrmt:0", "fr:simple_agrmt:1"]
    md = (tmp_path / "t" / "summary.md").read_text()
    assert (f"Note: {d}: 2 of 3 pairs differ in more than one word; 1 of them, whose differing words are "
            "contiguous, are scored over that span") in md
    assert f"Note: {d}: 1 of 3 pairs skipped by the target method" in md
    r = run_agree("score", d, "--model", model, "--method", "sentence", "--out", tmp_path / "s")
    assert r.exit_code == 0, r.stderr
    assert "2 of 3 pairs differ in more than one word (scored, as every pair, as whole sentences)" in \
        (tmp_path / "s" / "summary.md").read_text()


def suite_file(path):
    conditions = {"match_sing": ("dog", "runs"), "mismatch_sing": ("dog", "run"),
                  "match_plural": ("dogs", "run"), "mismatch_plural": ("dogs", "runs")}
    items = [{"item_number": n, "conditions": [
        {"condition_name": c, "regions": [{"region_number": 1, "content": "the"},
                                          {"region_number": 2, "content": noun},
                                          {"region_number": 3, "content": adv},
                                          {"region_number": 4, "content": verb + " ."}]}
        for c, (noun, verb) in conditions.items()]} for n, adv in ((1, ""), (2, "often"))]
    formula = "[(4;%match_sing%) < (4;%mismatch_sing%)] & [(4;%match_plural%) < (4;%mismatch_plural%)]"
    path.write_text(json.dumps({"meta": {"name": "tiny_number", "metric": "sum"},
                                "region_meta": {"1": "the", "2": "np", "3": "adv", "4": "verb"},
                                "predictions": [{"type": "formula", "formula": formula},
                                                {"type": "formula", "formula": "(*;%match_sing%) < 1000"}],
                                "items": items}, indent=2))
    return path


def test_syntaxgym_predictions_beside_the_pairs(tmp_path, model):
    """A prediction comparing one-word regions holds exactly when both of its pairs are
    right under the target method (the region's surprisal is the word's)."""
    path = suite_file(tmp_path / "tiny.json")
    r = run_agree("score", path, "--model", model, "--out", tmp_path / "o")
    assert r.exit_code == 0, r.stderr
    out = tmp_path / "o"
    rows = list(csv.DictReader(open(out / "items.tsv", encoding="utf-8"), delimiter="\t"))
    right = {(r["item_id"].split(":")[1], r["item_id"].split(":")[2]): r["correct"] == "1" for r in rows}
    preds = list(csv.DictReader(open(out / "predictions.tsv", encoding="utf-8"), delimiter="\t"))
    assert len(preds) == 2 * 2
    for p in preds:
        if p["prediction"] == "1":
            both = right[(p["item"], "match_sing>mismatch_sing")] and right[(p["item"], "match_plural>mismatch_plural")]
            assert (p["holds"] == "1") == both
        else:
            assert p["holds"] == "1"
    summary = json.loads((out / "summary.json").read_text())
    table = {(r["prediction"], r["model"]): r for r in summary["syntaxgym"]}
    assert set(p for p, _ in table) == {"1", "2", "all"}
    assert table[("2", model.name)]["accuracy"] == 100.0
    assert "## SyntaxGym predictions" in (out / "summary.md").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["prediction_rows"] == 4
