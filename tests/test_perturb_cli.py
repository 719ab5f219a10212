"""``agree perturb``: output schema, manifest, reproducibility, and pinned errors."""
from __future__ import annotations

import json

import pytest

from conftest import run_agree
from formats.items import read_items, write_items
import numpy as np
import torch

from tests.test_perturb import ANGLES, EN, model_dir, paradigms, write_vectors


@pytest.fixture
def testset(tmp_path):
    d = tmp_path / "en-items"
    d.mkdir()
    write_items(d / "items.tsv", EN)
    paradigms().save(d / "paradigms.tsv")
    (d / "manifest.json").write_text(json.dumps({"command": "extract", "parameters": {"lang": "en"}}))
    return d


def agree(*args):
    return run_agree("perturb", *args, catch_exceptions=False)


def test_writes_same_schema_manifest_and_paradigms(testset, tmp_path):
    out = tmp_path / "q"
    r = agree(testset, "--aspect", "qwerty", "--severity", "0.5", "--pos-group", "nouns", "--seed", 3,
              "--out", out)
    assert r.exit_code == 0, r.output
    items = list(read_items(out))
    assert [i.item_id for i in items] == [i.item_id for i in EN]
    assert {i.perturbation for i in items} == {"qwerty@nouns:0.5"}
    assert (out / "paradigms.tsv").read_text() == (testset / "paradigms.tsv").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == "perturb"
    assert manifest["parameters"]["label"] == "qwerty@nouns:0.5"
    assert manifest["parameters"]["lang"] == "en"
    assert manifest["counts"]["items"] == 3 and manifest["counts"]["changes"] > 0
    assert any(row["path"].endswith("items.tsv") and len(row["sha256"]) == 64 for row in manifest["inputs"])
    assert "qwerty@nouns:0.5: " in r.stderr and "items changed" in r.stderr


def test_same_seed_byte_identical(testset, tmp_path):
    args = ["--aspect", "marks", "--severity", "0.4", "--seed", 5]
    agree(testset, *args, "--out", tmp_path / "a")
    first = {name: (tmp_path / "a" / name).read_bytes() for name in ("items.tsv", "manifest.json", "paradigms.tsv")}
    agree(testset, *args, "--out", tmp_path / "a")   # the same command line (the manifest records it)
    for name, data in first.items():
        assert (tmp_path / "a" / name).read_bytes() == data
    agree(testset, "--aspect", "marks", "--severity", "0.4", "--seed", 6, "--out", tmp_path / "c")
    assert (tmp_path / "a" / "items.tsv").read_bytes() != (tmp_path / "c" / "items.tsv").read_bytes()


def test_aspect_options_and_random_control(testset, tmp_path):
    r = agree(testset, "--aspect", "articles", "--severity", "1", "-o", "mode=swap", "--out", tmp_path / "a")
    assert r.exit_code == 0, r.output
    assert list(read_items(tmp_path / "a"))[0].tokens[0] == "A"
    r = agree(testset, "--aspect", "qwerty", "--severity", "0.5", "--pos-group", "random",
              "--match-group", "nouns", "--direction", "end", "--out", tmp_path / "r")
    assert r.exit_code == 0, r.output
    assert list(read_items(tmp_path / "r"))[0].perturbation == "qwerty@random~nouns/end:0.5"


def test_semantic_with_word2vec_file(testset, tmp_path):
    vectors = write_vectors(tmp_path / "v.txt")
    r = agree(testset, "--aspect", "semantic", "--severity", "0.6", "--vectors", vectors, "--out", tmp_path / "s")
    assert r.exit_code == 0, r.output
    items = list(read_items(tmp_path / "s"))
    assert items[0].tokens[4] == "want" and items[0].perturbation == "semantic:0.6"
    counts = json.loads((tmp_path / "s" / "manifest.json").read_text())["counts"]
    assert counts["replaced"] == 3 and counts["missed"] == 0


def test_semantic_with_model_embeddings(testset, tmp_path):
    """The input embeddings of a model directory work like a word2vec file."""
    words = ["<eos>", "<unk>", *ANGLES]
    radians = np.deg2rad([0.0, 0.0, *ANGLES.values()])
    emb = torch.tensor(np.stack([np.cos(radians), np.sin(radians)], axis=1), dtype=torch.float32)
    model = model_dir(tmp_path, {"encoder.weight": emb, "decoder.weight": emb.clone()}, words)
    r = agree(testset, "--aspect", "semantic", "--severity", "0.3", "--vectors", model, "--out", tmp_path / "s")
    assert r.exit_code == 0, r.output
    assert list(read_items(tmp_path / "s"))[0].tokens[4] == "sell"


@pytest.mark.parametrize("args, message", [
    (["--aspect", "qwerty", "--severity", "1.5"],
     "Error: qwerty: severity 1.5 out of range; it is a per-word probability in [0, 1]\n"),
    (["--aspect", "semantic", "--severity", "0.5"],
     "Error: semantic perturbation needs word vectors (--vectors FILE|MODEL_DIR: a word2vec text file "
     "or a trained model directory)\n"),
    (["--aspect", "semantic", "--severity", "1.2"],
     "Error: semantic: severity 1.2 out of range; it is the target cosine similarity of replacement "
     "verbs in [-1, 1]\n"),
    (["--aspect", "articles", "--severity", "0.5", "-o", "mode"],
     "Error: --option 'mode': expected KEY=VALUE\n"),
])
def test_bad_input_is_one_error_line(testset, tmp_path, args, message):
    out = tmp_path / "out"
    r = agree(testset, *args, "--out", out)
    assert (r.exit_code, r.output) == (1, message)
    assert not out.exists()


@pytest.mark.parametrize("args, message", [
    (["--aspect", "typo", "--severity", "0.1"],
     "Error: Invalid value for '--aspect': 'typo' is not one of 'articles', 'digits', 'drop-char', "
     "'drop-space', 'marks', 'qwerty', 'semantic', 'swap'."),
    (["--aspect", "swap", "--severity", "0.5", "--pos-group", "adverbs"],
     "Error: Invalid value for '--pos-group': 'adverbs' is not one of 'function', 'mid', 'nouns', "
     "'verbs', 'content', 'random'."),
    (["--aspect", "qwerty", "--severity", "0.5", "--pos-group", "random", "--match-group", "random"],
     "Error: Invalid value for '--match-group': 'random' is not one of 'function', 'mid', 'nouns', "
     "'verbs', 'content'."),
])
def test_closed_sets_are_usage_errors_listing_the_choices(testset, tmp_path, args, message):
    """--aspect, --pos-group and --match-group are checked by the CLI before any work (exit 2)."""
    r = agree(testset, *args, "--out", tmp_path / "out")
    assert r.exit_code == 2 and r.output.rstrip().endswith(message), r.output
    assert not (tmp_path / "out").exists()


def test_vectors_only_for_semantic(testset, tmp_path):
    vectors = write_vectors(tmp_path / "v.txt")
    r = agree(testset, "--aspect", "swap", "--severity", "0.5", "--vectors", vectors, "--out", tmp_path / "o")
    assert (r.exit_code, r.output) == (1, "Error: swap: --vectors and --paradigms are for the semantic "
                                          "aspect only\n")


def test_help_has_example():
    r = run_agree("perturb", "--help")
    assert r.exit_code == 0 and "Example:\n    agree perturb en-items --aspect qwerty" in r.output
