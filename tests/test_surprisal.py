"""``agree score --surprisal``: tokens.tsv, whose per-sentence sums are the
sentence-method log-probabilities."""
from __future__ import annotations

import csv
import math
from collections import defaultdict

import pytest

from conftest import run_agree
from formats.items import write_items
from agreement.scoring.surprisal import COLUMNS

from test_minimal_pairs import ITEMS, count_models, neural_dir, VOCAB  # noqa: F401  (fixture)


def run(*args):
    return run_agree("score", *args)


def read_tsv(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def sums(rows):
    out = defaultdict(float)
    for r in rows:
        out[(r["model"], r["item_id"], r["sentence"])] += float(r["surprisal"])
    return out


@pytest.fixture
def testset(tmp_path):
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", ITEMS)
    return tmp_path / "ext"


def test_sums_equal_the_sentence_log_probabilities(tmp_path, testset, count_models):
    models = [m for m in count_models if m is not None]
    neural, _ = neural_dir(tmp_path / "lstm", "lstm", ["<eos>", "<unk>", "the", "dog", "dogs", "runs", "run",
                                                       "near", "cats", "."])
    models.append(neural)
    args = [a for m in models for a in ("--model", m)]
    r = run(testset, *args, "--method", "sentence", "--surprisal", "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.stderr
    tokens = read_tsv(tmp_path / "o" / "tokens.tsv")
    assert list(tokens[0]) == list(COLUMNS)
    scored = read_tsv(tmp_path / "o" / "items.tsv")
    assert len(scored) == len(ITEMS) * len(models)
    total = sums(tokens)
    for row in scored:
        assert -total[(row["model"], row["item_id"], "correct")] == pytest.approx(float(row["logp_correct"]), abs=1e-9)
        assert -total[(row["model"], row["item_id"], "wrong")] == pytest.approx(float(row["logp_wrong"]), abs=1e-9)
    first = [t for t in tokens if t["item_id"] == "i1" and t["sentence"] == "wrong" and t["model"] == "uni"]
    assert [(t["token_index"], t["word"], t["pieces"]) for t in first] == [
        ("0", "the", "the"), ("1", "dogs", "dogs"), ("2", "runs", "runs"), ("3", ".", ".")]
    assert all(float(t["surprisal"]) > 0 for t in tokens)


def test_bits_and_target_method(tmp_path, testset, count_models):
    uni = count_models[0]
    for units in ("nats", "bits"):
        r = run(testset, "--model", uni, "--surprisal", "--units", units, "--out", tmp_path / units, "-q")
        assert r.exit_code == 0, r.stderr
    nats, bits = read_tsv(tmp_path / "nats" / "tokens.tsv"), read_tsv(tmp_path / "bits" / "tokens.tsv")
    assert len(nats) == len(bits) == 2 * sum(len(it.tokens) for it in ITEMS)
    for a, b in zip(nats, bits):
        assert float(b["surprisal"]) == pytest.approx(float(a["surprisal"]) / math.log(2), rel=1e-12)
    # target method rows keep their target scores; tokens.tsv is written all the same
    scored = read_tsv(tmp_path / "nats" / "items.tsv")
    assert {r["method"] for r in scored} == {"target"}
    r = run(testset, "--model", uni, "--units", "dB", "--out", tmp_path / "x")
    assert r.exit_code == 2 and "Invalid value for '--units'" in r.stderr


def test_same_inputs_give_identical_files(tmp_path, testset, count_models):
    args = [testset, "--model", count_models[0], "--method", "sentence", "--surprisal", "-q"]
    for out in ("a", "b"):
        assert run(*args, "--out", tmp_path / out).exit_code == 0
    for name in ("tokens.tsv", "items.tsv", "summary.json", "summary.md", "accuracy_by_construction.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
