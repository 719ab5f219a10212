"""Robustness curves (agreement/reporting/robustness.py) on hand-made scored items."""
from __future__ import annotations

import pytest

from agreement.reporting.results import build_results
from agreement.reporting.robustness import parse_perturbation, plot_robustness, robustness_table, write_robustness_tsv
from agreement.reporting.stats import wilson
from formats.items import Item
from tests.scored_rows import row, table as scored_table


def scored(label, model, right, wrong, variant=0, ties=0):
    """``right`` correct, ``wrong`` incorrect and ``ties`` undecidable scored rows of one condition."""
    out = []
    for k in range(right + wrong + ties):
        item = Item(item_id=f"x:s{k}", variant=variant, construction="NOUN VERB VERB", direction="L",
                    tokens=("a", "b"), pos=("NOUN", "VERB"), feats=("_", "_"), correct="b", wrong="c",
                    lemma="b", number="Sing", cue_index=0, target_index=1, attractors=0, punct=False,
                    perturbation=label)
        good = k < right
        out.append(row(item=item, model=model, group="lstm", kind="lstm",
                              logp_correct=-1.0 if good else -3.0 if k < right + wrong else -2.0,
                              logp_wrong=-2.0))
    return out


ROWS = [*scored("original", "m1", 9, 1), *scored("original", "m1", 4, 6, variant=1),
        *scored("qwerty@nouns:0.2", "m1", 8, 2), *scored("qwerty@nouns:0.4", "m1", 6, 4),
        *scored("qwerty@random~nouns:0.2", "m1", 7, 3),
        *scored("semantic:0.6", "m1", 7, 3), *scored("semantic:0.3", "m1", 5, 5),
        *scored("nonce+swap:0.5", "m1", 2, 8),
        *scored("qwerty@nouns:0.2", "m2", 5, 5)]


def test_parse_perturbation():
    assert parse_perturbation("qwerty@random~nouns/end:0.25") == ("original", "qwerty", "random~nouns/end", 0.25)
    assert parse_perturbation("nonce+swap:0.5") == ("nonce", "swap", "", 0.5)
    assert parse_perturbation("semantic:-0.2") == ("original", "semantic", "", -0.2)
    assert parse_perturbation("original") is None and parse_perturbation("nonce") is None


def test_table_points_and_starting_points():
    table = robustness_table(build_results(scored_table(ROWS)))
    index = {(r["aspect"], r["pos_group"], r["base"], r["severity"], r["model"]): r for r in table}
    assert index[("qwerty", "nouns", "original", 0.2, "m1")]["accuracy"] == pytest.approx(80.0)
    assert index[("qwerty", "nouns", "original", 0.4, "m1")]["n"] == 10
    assert index[("qwerty", "random~nouns", "original", 0.2, "m1")]["accuracy"] == pytest.approx(70.0)
    # the unperturbed items start every curve of the model that scored them
    start = index[("qwerty", "nouns", "original", 0.0, "m1")]
    assert (start["perturbation"], start["accuracy"], start["n"]) == ("original", 90.0, 10)
    assert index[("semantic", "", "original", 1.0, "m1")]["accuracy"] == pytest.approx(90.0)
    assert index[("swap", "", "nonce", 0.0, "m1")]["accuracy"] == pytest.approx(40.0)
    assert ("qwerty", "nouns", "original", 0.0, "m2") not in index  # m2 scored no originals
    assert set(table[0]) >= {"aspect", "pos_group", "severity", "model", "n", "accuracy"}
    keys = [(r["aspect"], r["pos_group"], r["base"], r["model"], r["severity"]) for r in table]
    assert keys == sorted(keys) and len(table) == 11


def test_undecidable_items_are_apart_from_accuracy():
    """As in summary.md: accuracy over the decidable items, the ties counted apart."""
    (row,) = robustness_table(build_results(scored_table(scored("swap:0.5", "m", 3, 1, ties=4))))
    assert (row["n"], row["accuracy"], row["undecidable"]) == (4, 75.0, 4)


def test_wilson_interval():
    assert wilson(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)  # the textbook values
    assert wilson(0, 0) == (0.0, 0.0) and wilson(10, 10)[1] == pytest.approx(1.0)


def test_plot_and_tsv_are_deterministic(tmp_path):
    table = robustness_table(build_results(scored_table(ROWS)))
    plot_robustness(table, tmp_path / "a.png")
    plot_robustness(table, tmp_path / "b.png")
    data = (tmp_path / "a.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert data == (tmp_path / "b.png").read_bytes()
    write_robustness_tsv(table, tmp_path / "r.tsv")
    lines = (tmp_path / "r.tsv").read_text().splitlines()
    assert lines[0].split("\t")[:6] == ["aspect", "pos_group", "base", "severity", "model", "perturbation"]
    assert len(lines) == len(table) + 1


def test_plot_without_perturbed_items(tmp_path):
    plot_robustness([], tmp_path / "empty.png")
    assert (tmp_path / "empty.png").stat().st_size > 0
