"""The chained end-to-end test: every pipeline command on the command line, each
reading the previous one's output, on a small generated language:

    corpus -> extract -> nonce -> perturb -> train-lm (lstm, transformer) -> score

(``agree demo`` runs the same verbs as library calls; this is the CLI surface.)
"""
from __future__ import annotations

import json

import pytest

from conftest import run_agree
from agreement.demo.synthlang import GrammarConfig, write_synthetic
from formats.items import read_items

TINY_NEURAL = ["--size", "small", "--emb", "16", "--hidden", "16", "--layers", "1", "--batch-size", "4",
               "--bptt", "8", "--max-steps", "6", "--threads", "1", "--seed", "1"]


def agree(*args) -> str:
    r = run_agree(*args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """Run the whole chain once; returns its root directory."""
    root = tmp_path_factory.mktemp("chain")
    write_synthetic(root / "synth", seed=3, sentences=300, corpus_tokens=30_000, config=GrammarConfig(lexicon=0.25))
    agree("corpus", root / "synth" / "corpus.txt", "--lang", "synth", "--out", root / "corpus", "-q")
    agree("extract", root / "synth" / "treebank.conllu", "--lang", "synth", "--vocab", root / "corpus",
          "--out", root / "extract", "-q")
    agree("nonce", root / "extract", "--n", "2", "--vocab", root / "corpus", "--seed", "1",
          "--out", root / "nonce", "-q")
    agree("perturb", root / "nonce", "--aspect", "qwerty", "--severity", "0.3", "--pos-group", "nouns",
          "--seed", "1", "--out", root / "noisy", "-q")
    agree("train-lm", root / "corpus", "--arch", "lstm", *TINY_NEURAL, "--out", root / "lstm", "-q")
    agree("train-lm", root / "corpus", "--arch", "transformer", "--heads", "2", "--max-len", "8", *TINY_NEURAL,
          "--out", root / "transformer", "-q")
    table = agree("score", root / "nonce", root / "noisy", "--model", root / "lstm", "--model",
                  root / "transformer", "--out", root / "score", "-q")
    (root / "table.tsv").write_text(table, encoding="utf-8")
    return root


@pytest.mark.slow
def test_every_step_wrote_its_directory_and_manifest(chain):
    for name, command in (("corpus", "corpus"), ("extract", "extract"), ("nonce", "nonce"), ("noisy", "perturb"),
                          ("lstm", "train-lm"), ("transformer", "train-lm"), ("score", "score")):
        manifest = json.loads((chain / name / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["command"] == command and manifest["argv"][0] == command, name
    assert json.loads((chain / "transformer" / "config.json").read_text())["kind"] == "transformer"


@pytest.mark.slow
def test_perturbed_items_keep_their_targets(chain):
    nonce = {(it.item_id, it.variant): it for it in read_items(chain / "nonce")}
    noisy = list(read_items(chain / "noisy"))
    assert len(noisy) == len(nonce) > 0
    changed = 0
    for it in noisy:
        before = nonce[(it.item_id, it.variant)]
        assert (it.correct, it.wrong, it.target_index) == (before.correct, before.wrong, before.target_index)
        assert it.perturbation.endswith("qwerty@nouns:0.3")
        changed += it.tokens != before.tokens
    assert changed > 0


@pytest.mark.slow
def test_both_models_scored_every_item_of_both_sets(chain):
    rows = (chain / "score" / "items.tsv").read_text(encoding="utf-8").splitlines()
    header = rows[0].split("\t")
    fields = [dict(zip(header, r.split("\t"))) for r in rows[1:]]
    n_items = len(list(read_items(chain / "nonce"))) + len(list(read_items(chain / "noisy")))
    for model in ("lstm", "transformer"):
        mine = [f for f in fields if f["model"] == model]
        assert len(mine) == n_items, model
        assert all(float(f["logp_correct"]) < 0 and float(f["logp_wrong"]) < 0 for f in mine)
    table = (chain / "table.tsv").read_text(encoding="utf-8")
    assert "lstm" in table and "transformer" in table
