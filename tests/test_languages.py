"""Issue 15: the pipeline on languages other than English and Italian (inline fixtures)."""
from __future__ import annotations

import numpy as np

from agreement.records import Item
from agreement.score import ScoredItem, score_items, write_scored
from agreement.summary import build_summary, render_markdown
from lm.unigram import UnigramScorer


def _item(item_id, words, correct, wrong):
    tokens = tuple(words.split()) + (correct,)
    n = len(tokens)
    return Item(item_id, 0, "NOUN VERB", "L", tokens, ("_",) * n, ("_",) * n, correct, wrong, "_", "Sing",
                0, n - 1, 0, False, "original")


class TestUndecidable:
    """A model that knows neither form scores both as <unk>: a tie, undecidable, not wrong."""

    ITEMS = [_item("known", "the dog that we saw", "runs", "run"),
             _item("unknown", "the dog that we saw", "sprints", "sprint")]

    def scored(self):
        # a real unigram model: "sprints"/"sprint" are outside its vocabulary
        model = UnigramScorer(["<eos>", "<unk>", "the", "dog", "that", "we", "saw", "runs", "run"],
                              [5, 3, 9, 4, 4, 4, 4, 6, 2], name="uni")
        return score_items(self.ITEMS, [model], quiet=True)

    def test_tie_is_undecidable_not_wrong(self):
        known, unknown = self.scored()
        assert known.correct and not known.undecidable
        assert unknown.logp_correct == unknown.logp_wrong
        assert unknown.undecidable and not unknown.correct

    def test_summary_reports_accuracy_over_decidable_items(self):
        summary = build_summary(self.scored(), rng=np.random.default_rng(0), n_boot=50)
        row = next(r for r in summary["accuracy"] if r["by"] == "all")
        assert (row["items"], row["undecidable"], row["accuracy"]) == (1, 1, 100.0)
        assert summary["models"][0]["undecidable_items"] == 1
        md = render_markdown(summary)
        assert "Warning:** uni: 1 of 2 items (50%) are undecidable" in md

    def test_no_warning_when_all_decidable(self):
        summary = build_summary(self.scored()[:1], rng=np.random.default_rng(0), n_boot=50)
        assert "Warning" not in render_markdown(summary)

    def test_scored_tsv_has_undecidable_column(self, tmp_path):
        write_scored(tmp_path / "s.tsv", self.scored())
        header, *rows = (tmp_path / "s.tsv").read_text().splitlines()
        col = header.split("\t").index("undecidable")
        assert [r.split("\t")[col] for r in rows] == ["0", "1"]
        assert [r.split("\t")[header.split("\t").index("correct")] for r in rows] == ["1", "0"]


class TestCaselessSentences:
    def test_caseless_paragraph_split_into_its_sentences(self):
        from lm.tokenize import sentences
        text = ('צה"ל הודיע היום על מבצע. הכוחות נכנסו לעיר ארה״ב בבוקר! מה קרה אחר כך? '
                'אף אחד לא יודע.')
        assert sentences(text, "he") == [['צה"ל', "הודיע", "היום", "על", "מבצע", "."],
                                         ["הכוחות", "נכנסו", "לעיר", "ארה״ב", "בבוקר", "!"],
                                         ["מה", "קרה", "אחר", "כך", "?"], ["אף", "אחד", "לא", "יודע", "."]]

    def test_script_specific_marks_and_combining_signs(self):
        from lm.tokenize import sentences
        assert sentences("ذهب الولد إلى المدرسة. هل رأيت المعلم؟ نعم رأيته.", "ar") == [
            ["ذهب", "الولد", "إلى", "المدرسة", "."], ["هل", "رأيت", "المعلم", "؟"], ["نعم", "رأيته", "."]]
        assert sentences("राम घर गया। सीता बाज़ार गई।", "hi") == [["राम", "घर", "गया", "।"],
                                                             ["सीता", "बाज़ार", "गई", "।"]]

    def test_no_space_no_split_and_cased_scripts_unchanged(self):
        from lm.tokenize import sentences
        assert len(sentences("מבצע.הכוחות נכנסו", "he")) == 1  # no whitespace after the period
        assert sentences("It is 3 m. the end. The dog ran.", "en") == [
            ["It", "is", "3", "m", ".", "the", "end", "."], ["The", "dog", "ran", "."]]

    def test_unknown_lang_warns_and_uses_generic_rules(self, tmp_path):
        from click.testing import CliRunner

        from agreement.cli import cli
        from lm.tokenize import lang_warning
        assert lang_warning("en") is None and lang_warning("he") is None
        assert "no rules for --lang 'xx'" in lang_warning("xx")
        src = tmp_path / "in.txt"
        src.write_text("a b c .\n" * 30, encoding="utf-8")
        r = CliRunner().invoke(cli, ["corpus", str(src), "--lang", "xx", "--out", str(tmp_path / "c"), "-q"])
        assert r.exit_code == 0, r.output
        assert "warning: the tokenizer has no rules for --lang 'xx'; using the generic rules" in r.stderr
