"""agreement.reporting.humans: both judgment formats, joining them to items, model-human agreement."""
from __future__ import annotations

import pytest

from agreement.errors import AgreeError
from agreement.reporting.humans import HumanIndex, model_human_agreement
from formats.humans import read_humans
from formats.items import Item
from tests.scored_rows import row, table

TAB_HEADER = ["pattern", "constr_id", "sent_id", "correct_number", "form", "class", "type", "prefix",
              "n_attr", "punct", "freq", "len_context", "len_prefix", "sent", "full_id", "mturk_count"]


def tab_rows(with_counts: bool = True) -> str:
    """A two-sentence paper .tab: an original and one nonce variant of it."""
    sentences = [  # sent_id, type, prefix, correct, wrong, votes correct, votes wrong
        (0, "original", "il cane che vedo", "corre", "corrono", 9, 1),
        (1, "generated", "il gatto che mangio", "dorme", "dormono", 6, 4),
    ]
    header = TAB_HEADER if with_counts else TAB_HEADER[:-1]
    lines = ["\t".join(header)]
    for sid, typ, prefix, c, w, vc, vw in sentences:
        for form, cls, votes in ((c, "correct", vc), (w, "wrong", vw)):
            row = ["L__NOUN_VERB_VERB", "3", str(sid), "sing", form, cls, typ, prefix, "0", "False",
                   "10", "4", "4", f"{prefix} {c} . <eos>", f"x__3__{sid}", f"{votes}.0"]
            lines.append("\t".join(row if with_counts else row[:-1]))
    return "\n".join(lines) + "\n"


def make_item(item_id="a", variant=0, prefix=("il", "cane", "che", "vedo"), correct="corre",
              wrong="corrono", perturbation="original") -> Item:
    tokens = tuple(prefix) + (correct,)
    return Item(item_id, variant, "NOUN VERB VERB", "L", tokens, ("_",) * len(tokens),
                ("_",) * len(tokens), correct, wrong, "correre", "Sing", 1, len(prefix), 0, False,
                perturbation)


class TestReadHumans:
    def test_our_tsv(self, tmp_path):
        path = tmp_path / "votes.tsv"
        path.write_text("item_id\tvariant\tvotes_correct\tvotes_wrong\tnote\n"
                        "a\t0\t9\t1\tx\nb\t2\t3\t7\t\nc\t0\t0\t0\t\n", encoding="utf-8")
        js = read_humans(path)
        assert [(j.item_id, j.variant, j.share_correct) for j in js] == [("a", 0, 0.9), ("b", 2, 0.3)]
        assert [j.majority for j in js] == [True, False]

    def test_paper_mturk_tab(self, tmp_path):
        path = tmp_path / "best_model_mturk.tab"
        path.write_text(tab_rows(), encoding="utf-8")
        js = read_humans(path)
        assert [(j.item_id, j.variant, j.votes_correct, j.votes_wrong) for j in js] == [
            ("L__NOUN_VERB_VERB:3", 0, 9.0, 1.0), ("L__NOUN_VERB_VERB:3", 1, 6.0, 4.0)]
        assert js[0].prefix == "il cane che vedo" and (js[0].correct, js[0].wrong) == ("corre", "corrono")

    def test_tsv_without_vote_columns(self, tmp_path):
        path = tmp_path / "votes.tsv"
        path.write_text("item_id\tvariant\tvotes\na\t0\t9\n", encoding="utf-8")
        with pytest.raises(AgreeError) as e:
            read_humans(path)
        assert str(e.value) == (
            f"{path}: not a human-judgment file: it needs the columns item_id, variant, votes_correct, "
            "votes_wrong (or the paper's best_model_mturk.tab with mturk_count); found: item_id, variant, votes")

    def test_paper_tab_without_mturk_count(self, tmp_path):
        path = tmp_path / "best_model.tab"
        path.write_text(tab_rows(with_counts=False), encoding="utf-8")
        with pytest.raises(AgreeError, match="needs the columns item_id, variant, votes_correct"):
            read_humans(path)

    def test_malformed_votes_name_the_line(self, tmp_path):
        path = tmp_path / "votes.tsv"
        path.write_text("item_id\tvariant\tvotes_correct\tvotes_wrong\na\t0\t9\t1\nb\t0\tmany\t1\n")
        with pytest.raises(AgreeError, match=r"votes.tsv:3: malformed vote row"):
            read_humans(path)


class TestJoin:
    def test_by_id_then_by_text(self, tmp_path):
        path = tmp_path / "best_model_mturk.tab"
        path.write_text(tab_rows(), encoding="utf-8")
        index = HumanIndex(read_humans(path))
        same_id = make_item("L__NOUN_VERB_VERB:3", 0)
        other_id_same_text = make_item("it:s9:1", 1, ("il", "gatto", "che", "mangio"), "dorme", "dormono")
        other_text = make_item("it:s9:1", 1, ("un", "gatto"), "dorme", "dormono")
        assert index.lookup(same_id).share_correct == 0.9
        assert index.lookup(other_id_same_text).share_correct == 0.6
        assert index.lookup(other_text) is None
        assert index.lookup(same_id.replace(perturbation="qwerty:0.2")) is None


class TestAgreement:
    def test_correlation_and_majority(self, tmp_path):
        path = tmp_path / "votes.tsv"
        path.write_text("item_id\tvariant\tvotes_correct\tvotes_wrong\n"
                        "a\t0\t9\t1\nb\t0\t2\t8\nc\t0\t5\t5\nd\t0\t7\t3\n", encoding="utf-8")
        index = HumanIndex(read_humans(path))
        # model log-odds follow the human shares; on b it follows the raters' wrong majority
        logodds = {"a": 2.0, "b": -1.0, "c": 0.0, "d": 0.5}
        scored = table(row(make_item(i), "m", "m", "lstm", lo, 0.0) for i, lo in logodds.items())
        a = model_human_agreement(scored, index, model="m")
        assert a.n == 4 and a.majority_n == 3  # c is a rater tie
        assert a.majority_match == 1.0  # a right, b wrong like the raters, d right
        assert a.spearman == pytest.approx(1.0)
        assert 0.9 < a.pearson <= 1.0


def test_a_file_that_matches_no_item(tmp_path):
    from agreement.reporting.humans import check_coverage

    path = tmp_path / "votes.tsv"
    path.write_text("item_id\tvariant\tvotes_correct\tvotes_wrong\nzz\t0\t9\t1\n", encoding="utf-8")
    index = HumanIndex(read_humans(path))
    assert check_coverage(index, [make_item("zz")], path) == 1
    with pytest.raises(AgreeError) as e:
        check_coverage(index, [make_item("a")], path)
    assert str(e.value) == (f"{path}: none of its 1 judgments matches an item of the test sets "
                            "(joined by item_id and variant, or by prefix and both forms)")
