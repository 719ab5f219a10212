"""agree score --curve: points equal separate scoring, files, positions, bad input."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from agreement.scoring.curve import Position, _split_value, training_position
from agreement.reporting.curve_report import CurveRow, emergence, read_curve_tsv
from conftest import run_agree
from formats.items import Item, write_items
from formats.scored import read_scored
from lm.training.train import train_lm
from test_train import NOUNS, TINY, VERBS, make_corpus


def item(item_id: str, variant: int, noun: str, verb: str, plural: bool, attractor: str | None = None):
    subject = noun + "s" if plural else noun
    correct, wrong = (verb[:-1], verb) if plural else (verb, verb[:-1])
    middle = ("with", "the", attractor) if attractor else ()
    tokens = ("the", subject, *middle, correct, "the", "cat", ".")
    return Item(item_id, variant, "NOUN VERB", "L", tokens, ("_",) * len(tokens), ("_",) * len(tokens),
                correct, wrong, verb[:-1], "Plur" if plural else "Sing", 1, 2 + len(middle),
                int(attractor is not None and attractor.endswith("s") != plural), False,
                "original" if variant == 0 else "nonce")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A tiny LSTM run with 3 snapshots, and a test set of its toy language."""
    root = tmp_path_factory.mktemp("curve")
    corpus = make_corpus(root / "corpus")
    train_lm([corpus], root / "run", arch="lstm", seed=2, max_steps=30, snapshot_every=10, **TINY)
    items = []
    for i, (noun, verb) in enumerate(zip(NOUNS * 2, VERBS * 3)):
        for variant, plural in ((0, i % 2 == 0), (1, i % 3 == 0)):
            items.append(item(f"i{i}", variant, noun, verb, plural, NOUNS[(i + 1) % 8] + "s" if i % 4 else None))
    (root / "items").mkdir()
    write_items(root / "items" / "items.tsv", items)
    return root


def score(*args):
    r = run_agree("score", *map(str, args))
    assert r.exit_code == 0, r.output
    return r


def test_points_equal_scoring_each_snapshot_apart(setup, tmp_path):
    """Each snapshot's rows in the curve run's items.tsv are those of scoring it alone, and
    its curve points are the counts of those rows, with their Wilson intervals."""
    score(setup / "items", "--model", setup / "run", "--curve", "--out", tmp_path / "curve")
    rows = read_curve_tsv(tmp_path / "curve" / "learning_curve.tsv")
    curve_items = (tmp_path / "curve" / "items.tsv").read_text().splitlines()
    names = list(dict.fromkeys(r.snapshot for r in rows))
    assert names == ["step-000010", "step-000020", "step-000030"]
    for name in names:
        alone = tmp_path / name
        score(setup / "items", "--model", setup / "run" / "snapshots" / name, "--out", alone)
        lines = (alone / "items.tsv").read_text().splitlines()
        model = lines[0].split("\t").index("model")
        assert [x for x in curve_items[1:] if x.split("\t")[model] == name] == lines[1:]
        scored = read_scored(alone / "items.tsv")
        summary = json.loads((alone / "summary.json").read_text())
        for r in (r for r in rows if r.snapshot == name):
            mine = (scored.condition == r.condition) & _in_cell(scored, r)
            decided = mine & ~scored.undecidable
            assert (r.items, r.right, r.undecidable) == (int(decided.sum()), int(scored.correct[decided].sum()),
                                                        int(mine.sum() - decided.sum()))
            cell = [c for c in summary["accuracy"] if c["condition"] == r.condition and c["by"] == r.breakdown
                    and str(c["value"] if c["value"] is not None else "") == r.value]
            assert cell and cell[0]["accuracy"] == pytest.approx(r.accuracy) and cell[0]["items"] == r.items


def _in_cell(s, r: CurveRow) -> np.ndarray:
    """The rows of the scored table ``s`` in the curve row's cell."""
    if r.breakdown == "all":
        return np.ones(len(s), dtype=bool)
    if r.breakdown == "attractors":
        return s.attractors.astype(str) == r.value
    return np.array([f"L {c}" == r.value for c in s.construction.tolist()])  # every test item is L


