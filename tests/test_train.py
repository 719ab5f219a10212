"""lm.training.train.train_lm and lm.neural.train: model directories, resume, bad input, dispatch."""
from __future__ import annotations

import json
import os
import random
import signal
from pathlib import Path

import pytest
import torch

from formats.manifest import write_manifest
from lm.load import load_model
from lm.corpus.prepare import prepare_corpus
from lm.errors import LMError, TrainingInterrupted
from lm.neural.data import eval_layout
from lm.neural.presets import neural_settings
from lm.training.train import partial_dir, train_lm

#: a model small enough that a step takes milliseconds
#: (lr 20 is for hundreds of units; 16 units need a smaller step)
TINY = dict(size="small", emb_size=16, hidden_size=16, batch_size=4, bptt=8, lr=5.0, threads=1)
NOUNS = ["dog", "cat", "girl", "boy", "man", "woman", "child", "bird"]
VERBS = ["runs", "sleeps", "eats", "likes", "sees", "knows"]


def write_text(path: Path, n_sentences: int, seed: int = 0) -> Path:
    """A tokenised toy text, one sentence per line, with agreement-like structure."""
    r = random.Random(seed)
    lines = []
    for _ in range(n_sentences):
        n, v = r.choice(NOUNS), r.choice(VERBS)
        plural = r.random() < 0.5
        subj = n + "s" if plural else n
        verb = v[:-1] if plural else v
        lines.append(f"the {subj} {verb} the {r.choice(NOUNS)} .")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_corpus(directory: Path, n_sentences: int = 300, seed: int = 0) -> Path:
    """A corpus directory as lm.corpus.prepare.prepare_corpus makes it."""
    text = write_text(directory.parent / f"{directory.name}.txt", n_sentences, seed)
    prepare_corpus([text], directory, "en", seed=1)
    write_manifest(directory, "corpus", [text], {"lang": "en"})   # as `agree corpus` does
    return directory


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("c") / "corpus")


def state_dict(model_dir: Path) -> dict:
    return torch.load(model_dir / "model.pt", weights_only=True)["state_dict"]


def log_rows(model_dir: Path) -> list[list[str]]:
    lines = (model_dir / "train_log.tsv").read_text().splitlines()
    assert lines[0] == "epoch\tstep\ttrain_loss\tvalid_ppl\ttokens_per_s\tlr"
    return [line.split("\t") for line in lines[1:]]


class TestLSTM:
    def test_model_directory(self, corpus, tmp_path):
        out = tmp_path / "m"
        result = train_lm([corpus], out, arch="lstm", seed=3, max_steps=10, **TINY)
        assert result.out_dir == out and result.kind == "lstm"
        assert sorted(p.name for p in out.iterdir()) == [
            "config.json", "model.pt", "train_log.tsv", "vocab.txt"]
        assert not partial_dir(out).exists()
        config = json.loads((out / "config.json").read_text())
        assert config["kind"] == "lstm" and config["hidden_size"] == 16 and config["seed"] == 3
        assert config["tokenizer"] == "word" and config["training"]["lr"] == 5.0
        assert config["training"]["clip"] == 0.25 and config["dropout"] == 0.2  # preset
        assert config["corpus_sha256"] and config["lang"] == "en"
        vocab = (out / "vocab.txt").read_text().splitlines()
        assert vocab[:2] == ["<eos>", "<unk>"] and config["vocab_size"] == len(vocab)
        ckpt = torch.load(out / "model.pt", weights_only=True)
        assert ckpt["config"]["vocab_size"] == len(vocab)
        m = result.metrics
        assert m["steps"] == 10 and 1 < m["valid_ppl"] < len(vocab) and m["valid_tokens"] > 0
        assert [r[:2] for r in log_rows(out)] == [["1", "10"]]
        # the scorer reads it through the one loader
        scores = load_model(out).logprob([["the", "dog"], ["the", "dogs"]], [["runs", "run"]] * 2)
        assert scores.shape == (2, 2) and (scores < 0).all()

    def test_learns(self, corpus, tmp_path):
        """Perplexity falls well below the vocabulary size within two epochs."""
        r = train_lm([corpus], tmp_path / "m", arch="lstm", seed=1, epochs=2, **TINY)
        rows = log_rows(tmp_path / "m")
        assert [row[0] for row in rows] == ["1", "2"]
        assert r.metrics["valid_ppl"] < 12 and float(rows[1][2]) < float(rows[0][2])

    def test_same_seed_same_bytes(self, corpus, tmp_path):
        for name in ("a", "b"):
            train_lm([corpus], tmp_path / name, arch="lstm", seed=5, max_steps=6, **TINY)
        for f in ("model.pt", "config.json", "vocab.txt"):
            assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
        train_lm([corpus], tmp_path / "c", arch="lstm", seed=6, max_steps=6, **TINY)
        assert (tmp_path / "a" / "model.pt").read_bytes() \
            != (tmp_path / "c" / "model.pt").read_bytes()

    def test_raw_text_is_prepared_into_out_corpus(self, tmp_path):
        text = write_text(tmp_path / "text.txt", 300)
        train_lm([text], tmp_path / "m", arch="lstm", lang="en", seed=1, max_steps=3, **TINY)
        assert (tmp_path / "m" / "corpus" / "train.txt").is_file()
        config = json.loads((tmp_path / "m" / "config.json").read_text())
        assert config["lang"] == "en"


