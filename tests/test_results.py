"""The one results model (agreement/reporting/results.py), the one scored-TSV reader
(formats.scored.read_scored) and the noise ceiling of model_vs_human.png."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agreement.errors import AgreeError
from agreement.reporting.humans import HumanIndex
from formats.humans import HumanJudgment
from agreement.reporting.accuracy_plots import plot_by_construction
from agreement.reporting.plots import plot_model_vs_human
from matplotlib.image import imread
from agreement.reporting.results import ATTRACTED, build_results
from agreement.reporting.stats import wilson
from formats.items import Item
from formats.scored import construction_label, read_scored, write_scored
from tests.scored_rows import row, table

ROOT = Path(__file__).resolve().parents[1]


def item(i: int, variant: int = 0, attractors: int = 0, direction: str = "L",
         construction: str = "NOUN VERB VERB") -> Item:
    return Item(f"s{i}", variant, construction, direction, ("the", "dog", "runs"), ("DET", "NOUN", "VERB"),
                ("_",) * 3, "runs", "run", "run", "Sing", 1, 2, attractors, False,
                "original" if variant == 0 else "nonce")


def scored(model: str, outcomes, *, group: str | None = None, kind: str = "lstm") -> list[dict]:
    """One scored row per (item, outcome): True right, False wrong, None a tie."""
    out = []
    for i, (it, ok) in enumerate(outcomes):
        wrong = -1.0 if ok is None else (-2.0 if ok else -0.5)
        out.append(row(it, model, group or model, kind, -1.0, wrong, testset="t"))
    return out


def test_counts_are_over_decidable_items_with_wilson_intervals():
    rows = scored("m", [(item(0, attractors=1), True), (item(1, attractors=2), False),
                        (item(2), True), (item(3), None), (item(4, variant=1), True)])
    r = build_results(table(rows))
    c = r.count("m", "original")
    assert (c.right, c.n, c.ties) == (2, 3, 1) and c.pct == pytest.approx(200 / 3)
    assert c.interval() == pytest.approx(tuple(100 * x for x in wilson(2, 3)))
    assert (r.count("m", "original", ATTRACTED).right, r.count("m", "original", ATTRACTED).n) == (1, 2)
    assert r.count("m", "nonce").n == 1 and r.conditions == ("original", "nonce")
    assert r.cells == () and r.models[0].undecidable_items == 1   # no generator: no bootstrap cells


def test_constructions_are_named_with_their_direction():
    assert construction_label(item(0)) == "L NOUN VERB VERB"
    assert construction_label(item(0, direction="_", construction="anaphor_agreement")) == "anaphor_agreement"
    rows = scored("m", [(item(0), True), (item(1, direction="R", construction="VERB CCONJ VERB"), False)])
    r = build_results(table(rows), rng=np.random.default_rng(0), n_boot=50)
    values = {c.value for c in r.cells if c.by == "construction"}
    assert values == {"L NOUN VERB VERB", "R VERB CCONJ VERB"}


def test_group_cells_average_models_and_baselines_come_first():
    its = [item(i) for i in range(4)]
    rows = (scored("seed1", [(it, i < 3) for i, it in enumerate(its)], group="lstm")
            + scored("seed2", [(it, i < 1) for i, it in enumerate(its)], group="lstm")
            + scored("uni", [(it, True) for it in its], kind="unigram"))
    r = build_results(table(rows), rng=np.random.default_rng(0), n_boot=50)
    assert [g.group for g in r.groups] == ["uni", "lstm"] and r.groups[0].baseline
    (cell,) = [c for c in r.cells if c.group == "lstm" and c.by == "all"]
    assert cell.accuracy == 50.0 and cell.sd == pytest.approx(100 * np.std([0.75, 0.25], ddof=1), abs=1e-3)


def test_read_scored_round_trips_and_refuses_another_version(tmp_path):
    rows = scored("m", [(item(0), True), (item(1), None), (item(2, variant=1), False)])
    write_scored(tmp_path / "items.tsv", table(rows))
    back = read_scored(tmp_path)
    assert list(zip(back.item_id, back.condition, back.correct.tolist(), back.undecidable.tolist())) == [
        ("s0", "original", True, False), ("s1", "original", False, True), ("s2", "nonce", False, False)]
    assert back.keys()[0] == table(rows).keys()[0] and back.logp_wrong[0] == -2.0
    # a file without the later columns: undecidable derived from the scores
    lines = (tmp_path / "items.tsv").read_text().splitlines()
    (tmp_path / "old.tsv").write_text("\n".join("\t".join(x.split("\t")[:12]) for x in lines) + "\n")
    assert read_scored(tmp_path / "old.tsv").undecidable.tolist() == [False, True, False]
    (tmp_path / "bad.tsv").write_text("item_id\tvariant\tmodel\nx\t0\tm\n")
    with pytest.raises(AgreeError, match=r"bad.tsv: not a scored items.tsv of this version .*another version"):
        read_scored(tmp_path / "bad.tsv")
    with pytest.raises(AgreeError, match="no scored items.tsv"):
        read_scored(tmp_path / "nothing")


def test_noise_ceiling_from_rater_counts_is_drawn(tmp_path):
    rng = np.random.default_rng(4)
    its = [item(i) for i in range(60)]
    p = rng.beta(4, 1, size=len(its))
    votes = rng.binomial(10, p)
    humans = HumanIndex(HumanJudgment(it.item_id, 0, float(v), float(10 - v)) for it, v in zip(its, votes))
    rows = table(row(it, "m", "m", "lstm", float(np.log(q)), float(np.log(1 - q)), testset="t")
                 for it, q in zip(its, np.clip(p + rng.normal(0, 0.1, len(p)), 0.01, 0.99)))
    r = build_results(rows, rng=np.random.default_rng(0), humans=humans, n_boot=50)
    rel = r.ceiling["original"]
    assert 0 < rel.ceiling <= 1 and rel.ceiling_ci[0] <= rel.ceiling <= rel.ceiling_ci[1]
    assert rel.n_items == 60 and r.human_agreement[0].n == 60
    plot_model_vs_human(rows, humans, tmp_path / "with.png", results=r)
    plot_model_vs_human(rows, humans, tmp_path / "without.png")
    # the ceiling panel is one more panel of the figure; the same results give the same bytes
    width = {n: imread(tmp_path / f"{n}.png").shape[1] for n in ("with", "without")}
    assert width["with"] > 1.7 * width["without"]
    plot_model_vs_human(rows, humans, tmp_path / "again.png", results=r)
    assert (tmp_path / "with.png").read_bytes() == (tmp_path / "again.png").read_bytes()


def test_long_construction_names_are_laid_out_without_a_warning(tmp_path, recwarn):
    """BLiMP's 16 paradigms have long names: the figure grows to hold them beside its legend,
    where matplotlib would warn that it could not lay them out."""
    names = [f"determiner_noun_agreement_with_adjective_irregular_{k}" for k in range(16)]
    rows = table(row(item(i, direction="_", construction=names[i % 16]), m, m, "lstm", -1.0, w, testset="t")
                 for m in ("a-model-with-a-long-name", "another-model-with-a-long-name")
                 for i, w in enumerate([-2.0, -0.5] * 32))
    plot_by_construction(build_results(rows, rng=np.random.default_rng(0), n_boot=20), tmp_path / "c.png")
    assert not [w for w in recwarn if "layout" in str(w.message)]
    assert imread(tmp_path / "c.png").shape[1] > 600


def test_the_plots_of_every_score_call_are_drawn_without_matplotlib(tmp_path):
    """What every ``agree score`` waits for: the two accuracy plots are drawn on the Pillow
    canvas (matplotlib's import and layout were a sixth of a score call), the same bytes
    again from the same results, and their sizes follow the labels."""
    code = (
        "import sys, numpy as np\n"
        "from formats.items import Item\n"
        "from tests.scored_rows import row, table\n"
        "from agreement.reporting.results import build_results\n"
        "from agreement.reporting.accuracy_plots import plot_by_attractors, plot_by_construction\n"
        "its = [Item(f's{i}', i % 2, 'NOUN VERB VERB', 'L', ('the', 'dog', 'runs'), ('DET', 'NOUN', 'VERB'),\n"
        "            ('_',) * 3, 'runs', 'run', 'run', 'Sing', 1, 2, i % 3, False,\n"
        "            'original' if i % 2 == 0 else 'nonce') for i in range(12)]\n"
        "rows = [row(it, 'm', 'm', 'lstm', -1.0, -2.0 if i % 4 else -0.5, testset='t') for i, it in enumerate(its)]\n"
        "r = build_results(table(rows), rng=np.random.default_rng(0), n_boot=20)\n"
        f"plot_by_construction(r, {str(tmp_path / 'c.png')!r}); plot_by_attractors(r, {str(tmp_path / 'a.png')!r})\n"
        f"plot_by_construction(r, {str(tmp_path / 'c2.png')!r})\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "c.png").read_bytes() == (tmp_path / "c2.png").read_bytes()
    construction, attractors = imread(tmp_path / "c.png"), imread(tmp_path / "a.png")
    assert construction.shape[0] > 200 and attractors.shape[1] > 600   # two panels and a legend
    assert (construction[..., :3] < 0.9).any()                          # something is drawn