def test_files(setup, tmp_path):
    r = score(setup / "items", "--model", setup / "run", "--curve", "--out", tmp_path / "a")
    out = tmp_path / "a"
    assert "run: 3 snapshots (step-000010 ... step-000030); the final model is not a point" in r.stderr
    assert "curve run: 3 points by tokens (positions from config.json)" in r.stderr
    rows = read_curve_tsv(out / "learning_curve.tsv")
    first = [x for x in rows if x.snapshot == "step-000010" and x.breakdown == "all" and x.condition == "original"]
    assert first[0].step == 10 and first[0].tokens_seen == 320 and first[0].order == 1
    assert first[0].valid_ppl > 1 and 0 <= first[0].ci_low <= first[0].accuracy <= first[0].ci_high <= 100
    assert {x.breakdown for x in rows} == {"all", "attractors", "construction"}
    assert (out / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "summary.md").read_text()
    assert md.index("## Learning curve") < md.index("## Overall")
    assert "### run: 3 snapshots, step-000010 (step 10, 320 tokens) to step-000030 (step 30, 960 tokens)" in md
    assert "Order reached (overall and by attractors):" in md
    assert json.loads((out / "manifest.json").read_text())["parameters"]["curve"] is True
    score(setup / "items", "--model", setup / "run", "--curve", "--out", tmp_path / "b")
    for name in ("learning_curve.tsv", "learning_curve.png", "summary.md"):
        assert (out / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_deleted_snapshot_is_an_error(setup, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(setup / "run", run)
    shutil.rmtree(run / "snapshots" / "step-000020")
    r = run_agree("score", setup / "items", "--model", run, "--curve", "--out", tmp_path / "c")
    assert r.exit_code == 1 and r.stderr.endswith(
        f"Error: {run / 'snapshots'}: 1 of the run's 3 snapshots missing (number 2, between step-000010 and "
        f"step-000030); to draw the curve without them, give the snapshots left as the models "
        f"('{run / 'snapshots' / 'step-*'}')\n")
    shutil.rmtree(run / "snapshots" / "step-000030")           # the last one: the run says it made 3
    r = run_agree("score", setup / "items", "--model", run, "--curve", "--out", tmp_path / "c")
    assert r.exit_code == 1 and "2 of the run's 3 snapshots missing (number 2, after step-000010, number 3" \
        in r.stderr and not (tmp_path / "c").exists()
    score(setup / "items", "--model", f"{run}/snapshots/step-*", "--curve", "--out", tmp_path / "c")
    assert {x.snapshot for x in read_curve_tsv(tmp_path / "c" / "learning_curve.tsv")} == {"step-000010"}


def test_models_without_a_position_take_the_order_given(setup, tmp_path):
    for name in ("late", "early"):
        shutil.copytree(setup / "run" / "snapshots" / "step-000010", tmp_path / "ckpt" / name)
        config = json.loads((tmp_path / "ckpt" / name / "config.json").read_text())
        del config["metrics"]
        (tmp_path / "ckpt" / name / "config.json").write_text(json.dumps(config))
    ckpt = tmp_path / "ckpt"
    r = score(setup / "items", "--model", ckpt / "late", "--model", ckpt / "early", "--curve", "--out", tmp_path / "o")
    assert "curve ckpt: none of its 2 models carries a training position; their order as given is taken" in r.stderr
    rows = read_curve_tsv(tmp_path / "o" / "learning_curve.tsv")
    assert [(x.snapshot, x.order, x.step) for x in rows if x.breakdown == "all" and x.condition == "original"] \
        == [("late", 1, None), ("early", 2, None)]
    # one with a position, one without, in one series: an error
    r = run_agree("score", setup / "items", "--model", f"s={ckpt / 'late'}", "--model",
                  f"s={setup / 'run'}", "--curve", "--out", tmp_path / "p")
    assert r.exit_code == 1 and f"\nError: curve s: no training position for {ckpt / 'late'} while the other " \
        "models of the series have one" in r.stderr


def test_positions_given_and_read(setup, tmp_path):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(setup / "run" / "snapshots" / "step-000010", ckpt / "a")
    shutil.copytree(setup / "run" / "snapshots" / "step-000020", ckpt / "b")
    score(setup / "items", "--model", f"pythia=step=2000,tokens=4M:{ckpt / 'b'}",
          "--model", f"pythia=step=1000,tokens=2M:{ckpt / 'a'}", "--model", setup / "run", "--curve",
          "--out", tmp_path / "o")
    rows = [x for x in read_curve_tsv(tmp_path / "o" / "learning_curve.tsv")
            if x.breakdown == "all" and x.condition == "original"]
    assert [(x.series, x.snapshot, x.order, x.step, x.tokens_seen) for x in rows] == [
        ("pythia", "a", 1, 1000, 2_000_000), ("pythia", "b", 2, 2000, 4_000_000),
        ("run", "step-000010", 1, 10, 320), ("run", "step-000020", 2, 20, 640), ("run", "step-000030", 3, 30, 960)]


def test_training_position(tmp_path):
    (tmp_path / "checkpoint-500").mkdir()
    assert training_position(tmp_path / "checkpoint-500") == Position(500, None, "directory name")
    (tmp_path / "checkpoint-500" / "trainer_state.json").write_text(
        '{"global_step": 480, "num_input_tokens_seen": 983040}')
    assert training_position(tmp_path / "checkpoint-500") == Position(480, 983040, "trainer_state.json")
    (tmp_path / "pythia-70m-step143000").mkdir()
    assert training_position(tmp_path / "pythia-70m-step143000").step == 143000
    (tmp_path / "final").mkdir()
    assert training_position(tmp_path / "final") is None
    assert _split_value("step=1k:d") == ("", Position(1000, None, "given"), "d")
    assert _split_value("en=tokens=2B,step=7:hf:d") == ("en", Position(7, 2 * 10**9, "given"), "hf:d")
    assert _split_value("en=runs/x") == ("en", None, "runs/x")


def test_bad_values(setup, tmp_path):
    for value, message in [(f"step=1.5:{setup / 'run'}", "'1.5' is not a whole number"),
                           (f"step=10:{setup / 'run'}/snapshots/*", "a position given for 3 models"),
                           (f"step=10:s={setup / 'run'}", "write the series first: SERIES=step=N:DIR")]:
        r = run_agree("score", setup / "items", "--model", value, "--curve", "--out", tmp_path / "o")
        assert r.exit_code == 1 and message in r.stderr and "Traceback" not in r.output, r.output
    r = run_agree("score", setup / "items", "--model", f"a=step=10:{setup / 'run' / 'snapshots' / 'step-000010'}",
                  "--model", f"a=step=10:{setup / 'run' / 'snapshots' / 'step-000020'}", "--curve", "--out", tmp_path / "o")
    assert r.exit_code == 1 and "are both at steps 10" in r.stderr


def row(order: int, low: float, cond: str = "original") -> CurveRow:
    return CurveRow("s", f"m{order}", order, order, None, None, cond, "all", "", 10, 5, 0, 60.0, low, 70.0)


def test_emergence_is_the_first_snapshot_above_chance_for_good():
    rows = [row(1, 55), row(2, 45), row(3, 51), row(4, 52),            # above at 1, not at 2: from 3
            row(1, 60, "nonce"), row(2, 61, "nonce"), row(3, 62, "nonce"), row(4, 63, "nonce")]
    found = {e.condition: e for e in emergence(rows)}
    assert found["original"].first.order == 3 and found["nonce"].first.order == 1
    assert [e.condition for e in emergence(rows)] == ["nonce", "original"]
    late = emergence([row(1, 55), row(2, 40)])
    assert late[0].first is None and late[0].last.order == 2
