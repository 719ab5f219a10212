"""agreement.scoring.score and formats.testsets.papertab: scoring items, model specs, the paper's files."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from agreement.errors import AgreeError
from formats.testsets import detect_testset, load_testset
from formats.testsets.papertab import FREQ_MODEL, freq_baseline, read_paper_tab, scores_from_column
from formats.items import Item, write_items
from formats.scored import SCORED_COLUMNS, ScoredTable, condition, write_scored
from agreement.scoring.score import score_items
from lm.load import parse_model_specs
from lm.base import Scorer
from lm.errors import LMError


class BigramScorer(Scorer):
    """A test double of the Scorer interface: log P(word | last prefix word) from a table."""

    def __init__(self, name, table, vocab, kind="lstm"):
        self.name, self.kind, self.table, self.vocab = name, kind, table, set(vocab)
        self.calls = []

    def logprob(self, prefixes, targets):
        self.calls.append(len(prefixes))
        return np.array([[self.table.get((p[-1] if p else "<eos>", t), -10.0) for t in ts]
                         for p, ts in zip(prefixes, targets)], dtype=np.float64)

    def in_vocab(self, word):
        return word in self.vocab


def item(item_id, prefix, correct, wrong, variant=0, construction="NOUN VERB", attractors=0,
         perturbation="original"):
    tokens = tuple(prefix.split()) + (correct,)
    return Item(item_id, variant, construction, "L", tokens, ("_",) * len(tokens), ("_",) * len(tokens),
                correct, wrong, "_", "Sing", 0, len(tokens) - 1, attractors, False, perturbation)


ITEMS = [item("a", "the dog", "runs", "run"), item("b", "the dogs", "run", "runs"),
         item("c", "the zyx", "runs", "run")]
TABLE = {("dog", "runs"): -1.0, ("dog", "run"): -2.0, ("dogs", "run"): -3.0, ("dogs", "runs"): -2.5,
         ("zyx", "runs"): -1.0, ("zyx", "run"): -1.0}
VOCAB = {"the", "dog", "dogs", "runs", "run"}


class TestScoreItems:
    def test_correct_means_strictly_more_probable(self):
        scored = score_items(ITEMS, [BigramScorer("m", TABLE, VOCAB)])
        assert list(zip(scored.item_id, scored.logp_correct.tolist(), scored.logp_wrong.tolist(), scored.correct.tolist())) == [
            ("a", -1.0, -2.0, True), ("b", -3.0, -2.5, False), ("c", -1.0, -1.0, False)]  # a tie is not correct (undecidable)

    def test_oov_flags_cover_prefix_and_both_forms(self):
        scored = score_items(ITEMS, [BigramScorer("m", TABLE, VOCAB - {"run"})])
        assert scored.oov.tolist() == [True, True, True]
        scored = score_items(ITEMS, [BigramScorer("m", TABLE, VOCAB)])
        assert scored.oov.tolist() == [False, False, True]  # "zyx" in the prefix

    def test_require_in_vocab_keeps_items_every_model_covers(self):
        m1 = BigramScorer("m1", TABLE, VOCAB | {"zyx"})
        m2 = BigramScorer("m2", TABLE, VOCAB - {"dogs"})
        scored = score_items(ITEMS, [m1, m2], require_in_vocab=True)
        assert list(zip(scored.model, scored.item_id)) == [("m1", "a"), ("m2", "a")]

    def test_require_in_vocab_with_nothing_left(self):
        with pytest.raises(AgreeError, match="no item is fully in the vocabulary of every model"):
            score_items(ITEMS[2:], [BigramScorer("m", TABLE, VOCAB)], require_in_vocab=True)

    def test_no_shared_target_form_is_an_error(self):
        with pytest.raises(AgreeError) as e:
            score_items(ITEMS, [BigramScorer("it-model", {}, {"il", "cane", "corre"})])
        assert str(e.value) == ("model it-model knows none of the 2 target forms of the test set "
                                "(e.g. run, runs): is it a model of another language or vocabulary?")

    def test_groups_testsets_and_chunks(self):
        scorer = BigramScorer("m", TABLE, VOCAB)
        scored = score_items(ITEMS, [scorer], groups={"m": "lstm-650"},
                             testsets=["x", "y", "y"], chunk_size=2)
        assert scorer.calls == [2, 1]
        assert set(scored.group) == {"lstm-650"}
        assert scored.testset.tolist() == ["x", "y", "y"]

    def test_wrong_shape_from_a_scorer(self):
        class Broken(BigramScorer):
            def logprob(self, prefixes, targets):
                return np.zeros((len(prefixes), 3))
        with pytest.raises(AgreeError, match=r"scorer returned shape \(3, 3\), expected \(3, 2\)"):
            score_items(ITEMS, [Broken("m", TABLE, VOCAB)])


class TestScoredTable:
    def test_share_is_logistic_of_log_odds(self):
        s = ScoredTable.of_items(ITEMS[:3], model="m", group="m", kind="lstm",
                                 logp_correct=[math.log(0.3), float("-inf"), float("nan")],
                                 logp_wrong=[math.log(0.1), 0.0, 0.0])
        assert s.p_correct_share.tolist() == pytest.approx([0.75, 0.0, 0.5])
        assert s.undecidable.tolist() == [False, False, True] and s.correct.tolist() == [True, False, False]

    def test_condition(self):
        assert condition(item("a", "x", "y", "z")) == "original"
        assert condition(item("a", "x", "y", "z", variant=3, perturbation="nonce")) == "nonce"
        assert condition(item("a", "x", "y", "z", variant=3, perturbation="qwerty:0.2")) == "qwerty:0.2"

    def test_scored_tsv_columns(self, tmp_path):
        scored = score_items(ITEMS[:1], [BigramScorer("m", TABLE, VOCAB)], testsets=["t"])
        write_scored(tmp_path / "items.tsv", scored)
        header, row = (tmp_path / "items.tsv").read_text().splitlines()
        assert header.split("\t") == list(SCORED_COLUMNS)
        assert row.split("\t") == ["a", "0", "original", "NOUN VERB", "0", "m", "-1.0", "-2.0", "1", "0",
                                   "lstm", "t", "target", "0"]


def model_dir(path, kind="unigram", **config):
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"kind": kind, **config}))
    return path


class TestModelSpecs:
    def test_explicit_group_glob_and_unique_names(self, tmp_path):
        """GROUP= labels a glob's models together; without it a model's label is its
        directory's name, made unique (two ``model`` directories stay apart)."""
        for seed in (1, 2):
            model_dir(tmp_path / "runs" / f"seed{seed}", "lstm", size=650, seed=seed)
        model_dir(tmp_path / "a" / "model", "unigram")
        model_dir(tmp_path / "b" / "model", "unigram")
        specs = parse_model_specs([f"best={tmp_path}/runs/seed*", str(tmp_path / "a" / "model"),
                                   str(tmp_path / "b" / "model")])
        assert [(s.name, s.group, s.kind) for s in specs] == [
            ("seed1", "best", "lstm"), ("seed2", "best", "lstm"),
            ("a/model", "a/model", "unigram"), ("b/model", "b/model", "unigram")]

    def test_glob_without_match(self, tmp_path):
        with pytest.raises(LMError, match="no directory matches"):  # the spec's layer: lm
            parse_model_specs([f"x={tmp_path}/nothing*"])

    def test_not_a_model_directory(self, tmp_path):
        with pytest.raises(LMError, match="not a model directory"):
            parse_model_specs([str(tmp_path)])