def test_validation_scores_every_token_once(corpus, tmp_path):
    """The LSTM's validation covers the same targets as the unigram baseline's: every
    word of valid.txt that is in the vocabulary, plus one <eos> per sentence."""
    lstm = train_lm([corpus], tmp_path / "l", arch="lstm", seed=1, max_steps=2, **TINY)
    unigram = train_lm([corpus], tmp_path / "u", arch="unigram")
    assert lstm.metrics["valid_tokens"] == unigram.metrics["valid_tokens"]


def test_eval_layout():
    stream = torch.arange(10, 33)                                   # 23 tokens
    data, scored = eval_layout(stream, 4, eos_id=0)
    assert data.shape == (4, 7) and scored.shape == (4, 6)
    targets = data[:, 1:][scored]
    assert sorted(targets.tolist()) == stream.tolist()             # each exactly once
    assert data[0, 0] == 0 and torch.equal(data[0, 1:], stream[:6])
    assert torch.equal(data[1, 0], data[0, -1])                     # rows overlap by one


class TestResume:
    def interrupted(self, corpus, out, at_step, **kw):
        """Train until a real SIGINT arrives after step ``at_step``."""
        def on_step(step):
            if step == at_step:
                os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(TrainingInterrupted, match=r"step 5; checkpoint saved in .* and resume$"):
            train_lm([corpus], out, arch="lstm", seed=2, on_step=on_step, **kw, **TINY)

    def test_interrupted_and_resumed_equals_uninterrupted(self, corpus, tmp_path):
        """SIGINT at step 5 (mid-epoch 1), resume to step 60 (into epoch 2): same weights,
        same log, same step count as one uninterrupted run; the loss is not restarted."""
        steps_per_epoch = 53             # 240 training sentences x 7 tokens / 4 rows / 8
        straight = tmp_path / "straight"
        train_lm([corpus], straight, arch="lstm", seed=2, max_steps=60, epochs=3, **TINY)
        resumed = tmp_path / "resumed"
        self.interrupted(corpus, resumed, 5, max_steps=60, epochs=3)
        assert not resumed.exists() and (partial_dir(resumed) / "checkpoint.pt").is_file()
        r = train_lm([corpus], resumed, arch="lstm", seed=2, max_steps=60, epochs=3,
                     resume=True, **TINY)
        assert r.metrics["steps"] == 60 and steps_per_epoch < 60
        assert not partial_dir(resumed).exists()
        a, b = state_dict(straight), state_dict(resumed)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        rows_a, rows_b = log_rows(straight), log_rows(resumed)
        assert [r[:4] for r in rows_a] == [r[:4] for r in rows_b]
        assert [r[1] for r in rows_b] == [str(steps_per_epoch), "60"]

    def test_checkpoint_of_another_run_is_refused(self, corpus, tmp_path):
        out = tmp_path / "m"
        self.interrupted(corpus, out, 5, max_steps=40)
        with pytest.raises(LMError, match=r"m.partial holds an interrupted training run: "
                                          r"continue it with resume, or delete"):
            train_lm([corpus], out, arch="lstm", seed=2, max_steps=40, **TINY)
        opts = {**TINY, "hidden_size": 32, "emb_size": 32}
        with pytest.raises(LMError, match=r"belongs to another training run; it differs in "
                                          r"model emb_size \(16 then, 32 now\); model hidden_size"):
            train_lm([corpus], out, arch="lstm", seed=2, max_steps=40, resume=True, **opts)
        with pytest.raises(LMError, match=r"option clip \(0.25 then, 1.0 now\)"):
            train_lm([corpus], out, arch="lstm", seed=2, max_steps=40, resume=True,   # --lr may
                     **{**TINY, "clip": 1.0})                       # change (after a divergence)
        (partial_dir(out) / "checkpoint.pt").write_bytes(b"not a checkpoint")
        with pytest.raises(LMError, match=r"checkpoint.pt: unreadable checkpoint"):
            train_lm([corpus], out, arch="lstm", seed=2, max_steps=40, resume=True, **TINY)
        torch.save({"step": 3}, partial_dir(out) / "checkpoint.pt")
        with pytest.raises(LMError, match=r"not a checkpoint of `agree train-lm`"):
            train_lm([corpus], out, arch="lstm", seed=2, max_steps=40, resume=True, **TINY)

    def test_nothing_to_resume(self, corpus, tmp_path):
        with pytest.raises(LMError, match=r"nothing to resume: no checkpoint in .*m.partial"):
            train_lm([corpus], tmp_path / "m", arch="lstm", seed=2, resume=True, **TINY)
        assert not partial_dir(tmp_path / "m").exists()


