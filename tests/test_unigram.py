"""lm.unigram: the frequency baseline, trained on a prepared corpus and loaded by kind."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lm.load import load_model
from lm.corpus.prepare import prepare_corpus, read_counts
from lm.errors import LMError
from lm.unigram import UnigramScorer, train_unigram

# 8:1:1 of 100 sentences; which lands where depends on the seed, so the tests recompute
# expectations from the files. With 9 vocabulary words, "zebra" (once) is always outside.
LINES = ["the dog runs ."] * 40 + ["the dogs run ."] * 20 + ["a cat sleeps ."] * 39 + ["the zebra runs ."]


@pytest.fixture
def model(tmp_path):
    src = tmp_path / "text.txt"
    src.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    corpus = prepare_corpus([src], tmp_path / "corpus", "en", vocab_size=9, max_unk=1.0)
    metrics = train_unigram(corpus, tmp_path / "model")
    return corpus, tmp_path / "model", metrics


def expected_logp(corpus):
    """Add-one estimates over vocab.txt with OOV words counted as <unk>, one <eos> per sentence."""
    vocab = corpus.vocab.read_text().split()
    counts = dict.fromkeys(vocab, 0)
    for w, n in read_counts(corpus.counts).items():
        counts[w if w in counts and w not in ("<eos>", "<unk>") else "<unk>"] += n
    counts["<eos>"] = len(corpus.train.read_text().splitlines())
    total = sum(counts.values()) + len(vocab)
    return {w: math.log((c + 1) / total) for w, c in counts.items()}


def test_add_one_probabilities_and_valid_perplexity(model):
    corpus, model_dir, metrics = model
    logp = expected_logp(corpus)
    scorer = load_model(model_dir)
    assert isinstance(scorer, UnigramScorer) and scorer.kind == "unigram" and scorer.name == "model"
    assert math.isclose(sum(math.exp(v) for v in logp.values()), 1.0)
    # valid ppl: words of valid.txt plus <eos>, <unk> targets excluded
    targets = [w for line in corpus.valid.read_text().splitlines() for w in line.split() + ["<eos>"]]
    scored = [logp[w] for w in targets if w in logp and w != "<unk>"]
    assert metrics["valid_tokens"] == len(scored)
    assert math.isclose(metrics["valid_ppl"], math.exp(-sum(scored) / len(scored)))
    assert metrics["vocab_size"] == 11
    config = json.loads((model_dir / "config.json").read_text())
    assert config["kind"] == "unigram" and config["corpus_sha256"] == corpus.sha256
    assert (model_dir / "vocab.txt").read_bytes() == corpus.vocab.read_bytes()
    assert (model_dir / "train_log.tsv").read_text().startswith("epoch\ttrain_tokens")


def test_scores_ignore_prefix_and_rank_by_frequency(model):
    corpus, model_dir, _ = model
    logp = expected_logp(corpus)
    scorer = load_model(model_dir)
    out = scorer.logprob([["the", "dog"], []], [["runs", "run"], ["zebra", "qwerty"]])
    assert out.dtype == np.float64 and out.shape == (2, 2)
    assert out[0, 0] == pytest.approx(logp["runs"]) and out[0, 1] == pytest.approx(logp["run"])
    assert out[0, 0] > out[0, 1]  # the more frequent form wins, as in the paper's baseline
    assert out[1, 0] == out[1, 1] == pytest.approx(logp["<unk>"])  # outside the 9-word vocabulary
    assert scorer.in_vocab("runs") and not scorer.in_vocab("zebra")
    assert not scorer.in_vocab("<unk>") and not scorer.in_vocab("<eos>")
    assert scorer.count("the") == read_counts(corpus.counts)["the"]


def test_bad_model_directories(model, tmp_path):
    _, model_dir, _ = model
    scorer = load_model(model_dir)
    with pytest.raises(LMError, match="target list 1 has 1 candidates, expected 2"):
        scorer.logprob([[], []], [["a", "b"], ["c"]])
    (model_dir / "counts.tsv").unlink()
    with pytest.raises(LMError, match="unigram model without counts.tsv"):
        load_model(model_dir)


def test_loader_options_are_declared_not_swallowed(model):
    """lm.load.load_model hands a kind only the options its loader declares: the ones the
    command line gives every model (device, threads, convention, ...) are left out for a
    kind that takes none, any other is an error naming the option and the kind."""
    _, model_dir, _ = model
    shared = load_model(model_dir, device="cpu", threads=2, convention="agree", carry_state=False)
    assert shared.kind == "unigram" and shared.name == "model"
    with pytest.raises(LMError, match=r"^unigram models take no option 'temperature' \(they take: none\)$"):
        load_model(model_dir, temperature=0.5)
    with pytest.raises(LMError, match=r"unknown model kind 'nonsuch'"):
        (model_dir / "config.json").write_text(json.dumps({"kind": "nonsuch"}), encoding="utf-8")
        load_model(model_dir)
