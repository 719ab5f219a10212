"""Accuracy per language (agreement.reporting.languages): figures by model, condition and
relation x feature with their intervals, a table per language, the TSV and the plot;
and the cluster bootstrap its nonce intervals use."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from agreement.reporting.languages import (COLUMNS, language_figures, language_table, on_rows_of, plot_languages,
                                           write_figures)
from agreement.reporting.stats import bootstrap_ci, cluster_bootstrap_ci
from formats.release import read_release
from scored_rows import row, table
from test_score_methods import rel

ROOT = Path(__file__).resolve().parents[1]


def rows(model, right: dict, lang="xx"):
    """Scored rows of one model: ``right`` maps (item id, variant) -> whether it chose right;
    two relations, variants 0 (original) and 1..n (nonce)."""
    out = []
    for (item_id, variant), ok in right.items():
        relation = "subj-verb" if item_id.startswith("s") else "det-noun"
        it = rel(item_id, variant, "the dogs run .", 2, 1, "runs", relation, "target")
        out.append(row(it, model, model, "unigram", -1.0 if ok else -2.0, -2.0 if ok else -1.0, testset=lang))
    return table(out)


RIGHT = {("s1", 0): True, ("s1", 1): True, ("s1", 2): False, ("s2", 0): False, ("s2", 1): False,
         ("s2", 2): False, ("d1", 0): True, ("d1", 1): True, ("d1", 2): True}


def test_figures_by_model_condition_and_cell():
    model = rows("m", RIGHT)
    base = rows("u", {k: True for k in [*RIGHT, ("s3", 0)]})
    figs = language_figures("xx", {"m": model, "u (sample)": on_rows_of(base, model), "u": base},
                            np.random.default_rng(0))
    at = {(f.model, f.condition, f.cell): f for f in figs}
    assert (at[("m", "original", "all")].right, at[("m", "original", "all")].n) == (2, 3)
    assert (at[("m", "nonce", "all")].right, at[("m", "nonce", "all")].n) == (3, 6)
    assert (at[("m", "original", "subj-verb Number")].right, at[("m", "original", "subj-verb Number")].n) == (1, 2)
    assert at[("u (sample)", "original", "all")].n == 3 and at[("u", "original", "all")].n == 4  # s3: not sampled
    f = at[("m", "original", "all")]
    assert f.low < f.pct < f.high   # Wilson
    assert [f.cell for f in figs if f.model == "m" and f.condition == "nonce"] == ["all", "det-noun Number",
                                                                                   "subj-verb Number"]


def test_table_tsv_and_plot(tmp_path):
    figs = language_figures("xx", {"m": rows("m", RIGHT)}, np.random.default_rng(0)) + language_figures(
        "yy", {"m": rows("m", {k: True for k in RIGHT}, lang="yy")}, np.random.default_rng(0))
    lines = language_table([f for f in figs if f.lang == "xx"], ["m"])
    assert lines[0] == "| cell | m original | m nonce | pairs: m |"
    assert lines[2].startswith("| all | 66.7 [") and lines[2].endswith("| 3 / 6 |")
    assert write_figures(tmp_path / "l.tsv", figs) == len(figs)
    assert (tmp_path / "l.tsv").read_text().splitlines()[0].split("\t") == list(COLUMNS)
    drawn = plot_languages(figs, tmp_path / "l.png", model="m", baseline="u", names={"xx": "Ex"})
    assert drawn == ["yy", "xx"]            # the best first
    assert (tmp_path / "l.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_cluster_bootstrap_of_single_rows_is_the_plain_bootstrap():
    values = [1, 0, 1, 1, 0, 1, 1, 1]
    a = cluster_bootstrap_ci(values, range(8), np.random.default_rng(3))
    b = bootstrap_ci(values, np.random.default_rng(3))
    assert a == pytest.approx(b)


def test_clusters_widen_the_interval_of_correlated_rows():
    """Ten sentences, each with nine variants all right or all wrong: the interval is that
    of ten trials, not of ninety."""
    values = np.repeat([1, 0, 1, 1, 0, 1, 0, 1, 1, 0], 9).astype(float)
    lo, hi = cluster_bootstrap_ci(values, np.repeat(np.arange(10), 9), np.random.default_rng(1))
    plain_lo, plain_hi = bootstrap_ci(values, np.random.default_rng(1))
    assert hi - lo > 2 * (plain_hi - plain_lo)
    assert np.isnan(cluster_bootstrap_ci([], [], np.random.default_rng(1))[0])


def test_score_languages_script_on_a_toy_release(tmp_path):
    """scripts/score_languages.py over an agree extract-all output (the toy release of
    test_extract_all): the cross-fitted unigram on every pair, a table per language with
    relation x feature cells, the summary row and the plot."""
    from agreement.extraction.batch import COMMAND, extract_languages
    from formats.run import RunContext
    from test_extract_all import ud_folder

    extract_languages(RunContext(COMMAND, out=tmp_path / "rel"), ud_folder(tmp_path / "ud"), n=2, only=("it",))
    script = load_script()
    assert script.main([str(tmp_path / "rel"), "--out", str(tmp_path / "out"), "--no-model", "--folds", "2",
                        "--per-cell", "1", "-q"]) == 0
    out = tmp_path / "out"
    summary = (out / "summary.tsv").read_text().splitlines()
    assert summary[1].split("\t")[:2] == ["it", "Italian"]
    pairs = sum(1 for _ in read_release(tmp_path / "rel" / "it"))
    scored = [f for f in read_figures(out) if f[:4] == ["it", "all", "unigram", "original"]
              or f[:4] == ["it", "all", "unigram", "nonce"]]
    assert sum(int(f[5]) + int(f[6]) for f in scored) == pairs      # every pair, once, in one fold
    md = (out / "languages.md").read_text()
    assert md.startswith("### Italian (it)") and "| subj-verb Number |" in md
    assert (out / "languages.png").read_bytes()[:4] == b"\x89PNG"
    sample = json.loads((out / "it" / "sample" / "manifest.json").read_text())
    assert sample["counts"]["originals"] == len(sample["counts"]["cells"])   # one per cell


def read_figures(out) -> list[list[str]]:
    return [line.split("\t") for line in (out / "languages.tsv").read_text().splitlines()[1:]]


def load_script():
    """scripts/score_languages.py as a module (registered first: its dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location("score_languages", ROOT / "scripts" / "score_languages.py")
    script = sys.modules["score_languages"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_stratified_quota_is_proportional_and_exact():
    """Issue 44's sample: every item where a language has at most n, else n in all, each cell
    in proportion to its size, remainders to the largest fractions, never past a cell."""
    stratified = load_script().stratified
    assert stratified({"a": 3, "b": 2}, 400) == {"a": 3, "b": 2}
    q = stratified({"a": 1000, "b": 500, "c": 7}, 400)
    assert sum(q.values()) == 400 and q == {"a": 265, "b": 133, "c": 2}
    q = stratified({"x": 333, "y": 333, "z": 334}, 400)
    assert sum(q.values()) == 400 and max(q.values()) - min(q.values()) <= 1


def test_score_languages_per_language_sample(tmp_path):
    """--per-language: at most n originals per language with the first nonce variant of
    --nonce-items of them, the same draw for the same seed."""
    from agreement.extraction.batch import COMMAND, extract_languages
    from formats.run import RunContext
    from test_extract_all import ud_folder

    extract_languages(RunContext(COMMAND, out=tmp_path / "rel"), ud_folder(tmp_path / "ud"), n=2, only=("it",))
    script = load_script()
    args = ["--no-model", "--no-baseline", "--per-language", "3", "--nonce-items", "2", "-q"]
    for out in ("a", "b"):
        assert script.main([str(tmp_path / "rel"), "--out", str(tmp_path / out), *args]) == 0
    sample = json.loads((tmp_path / "a" / "it" / "sample" / "manifest.json").read_text())
    assert sample["counts"]["originals"] == 3 and sample["counts"]["nonce"] == 2
    assert sample["counts"]["pairs"] == 5 and sum(sample["counts"]["cells"].values()) == 3
    items = (tmp_path / "a" / "it" / "sample" / "items.tsv").read_text()
    assert items == (tmp_path / "b" / "it" / "sample" / "items.tsv").read_text()