class TestBadInput:
    def test_fewer_tokens_than_one_batch(self, tmp_path):
        tiny = make_corpus(tmp_path / "tiny", n_sentences=12)
        with pytest.raises(LMError, match=r"train.txt: \d+ tokens \(with <eos>\) is fewer than "
                                          r"one batch \(64 rows x 36 = 2304\)"):
            train_lm([tiny], tmp_path / "m", arch="lstm", size="small", seed=1, batch_size=64)
        assert not (tmp_path / "m").exists() and not partial_dir(tmp_path / "m").exists()

    def test_empty_training_split(self, corpus, tmp_path):
        empty = tmp_path / "empty"
        empty.mkdir()
        for f in ("valid.txt", "test.txt", "vocab.txt", "counts.tsv"):
            (empty / f).write_bytes((corpus / f).read_bytes())
        (empty / "train.txt").write_text("")
        with pytest.raises(LMError, match=r"train.txt: the training split has no words"):
            train_lm([empty], tmp_path / "m", arch="lstm", seed=1, **TINY)
        assert not (tmp_path / "m").exists() and not partial_dir(tmp_path / "m").exists()

    def test_empty_text_input(self, tmp_path):
        (tmp_path / "empty.txt").write_text("")
        with pytest.raises(LMError, match=r"empty corpus"):
            train_lm([tmp_path / "empty.txt"], tmp_path / "m", arch="lstm", lang="en", seed=1,
                     **TINY)
        assert not partial_dir(tmp_path / "m").exists()

    def test_unknown_arch_and_options(self, corpus, tmp_path):
        with pytest.raises(LMError, match=r"unknown architecture 'gru' \(known: lstm, "
                                          r"transformer, kn5, unigram\)"):
            train_lm([corpus], tmp_path / "m", arch="gru")
        with pytest.raises(LMError, match=r"^arch kn5 does not take hidden_size$"):
            train_lm([corpus], tmp_path / "m", arch="kn5", hidden_size=10)
        with pytest.raises(LMError, match=r"^arch lstm does not take order$"):
            train_lm([corpus], tmp_path / "m", arch="lstm", order=3)
        with pytest.raises(LMError, match=r"tied weights need emb_size == hidden_size"):
            train_lm([corpus], tmp_path / "m", arch="lstm", tied=True, emb_size=8, hidden_size=16)
        with pytest.raises(LMError, match=r"^lang is needed"):
            train_lm([corpus / "train.txt"], tmp_path / "m", arch="unigram")
        assert not partial_dir(tmp_path / "m").exists()


