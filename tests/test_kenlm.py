"""The 5-gram backend: a real lmplz build, queried through the kenlm module."""
from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

from lm.load import load_model
from lm.corpus.prepare import load_corpus
from lm.errors import LMError
from lm.kenlm.scorer import LN10, UNK, find_tool, train_kn5

NOUNS = [("dog", "dogs"), ("cat", "cats"), ("boy", "boys"), ("girl", "girls")]
VERBS = [("runs", "run"), ("sleeps", "sleep"), ("eats", "eat")]


def make_corpus(root: Path, n_train: int = 1500, seed: int = 0) -> Path:
    """A corpus directory in the format of lm.corpus.prepare (train/valid/test/vocab/counts)."""
    rng = random.Random(seed)

    def sentence():
        n = rng.randrange(2)
        return f"the {rng.choice(NOUNS)[n]} {rng.choice(VERBS)[n]} ."

    root.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    for split, k in (("train", n_train), ("valid", 200), ("test", 200)):
        lines = [sentence() for _ in range(k)]
        lines[0] = "the <unk> <s> runs ."  # symbols lmplz itself reserves (WikiText has <unk>)
        (root / f"{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if split == "train":
            for line in lines:
                for w in line.split():
                    counts[w] = counts.get(w, 0) + 1
    words = sorted((w for w in counts if w not in ("<unk>", "<s>")), key=lambda w: (-counts[w], w))
    words.remove("eat")  # one training word outside the vocabulary: the <unk> path
    (root / "vocab.txt").write_text("\n".join(["<eos>", "<unk>"] + words) + "\n", encoding="utf-8")
    (root / "counts.tsv").write_text("".join(f"{w}\t{counts[w]}\n" for w in sorted(counts)), encoding="utf-8")
    (root / "manifest.json").write_text('{"command": "corpus", "parameters": {"lang": "en"}}\n')
    return root


@pytest.fixture(scope="module")
def kn_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("kn")
    corpus = load_corpus(make_corpus(root / "corpus"))
    metrics = train_kn5(corpus, root / "model", order=3)
    return root / "model", metrics


def test_training_writes_a_model_directory_with_finite_perplexity(kn_model):
    model_dir, metrics = kn_model
    for name in ("model.binary", "vocab.txt", "config.json", "train_log.tsv"):
        assert (model_dir / name).exists(), name
    assert 1.0 < metrics["valid_ppl"] < 20.0
    assert load_model(model_dir).kind == "kn5"


def test_prefix_state_scores_equal_whole_sentence_differences(kn_model):
    """log P(w | prefix) from the state API equals score(prefix w) - score(prefix), in ln units."""
    import kenlm

    model_dir, _ = kn_model
    scorer = load_model(model_dir)
    raw = kenlm.Model(str(model_dir / "model.binary"))
    prefix, cands = ["the", "cat"], ["sleeps", "sleep"]
    got = scorer.logprob([prefix], [cands])[0]
    for j, w in enumerate(cands):
        expected = (raw.score(" ".join(prefix + [w]), bos=True, eos=False)
                    - raw.score(" ".join(prefix), bos=True, eos=False)) * LN10
        assert got[j] == pytest.approx(expected, abs=1e-5)


def test_the_model_learned_agreement_and_maps_unknown_words(kn_model):
    scorer = load_model(kn_model[0])
    lp = scorer.logprob([["the", "dog"], ["the", "dogs"]], [["runs", "run"], ["runs", "run"]])
    assert lp[0, 0] > lp[0, 1] and lp[1, 1] > lp[1, 0]
    assert not scorer.in_vocab("eat") and scorer.in_vocab("eats")
    # an unknown word is scored as the shared placeholder, not as KenLM's own <unk>
    a = scorer.logprob([["the", "boys"]], [["eat", "zzz"]])[0]
    assert a[0] == pytest.approx(a[1]) and math.isfinite(a[0])
    assert UNK not in ("eat", "zzz")


def test_missing_lmplz_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("AGREE_KENLM_BIN", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LMError, match=r"lmplz.*not found: build it into this environment with `agree setup kenlm`"):
        find_tool("lmplz")


def test_a_corrupt_model_file_is_a_clear_error(kn_model, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("config.json", "vocab.txt"):
        (bad / name).write_bytes((kn_model[0] / name).read_bytes())
    (bad / "model.binary").write_bytes(b"not a model")
    with pytest.raises(LMError, match="not a KenLM model"):
        load_model(bad)
