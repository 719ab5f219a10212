"""agree analyze: noise ceiling, mixed model, paired comparison, challenge subsets,
the CLI's outputs and errors, and the hand-written statistics against scipy."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("scipy", reason="scipy not installed (pip install 'agree-bench[analysis]')")
from scipy import stats as sps  # noqa: E402
from conftest import run_agree  # noqa: E402

from agreement.reporting.humans import graded_comparison, split_half_reliability  # noqa: E402
from agreement.reporting.analysis.challenge import challenge_subsets  # noqa: E402
from agreement.reporting.paired import compare  # noqa: E402
from agreement.reporting.analysis.rows import scored_table  # noqa: E402
from agreement.errors import AgreeError  # noqa: E402
from agreement.reporting.stats import bootstrap_ci, mcnemar_exact, pearson, spearman  # noqa: E402

HEADER = ("item_id", "variant", "perturbation", "construction", "attractors", "model",
          "logp_correct", "logp_wrong", "correct", "oov", "group", "testset")


def write_score_dir(path: Path, rows, *, extra_column: bool = False, humans: str | None = None) -> Path:
    """A minimal `agree score` output: items.tsv (+ an extra column later versions add) and manifest."""
    path.mkdir(parents=True, exist_ok=True)
    header = HEADER + (("undecidable",) if extra_column else ())
    lines = ["\t".join(header)]
    for r in rows:
        item_id, variant, pert, cons, att, model, lc, lw = r
        vals = (item_id, str(variant), pert, cons, str(att), model, repr(lc), repr(lw),
                "1" if lc > lw else "0", "0", model, "t")
        lines.append("\t".join(vals + (("0",) if extra_column else ())))
    (path / "items.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    params = {"humans": humans}
    (path / "manifest.json").write_text(json.dumps({"command": "score", "parameters": params}))
    return path


# --------------------------------------------------------------------------- ceiling

def simulate_raters(rng, n_items=3000, raters=10):
    """Items with true correct-probabilities p ~ Beta(4, 1); each rater votes Bernoulli(p)."""
    p = rng.beta(4, 1, size=n_items)
    c = rng.binomial(raters, p)
    var_p, noise = p.var(), np.mean(p * (1 - p))
    # reliability of the share of `raters` raters: var(p) / (var(p) + E[p(1-p)] / raters)
    return c, raters - c, var_p / (var_p + noise / raters)


def test_ceiling_recovers_known_reliability():
    rng = np.random.default_rng(0)
    c, w, truth = simulate_raters(rng)
    rel = split_half_reliability(c, w, np.random.default_rng(1), method="pearson", n_splits=200, n_boot=200)
    assert abs(rel.reliability - truth) < 0.03
    assert rel.reliability_ci[0] <= truth <= rel.reliability_ci[1]
    assert rel.ceiling == pytest.approx(math.sqrt(rel.reliability))
    assert rel.ceiling_ci[0] <= rel.ceiling <= rel.ceiling_ci[1]
    assert rel.n_items == 3000 and rel.excluded == 0


def test_ceiling_excludes_items_with_one_rater_and_is_seeded():
    c, w = np.array([5, 1, 0, 7, 3, 9, 0]), np.array([5, 0, 1, 1, 6, 0, 8])
    a = split_half_reliability(c, w, np.random.default_rng(3), n_splits=50, n_boot=50)
    b = split_half_reliability(c, w, np.random.default_rng(3), n_splits=50, n_boot=50)
    assert a.excluded == 2 and a.n_items == 5
    assert a == b


def test_graded_comparison_matches_scipy_and_brackets():
    rng = np.random.default_rng(5)
    human = rng.uniform(0.3, 1, 200)
    model = np.clip(human + rng.normal(0, 0.2, 200), 0, 1)
    g = graded_comparison("m", "nonce", model, human, model > 0.5, np.random.default_rng(2), n_boot=300)
    assert g.pearson == pytest.approx(sps.pearsonr(model, human)[0])
    assert g.spearman == pytest.approx(sps.spearmanr(model, human)[0])
    assert g.pearson_ci[0] < g.pearson < g.pearson_ci[1]
    assert g.spearman_ci[0] < g.spearman < g.spearman_ci[1]
    assert g.point_biserial > 0.3


# --------------------------------------------------------------------------- mixed model

def simulated_rows(rng, n_items=400, variants=5):
    """Two models; true log-odds: 1.0 + -0.5 nonce + -1.0 (model b) + attractors x (-0.8 for a, 0 for b)
    + item effect (sd 0.5) + construction effect (sd 0.3)."""
    cons_eff = rng.normal(0, 0.3, 4)
    rows, truth = [], {"nonce": -0.5, "model[b] vs a": -1.0, "attractors[a]": -0.8, "attractors[b]": 0.0}
    for i in range(n_items):
        cons, att, item_eff = i % 4, int(rng.integers(0, 3)), rng.normal(0, 0.5)
        for v in range(variants):
            for m in ("a", "b"):
                eta = (1.0 - 0.5 * (v > 0) - 1.0 * (m == "b") - 0.8 * att * (m == "a")
                       + item_eff + cons_eff[cons])
                right = rng.random() < 1 / (1 + math.exp(-eta))
                rows.append((f"i{i}", v, "original" if v == 0 else "nonce", f"C{cons}", att, m,
                             -1.0 if right else -2.0, -2.0 if right else -1.0))
    return rows, truth


def _fit_simulated(tmp_path, seed, **size):
    from agreement.reporting.analysis.mixed import fit_mixed

    rows, truth = simulated_rows(np.random.default_rng(seed), **size)
    return fit_mixed(scored_table([write_score_dir(tmp_path / f"s{seed}", rows)])), truth


def test_mixed_model_recovers_known_coefficients(tmp_path):
    pytest.importorskip("statsmodels", reason="statsmodels not installed")
    from agreement.reporting.analysis.mixed import attractor_effects

    fit, truth = _fit_simulated(tmp_path, 11)
    for term, value in truth.items():  # every truth inside its 95% interval, no slack
        c = fit.term(term)
        assert c is not None, term
        assert c.lo <= value <= c.hi, (term, value, c)
    eff = attractor_effects(fit)
    assert eff["a"].sign == "-" and eff["b"].sign == "0"
    assert fit.n_items == 400 and fit.n_constructions == 4
    assert [c.term for c in fit.random_sd] == ["item", "construction"]


def test_mixed_model_intervals_cover_about_95_percent(tmp_path):
    """20 simulated data sets x 4 true coefficients: the Laplace intervals hold ~95% of
    them (measured 78/80; mean-field VB's own sds held 65/80 on the same fits), and
    are not made wide to get there."""
    pytest.importorskip("statsmodels", reason="statsmodels not installed")
    inside, widths = 0, []
    for seed in range(20):
        fit, truth = _fit_simulated(tmp_path, seed, n_items=80, variants=6)
        for term, value in truth.items():
            c = fit.term(term)
            inside += c.lo <= value <= c.hi
            widths.append(c.hi - c.lo)
    assert inside >= 0.8 * 80, inside
    assert np.mean(widths) < 0.85, np.mean(widths)  # measured 0.68 log-odds (VB's: 0.50)


def test_mixed_model_laplace_sds_equal_statsmodels_numerical_hessian(tmp_path):
    """The sparse Laplace covariance equals the inverse of statsmodels' own log posterior's
    Hessian (numerical, over fixed and random effects, variance components held) at the
    same point, on the scaled design that fit_vb fits."""
    pytest.importorskip("statsmodels", reason="statsmodels not installed")
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM
    from statsmodels.tools.numdiff import approx_fprime

    from agreement.reporting.analysis import mixed

    rows, _ = simulated_rows(np.random.default_rng(4), n_items=40, variants=3)
    table = scored_table([write_score_dir(tmp_path / "s", rows)])
    exog, names, _ = mixed._design(table)
    res, _, glmm, exog_vc, ident = mixed._fit(table, exog, names, ["item", "construction"])
    ours = mixed._laplace_fe_sd(glmm, exog, exog_vc, ident, res)

    mean, sd = exog.mean(0), exog.std(0)
    scaled = sd > 1e-8
    xs = np.where(scaled, (exog - mean) / np.where(scaled, sd, 1.0), exog)
    model = BinomialBayesMixedGLM(table.correct.astype(float), xs, exog_vc, ident)
    k, q = exog.shape[1], len(res.vcp_mean)
    fe_scaled = res.fe_mean * np.where(scaled, sd, 1.0)
    point = np.concatenate([fe_scaled, res.vcp_mean, res.vc_mean])
    keep = np.r_[np.arange(k), np.arange(k + q, point.size)]  # fixed and random effects
    hess = approx_fprime(point, lambda p: -model.logposterior_grad(p))[np.ix_(keep, keep)]
    theirs = np.sqrt(np.diag(np.linalg.inv(hess))[:k]) / np.where(scaled, sd, 1.0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)


# --------------------------------------------------------------------------- paired, challenge

HAND = [  # item, variant, pert, construction, attractors, model, logp_correct, logp_wrong
    ("x1", 0, "original", "N V", 0, "unigram", -1, -2), ("x1", 0, "original", "N V", 0, "kn5", -2, -1),
    ("x1", 0, "original", "N V", 0, "lstm", -1, -2),
    ("x2", 0, "original", "N V", 1, "unigram", -2, -1), ("x2", 0, "original", "N V", 1, "kn5", -2, -1),
    ("x2", 0, "original", "N V", 1, "lstm", -1, -2),
    ("x3", 0, "original", "N N V", 1, "unigram", -2, -1), ("x3", 0, "original", "N N V", 1, "kn5", -2, -1),
    ("x3", 0, "original", "N N V", 1, "lstm", -2, -1),
    ("x4", 0, "original", "N N V", 2, "unigram", -1, -2), ("x4", 0, "original", "N N V", 2, "kn5", -1, -2),
    ("x4", 0, "original", "N N V", 2, "lstm", -2, -1),
]


def test_challenge_subsets_on_a_hand_made_table(tmp_path):
    table = scored_table([write_score_dir(tmp_path / "s", HAND)])
    base, ref = challenge_subsets(table, np.random.default_rng(0), ("lstm",))
    # both baselines wrong on x2 and x3; the LSTM wrong on x3 and x4
    assert base.size == 2 and ref.size == 2 and ref.name == "wrong:lstm"
    acc = {s.model: s.accuracy for s in base.scores}
    assert acc == {"unigram": 0.0, "kn5": 0.0, "lstm": 0.5}
    assert {s.model: s.accuracy for s in ref.scores} == {"unigram": 0.5, "kn5": 0.5, "lstm": 0.0}
    with pytest.raises(AgreeError, match="no such model"):
        challenge_subsets(table, np.random.default_rng(0), ("gpt",))


def test_challenge_subset_skipped_without_a_5gram(tmp_path):
    table = scored_table([write_score_dir(tmp_path / "s", [r for r in HAND if r[5] != "kn5"])])
    (base,) = challenge_subsets(table, np.random.default_rng(0))
    assert base.skipped == "no 5-gram model among the scored models" and not base.scores


def test_paired_comparison_resamples_items(tmp_path):
    table = scored_table([write_score_dir(tmp_path / "s", HAND)])
    c = compare(table, "lstm", "kn5", np.random.default_rng(0), n_boot=500)
    assert (c.rows, c.items, c.accuracy_a, c.accuracy_b) == (4, 4, 0.5, 0.25)
    assert c.diff == 0.25 and c.ci[0] <= 0.25 <= c.ci[1]
    assert c.mcnemar_p == mcnemar_exact(2, 1)


# --------------------------------------------------------------------------- CLI

def test_cli_writes_outputs_byte_identically_and_notes_what_is_skipped(tmp_path):
    pytest.importorskip("statsmodels", reason="statsmodels not installed")
    rows, _ = simulated_rows(np.random.default_rng(2), n_items=60, variants=3)
    d = write_score_dir(tmp_path / "s", rows, extra_column=True)
    outs = []
    for name in ("a1", "a2"):
        res = run_agree("analyze", str(d), "--out", str(tmp_path / name), "--quiet", "--n-boot", "50")
        assert res.exit_code == 0, res.output
        outs.append((tmp_path / name / "analysis.json").read_bytes())
    assert outs[0] == outs[1]
    files = {p.name for p in (tmp_path / "a1").iterdir()}
    assert {"analysis.json", "analysis.md", "forest.png", "manifest.json"} <= files
    result = json.loads(outs[0])
    assert "graded comparison with humans skipped: no human judgments" in " ".join(result["notes"])
    assert result["mixed"]["n_items"] == 60


def test_cli_humans_ceiling_and_unrated_items(tmp_path):
    rng = np.random.default_rng(4)
    rows, votes = [], ["item_id\tvariant\tvotes_correct\tvotes_wrong"]
    for i in range(40):
        p = rng.uniform(0.4, 1)
        rows.append((f"i{i}", 0, "original", "N V", i % 2, "lstm", math.log(p), math.log(1 - p) - 0.1))
        if i < 36:  # four items without raters
            c = int(rng.binomial(8, p))
            votes.append(f"i{i}\t0\t{c}\t{8 - c}")
    d = write_score_dir(tmp_path / "s", rows)
    (tmp_path / "h.tsv").write_text("\n".join(votes) + "\n")
    res = run_agree("analyze", str(d), "--humans", str(tmp_path / "h.tsv"), "--out",
                                   str(tmp_path / "o"), "--quiet", "--no-mixed", "--n-boot", "50")
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "o" / "analysis.json").read_text())
    (h,) = result["humans"]
    assert (h["judged_items"], h["unjudged_items"]) == (36, 4)
    assert h["models"][0]["n"] == 36 and h["reliability"][0]["n_items"] == 36
    assert "paired comparison not done: a single model (lstm)" in result["notes"]
    assert (tmp_path / "o" / "ceiling.png").is_file()
    assert "noise ceiling" in res.output


def test_cli_refuses_another_version(tmp_path):
    d = tmp_path / "old"
    d.mkdir()
    (d / "items.tsv").write_text("item_id\tvariant\tmodel\nx\t0\tm\n")
    res = run_agree("analyze", str(d), "--out", str(tmp_path / "o"))
    assert res.exit_code == 1
    assert res.output.startswith(f"Error: {d / 'items.tsv'}: not a scored items.tsv of this version of agree "
                                 "(it lacks the columns") and "another version" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "o").exists()
    (d / "manifest.json").write_text(json.dumps({"command": "extract"}))
    res = run_agree("analyze", str(d), "--out", str(tmp_path / "o"))
    assert res.output == f"Error: {d}: not an agree score output (manifest.json written by 'extract')\n"


def test_help_has_an_example():
    for cmd in ("analyze", "swap-targets"):
        res = run_agree(cmd, "--help")
        assert res.exit_code == 0 and "Example:" in res.output


# --------------------------------------------------------------------------- stats vs scipy

class TestHandWrittenStatsAgainstScipy:
    def test_mcnemar_equals_exact_binomial_test(self):
        for b, c in [(0, 0), (3, 9), (10, 10), (1, 40), (250, 300)]:
            expected = sps.binomtest(min(b, c), b + c, 0.5).pvalue if b + c else 1.0
            assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9)

    def test_correlations_equal_scipy(self):
        rng = np.random.default_rng(1)
        x = rng.integers(0, 5, 60).astype(float)  # with ties
        y = x + rng.normal(0, 1, 60)
        assert pearson(x, y) == pytest.approx(sps.pearsonr(x, y)[0], abs=1e-12)
        assert spearman(x, y) == pytest.approx(sps.spearmanr(x, y)[0], abs=1e-12)

    def test_bootstrap_interval_close_to_scipy_percentile(self):
        values = np.random.default_rng(2).binomial(1, 0.8, 400).astype(float)
        ours = bootstrap_ci(values, np.random.default_rng(3), n_boot=4000)
        theirs = sps.bootstrap((values,), np.mean, n_resamples=4000, method="percentile",
                               random_state=np.random.default_rng(4)).confidence_interval
        assert ours[0] == pytest.approx(theirs.low, abs=0.01)
        assert ours[1] == pytest.approx(theirs.high, abs=0.01)


def test_share_ranks_equal_scipy_rankdata():
    from agreement.reporting.humans import _share_ranks

    rng = np.random.default_rng(8)
    den = rng.integers(1, 7, size=(5, 40))
    num = rng.integers(0, 7, size=(5, 40)) % (den + 1)
    assert np.allclose(_share_ranks(num, den), sps.rankdata(num / den, axis=1))


def test_spearman_interval_with_full_sample_ranks_is_close_to_reranking():
    from agreement.reporting.humans import _boot_corr, rowwise_corr as _rowwise_corr

    rng = np.random.default_rng(9)
    x = rng.uniform(size=300)
    y = x + rng.normal(0, 0.4, 300)
    ours = _boot_corr(x, y, np.random.default_rng(1), 2000, True)
    idx = np.random.default_rng(1).integers(0, 300, size=(2000, 300))
    exact = np.quantile(_rowwise_corr(sps.rankdata(x[idx], axis=1), sps.rankdata(y[idx], axis=1)),
                        [0.025, 0.975])
    assert np.allclose(ours, exact, atol=0.015)


def test_undecidable_rows_are_left_out_and_counted(tmp_path):
    """A tie (or NaN) is undecidable, as in agree score: not a wrong answer."""
    from agreement.reporting.analysis.rows import scored_table
    from formats.manifest import write_manifest
    from formats.items import Item
    from formats.scored import write_scored
    from tests.scored_rows import row, table

    def item(i):
        return Item(f"i{i}", 0, "NOUN VERB", "L", ("the", "dog", "runs"), ("DET", "NOUN", "VERB"),
                    ("_", "_", "_"), "runs", "run", "run", "Sing", 1, 2, 0, False)
    rows = [row(item(0), "m", "m", "lstm", -1.0, -2.0), row(item(1), "m", "m", "lstm", -2.0, -2.0),
            row(item(2), "m", "m", "lstm", float("nan"), -2.0), row(item(3), "m", "m", "lstm", -3.0, -2.0)]
    write_scored(tmp_path / "items.tsv", table(rows))
    write_manifest(tmp_path, "score", [], {})
    scored = scored_table([tmp_path])
    assert (len(scored), scored.left_out) == (2, 2)
    assert scored.correct.tolist() == [True, False]


def test_the_library_verb_writes_what_the_command_writes(tmp_path):
    """analyze_to_dir is agree analyze without click: the same directory, its seed the run's."""
    from agreement.reporting.analysis.analyze_dir import analyze_to_dir
    from formats.run import RunContext

    rows, _ = simulated_rows(np.random.default_rng(5), n_items=30, variants=2)
    d = write_score_dir(tmp_path / "s", rows)
    result = analyze_to_dir(RunContext("analyze", out=tmp_path / "lib", seed=9), [d], mixed=False, n_boot=20)
    assert "mixed model skipped (not asked for)" in result.notes
    res = run_agree("analyze", str(d), "--seed", "9", "--no-mixed", "--n-boot", "20", "--quiet",
                    "--out", str(tmp_path / "cli"))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "lib" / "analysis.json").read_bytes() == (tmp_path / "cli" / "analysis.json").read_bytes()
    manifest = json.loads((tmp_path / "lib" / "manifest.json").read_text())
    assert manifest["parameters"]["seed"] == 9 and manifest["command"] == "analyze"