PAPER_HEADER = ("pattern\tconstr_id\tsent_id\tcorrect_number\tform\tclass\ttype\tprefix\tn_attr\tpunct\t"
                "freq\tlen_context\tlen_prefix\tsent\tm1")


def paper_tab(tmp_path, rows=None):
    rows = rows or [
        'R__NOUN_VERB\t4\t0\tplur\tare\tcorrect\toriginal\tThe "big" dogs\t1\tTrue\t50\t2\t3\t"The ""big"" dogs sleep soundly . <eos>"\t-2.0',
        'R__NOUN_VERB\t4\t0\tplur\tis\twrong\toriginal\tThe "big" dogs\t1\tTrue\t90\t2\t3\t"The ""big"" dogs sleep soundly . <eos>"\t-3.0',
        "R__NOUN_VERB\t4\t1\tplur\tis\twrong\tgenerated\tA red cats\t1\tFalse\t90\t2\t3\tA red cats nap . <eos>\t-1.0",
        "R__NOUN_VERB\t4\t1\tplur\tare\tcorrect\tgenerated\tA red cats\t1\tFalse\t50\t2\t3\tA red cats nap . <eos>\t-4.0",
    ]
    path = tmp_path / "best_model.tab"
    path.write_text(PAPER_HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


class TestPaperTab:
    def test_items_from_row_pairs(self, tmp_path):
        table = read_paper_tab(paper_tab(tmp_path))
        assert table.model_columns == ("m1",)
        first, second = table.items
        assert (first.item_id, first.variant, first.construction, first.direction) == (
            "R__NOUN_VERB:4", 0, "NOUN VERB", "R")
        assert first.prefix == ("The", '"big"', "dogs") and first.tokens[3:] == ("are", "soundly", ".")
        assert (first.correct, first.wrong, first.number, first.attractors, first.punct) == (
            "are", "is", "Plur", 1, True)
        assert first.cue_index == 1  # len_context counts the cue: target 3 - 2
        assert (second.variant, second.perturbation, second.correct) == (1, "nonce", "are")
        assert table.values["m1"] == ((-2.0, -3.0), (-4.0, -1.0))  # wrong row first is fine

    def test_column_and_freq_scores(self, tmp_path):
        table = read_paper_tab(paper_tab(tmp_path))
        assert scores_from_column(table, "m1").correct.tolist() == [True, False]
        base = freq_baseline(table)
        assert list(zip(base.model, base.kind, base.correct.tolist())) == [(FREQ_MODEL, "unigram", False)] * 2
        assert base.logp_correct[0] == pytest.approx(math.log(50))

    def test_unknown_column_lists_the_model_columns(self, tmp_path):
        path = paper_tab(tmp_path)
        with pytest.raises(AgreeError) as e:
            scores_from_column(read_paper_tab(path), "hidden650")
        assert str(e.value) == f"{path}: no model column 'hidden650' (model columns: m1)"

    def test_unpaired_row(self, tmp_path):
        path = paper_tab(tmp_path, [
            "R__NOUN_VERB\t4\t0\tplur\tare\tcorrect\toriginal\tThe dogs\t0\tFalse\t5\t1\t2\tx\t-1",
            "R__NOUN_VERB\t4\t1\tplur\tare\tcorrect\tgenerated\tA cats\t0\tFalse\t5\t1\t2\tx\t-1",
            "R__NOUN_VERB\t4\t1\tplur\tis\twrong\tgenerated\tA cats\t0\tFalse\t5\t1\t2\tx\t-1"])
        with pytest.raises(AgreeError, match=r"best_model.tab:2: sentence R__NOUN_VERB:4:0 has no wrong row"):
            read_paper_tab(path)

    def test_bad_number(self, tmp_path):
        path = paper_tab(tmp_path, [
            "R__NOUN_VERB\t4\t0\tplur\tare\tcorrect\toriginal\tThe dogs\t0\tFalse\t5\t1\t2\tx\tNaNa",
            "R__NOUN_VERB\t4\t0\tplur\tis\twrong\toriginal\tThe dogs\t0\tFalse\t5\t1\t2\tx\t-1"])
        with pytest.raises(AgreeError, match=r"best_model.tab:2: column 'm1' holds 'NaNa', not a number"):
            read_paper_tab(path)


class TestDetect:
    def test_kinds(self, tmp_path):
        (tmp_path / "ext").mkdir()
        write_items(tmp_path / "ext" / "items.tsv", ITEMS)
        cg = tmp_path / "cg"
        cg.mkdir()
        for ext in ("text", "gold", "eval"):
            (cg / f"generated.{ext}").write_text("")
        tab = paper_tab(tmp_path)
        assert detect_testset(tmp_path / "ext") == ("items", tmp_path / "ext" / "items.tsv")
        assert detect_testset(tmp_path / "ext" / "items.tsv")[0] == "items"
        assert detect_testset(cg) == ("colorlessgreen", cg / "generated")
        assert detect_testset(cg / "generated") == ("colorlessgreen", cg / "generated")
        assert detect_testset(cg / "generated.gold") == ("colorlessgreen", cg / "generated")
        assert detect_testset(tab) == ("paper-tab", tab)
        assert [i.item_id for i in load_testset(tmp_path / "ext").items] == ["a", "b", "c"]

    def test_not_a_test_set(self, tmp_path):
        (tmp_path / "x.txt").write_text("hello\n")
        with pytest.raises(AgreeError, match=r"x.txt: not a test set: it is a text file whose first "
                                             r"line is 'hello'; for .txt files agree reads clams"):
            detect_testset(tmp_path / "x.txt")
