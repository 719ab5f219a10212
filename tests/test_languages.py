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