def test_transformer_with_sentencepiece(corpus, tmp_path):
    out = tmp_path / "tf"
    r = train_lm([corpus], out, arch="transformer", seed=1, max_steps=8, tokenizer="sentencepiece",
                 sp_vocab_size=30, heads=2, max_len=8, **TINY)
    assert {"spm.model", "vocab.txt", "model.pt"} <= {p.name for p in out.iterdir()}
    config = json.loads((out / "config.json").read_text())
    assert config["kind"] == "transformer" and config["tokenizer"] == "sentencepiece"
    assert config["vocab_size"] == len((out / "vocab.txt").read_text().splitlines())
    assert r.metrics["valid_ppl"] > 1
    scores = load_model(out).logprob([["the", "dogs"]], [["run", "runs"]])
    assert scores.shape == (1, 2) and (scores < 0).all()


def test_paper_preset_is_the_recipe():
    config, options = neural_settings("lstm", "paper", seed=1111)
    assert (config.kind, config.emb_size, config.hidden_size, config.layers, config.dropout,
            config.tied) == ("lstm", 650, 650, 2, 0.2, False)
    assert (options.optimizer, options.lr, options.lr_decay, options.bptt, options.batch_size,
            options.clip, options.epochs, options.vocab_size) == ("sgd", 20.0, 4.0, 35, 64, 0.25,
                                                                  40, None)
    config, options = neural_settings("lstm", "small", seed=1, options={"hidden_size": 300,
                                                                        "emb_size": 300})
    assert config.hidden_size == 300 and options.vocab_size == 10000


def test_vocab_cap_for_count_models(corpus, tmp_path):
    """--vocab-size cuts the corpus vocabulary for kn5/unigram as for the neural models."""
    r = train_lm([corpus], tmp_path / "u", arch="unigram", vocab_size=5)
    vocab = (tmp_path / "u" / "vocab.txt").read_text().splitlines()
    assert vocab == (corpus / "vocab.txt").read_text().splitlines()[:7]
    assert not (tmp_path / "u" / ".vocab-capped.txt").exists()
    full = train_lm([corpus], tmp_path / "f", arch="unigram")
    assert r.metrics["valid_tokens"] < full.metrics["valid_tokens"]


@pytest.mark.parametrize("arch", ["unigram", "kn5"])
def test_dispatch_to_count_models(corpus, tmp_path, arch):
    kw = {"order": 3} if arch == "kn5" else {}
    r = train_lm([corpus], tmp_path / arch, arch=arch, **kw)
    config = json.loads((tmp_path / arch / "config.json").read_text())
    assert config["kind"] == arch and r.kind == arch
    assert 1 < r.metrics["valid_ppl"] < 40 and r.metrics["valid_tokens"] > 0
    assert not partial_dir(tmp_path / arch).exists()


@pytest.mark.integration
def test_wikipedia_dump_lstm_and_kn5_on_the_same_split(tmp_path):
    """The real dump fragment: corpus prepared into OUT/corpus, a few LSTM steps, and a
    5-gram with the same 10k vocabulary on that corpus scores exactly the same targets."""
    from conftest import shared_path
    dump = shared_path("wiki",
                       "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    lstm = train_lm([dump], tmp_path / "lstm", arch="lstm", lang="en", size="small", seed=1,
                    max_steps=20, threads=1)
    corpus_dir = tmp_path / "lstm" / "corpus"
    assert lstm.metrics["train_tokens"] > 300_000 and lstm.metrics["valid_tokens"] > 30_000
    kn5 = train_lm([corpus_dir], tmp_path / "kn5", arch="kn5", vocab_size=10000)
    assert kn5.metrics["valid_tokens"] == lstm.metrics["valid_tokens"]
    assert 1 < kn5.metrics["valid_ppl"] < lstm.metrics["valid_ppl"]   # 20 steps is no training
