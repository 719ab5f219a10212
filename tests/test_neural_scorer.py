"""The neural scorer (lm/neural/scorer.py, lm/corpus/subword.py) against the naive full-softmax computation.

Every reference value here is computed the slow, obvious way: run the model over
``[<eos>] + prefix + target`` and read the log-softmax. The scorer must give the
same numbers while computing only the last position's candidate logits and
normaliser, in packed/padded batches of mixed lengths.
"""
from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
import torch

from lm.load import load_model
from lm.errors import LMError
from lm.neural.models import LMConfig, build_model
from lm.neural.prefixes import prefix_steps
from lm.neural.scorer import NeuralScorer
from lm.corpus.subword import WORD_START, SubwordVocab, piece_vocabulary, train_sentencepiece

WORDS = [f"w{i}" for i in range(40)]
VOCAB = ["<eos>", "<unk>"] + WORDS
TOL = 1e-5


def make_model_dir(path, kind, vocab, *, tokenizer="word", spm=None, seed=0, **fields):
    """A model directory laid out as ``agree train-lm`` writes it, random weights.

    Dropout is non-zero (so a scorer that forgot ``eval()`` would fail) and the
    decoder bias random (so a scorer that dropped it would fail). Returns
    (directory, the model in eval mode).
    """
    arch = dict(emb_size=12, hidden_size=16, layers=2, heads=2, max_len=64, dropout=0.3)
    arch.update(fields)
    cfg = LMConfig(kind=kind, vocab_size=len(vocab), tokenizer=tokenizer, **arch)
    torch.manual_seed(seed)
    model = build_model(cfg)
    with torch.no_grad():
        model.decoder.bias.normal_()
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({**cfg.to_dict(), "seed": seed}))
    torch.save({"state_dict": model.state_dict(), "config": cfg.to_dict()}, path / "model.pt")
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    if spm is not None:
        shutil.copyfile(spm, path / "spm.model")
    return path, model.eval()


def naive_logprob(model, ids: list[int], n_context: int) -> torch.Tensor:
    """Log-softmax over the whole vocabulary at every position of ``ids``; returns
    the rows that predict ``ids[n_context:]`` and the row after the last token."""
    with torch.no_grad():
        h, _ = model.features(torch.tensor([ids]))
        logp = torch.log_softmax(model.decoder(h[0]).double(), dim=-1)     # (T, V)
    return logp[n_context - 1:]


def mixed_items(seed=0, n=13):
    """Prefixes of lengths 0..12 (shuffled) with an out-of-vocabulary word, two targets each."""
    rng = random.Random(seed)
    lengths = list(range(n))
    rng.shuffle(lengths)
    prefixes = [[rng.choice(WORDS + ["OOV-word"]) for _ in range(k)] for k in lengths]
    targets = [[rng.choice(WORDS), rng.choice(WORDS)] for _ in lengths]
    return prefixes, targets


def naive_word_scores(model, prefixes, targets):
    index = {w: i for i, w in enumerate(VOCAB)}
    out = np.zeros((len(prefixes), len(targets[0])))
    for i, (prefix, cands) in enumerate(zip(prefixes, targets)):
        for j, w in enumerate(cands):
            ids = [0] + [index.get(x, 1) for x in prefix] + [index[w]]
            out[i, j] = naive_logprob(model, ids, len(ids) - 1)[0, ids[-1]].item()
    return out


@pytest.mark.parametrize("kind", ["lstm", "transformer"])
def test_efficient_logprob_equals_full_softmax_for_mixed_lengths(tmp_path, kind):
    """Packed/padded batches of mixed lengths give the naive log-softmax values to 1e-5."""
    directory, model = make_model_dir(tmp_path / kind, kind, VOCAB)
    prefixes, targets = mixed_items()
    scorer = load_model(directory, device="cpu", batch_size=4)
    got = scorer.logprob(prefixes, targets)
    assert got.shape == (13, 2) and got.dtype == np.float64
    assert np.abs(got - naive_word_scores(model, prefixes, targets)).max() < TOL
    assert (scorer.kind, scorer.name) == (kind, kind)


def test_shared_beginnings_are_read_once_and_score_as_read_alone(tmp_path):
    """Prefixes that share beginnings, repeat, or are a beginning of another (nonce variants,
    the two sentences of a pair) give the naive values, in one batch and one at a time."""
    directory, model = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    prefixes = [["w1", "w2", "w3"], ["w1", "w2", "w4"], ["w1", "w2"], ["w1", "w2", "w3"], ["w5"], [],
                ["w1", "w9", "w3", "w3"]]
    targets = [["w6", "w7"]] * len(prefixes)
    together = load_model(directory, device="cpu").logprob(prefixes, targets)
    alone = load_model(directory, device="cpu", batch_size=1).logprob(prefixes, targets)
    assert np.abs(together - naive_word_scores(model, prefixes, targets)).max() < TOL
    assert np.abs(together - alone).max() < TOL
    assert (together[0] == together[3]).all()


def test_prefix_steps_read_each_distinct_prefix_once():
    seqs = [[0, 1, 2, 3], [0, 1, 2, 4], [0, 1, 5], [0, 1], [0, 6], [0]]    # longest first
    steps = prefix_steps(seqs)
    assert [len(s.tokens) for s in steps] == [1, 2, 2, 2]     # {0}; {01, 06}; {012, 015}; {0123, 0124}
    assert [len(s.rows) for s in steps] == [6, 5, 3, 2]       # the sequences still being read
    assert steps[2].tokens == [2, 5] and steps[2].parents == [0, 0]
    assert steps[3].rows == [0, 1] and steps[3].parents == [0, 0]
    assert steps[1].rows == [0, 0, 0, 0, 1]
    with pytest.raises(ValueError):
        prefix_steps([[0], [0, 1]])


def test_probabilities_over_the_whole_vocabulary_sum_to_one(tmp_path):
    """The normaliser is the full softmax's: P summed over every word is 1."""
    directory, _ = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    scorer = load_model(directory, device="cpu")
    got = scorer.logprob([["w1", "w2"], []], [VOCAB, VOCAB])
    np.testing.assert_allclose(np.exp(got).sum(axis=1), [1.0, 1.0], atol=1e-5)


def test_transformer_reads_the_last_max_len_tokens_of_a_long_prefix(tmp_path):
    directory, model = make_model_dir(tmp_path / "t", "transformer", VOCAB, max_len=6)
    prefix = [f"w{i}" for i in range(10)]
    got = load_model(directory, device="cpu").logprob([prefix], [["w3", "w4"]])
    window = [VOCAB.index(w) for w in prefix[-6:]]
    ref = naive_logprob(model, window, len(window))[0]
    np.testing.assert_allclose(got[0], [ref[VOCAB.index("w3")], ref[VOCAB.index("w4")]],
                               atol=TOL)


def test_carry_state_reads_one_stream_and_differs_from_fresh_state(tmp_path):
    """carry_state=True equals an LSTM stream over [<eos>]+prefix_1, [<eos>]+prefix_2, ...;
    fresh state differs from it after the first sentence; reset_state starts over."""
    directory, model = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    prefixes, targets = mixed_items(seed=1, n=8)
    index = {w: i for i, w in enumerate(VOCAB)}
    ref, state = np.zeros((8, 2)), None
    with torch.no_grad():
        for i, (prefix, cands) in enumerate(zip(prefixes, targets)):
            h, state = model.features(torch.tensor([[0] + [index.get(w, 1) for w in prefix]]),
                                      state)
            logp = torch.log_softmax(model.decoder(h[0, -1]).double(), dim=-1)
            ref[i] = [logp[index[w]].item() for w in cands]
    carried = load_model(directory, device="cpu", carry_state=True, batch_size=3)
    assert carried.carry_state
    got = carried.logprob(prefixes, targets)
    np.testing.assert_allclose(got, ref, atol=TOL)
    fresh = load_model(directory, device="cpu").logprob(prefixes, targets)
    np.testing.assert_allclose(fresh[0], got[0], atol=TOL)         # nothing to carry yet
    # every later item differs (by 4e-5 to 2e-2 here: a random LSTM forgets fast), far
    # beyond the 1e-6 float noise of the exactness checks
    assert (np.abs(fresh[1:] - got[1:]).max(axis=1) > 1e-5).all()
    again = carried.logprob(prefixes, targets)                      # the stream goes on
    assert np.abs(again[0] - got[0]).max() > 1e-4
    carried.reset_state()
    np.testing.assert_allclose(carried.logprob(prefixes, targets), got, atol=TOL)


def test_transformer_has_no_state_to_carry(tmp_path):
    directory, _ = make_model_dir(tmp_path / "t", "transformer", VOCAB)
    prefixes, targets = mixed_items(n=5)
    carried = load_model(directory, device="cpu", carry_state=True)
    assert not carried.carry_state
    fresh = load_model(directory, device="cpu")
    np.testing.assert_allclose(carried.logprob(prefixes, targets),
                               fresh.logprob(prefixes, targets), atol=TOL)


def test_word_model_in_vocab(tmp_path):
    directory, _ = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    scorer = load_model(directory, device="cpu")
    assert scorer.in_vocab("w3")
    assert not scorer.in_vocab("OOV-word")
    assert not scorer.in_vocab("<unk>")


def test_bad_shapes_and_empty_input(tmp_path):
    directory, _ = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    scorer = load_model(directory, device="cpu")
    assert scorer.logprob([], []).shape == (0, 0)
    with pytest.raises(LMError, match="same number of candidate targets"):
        scorer.logprob([["w1"], ["w2"]], [["w1", "w2"], ["w1"]])
    with pytest.raises(LMError, match="2 prefixes but 1 target lists"):
        scorer.logprob([["w1"], ["w2"]], [["w1", "w2"]])


# ---- sentencepiece: the multi-piece path ---------------------------------------------
STEMS = ["cant", "parl", "mangi", "vol", "dorm", "cammin", "scriv", "legg"]
ENDINGS = ["a", "ano", "ava", "avano", "ato"]
FUNCTION = ["il", "la", "i", "le", "che", "non", "e"]


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    """A real sentencepiece BPE model trained on a tiny verb-heavy text."""
    rng = random.Random(7)
    words = [s + e for s in STEMS for e in ENDINGS] + FUNCTION
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 9))) for _ in range(400)]
    path = tmp_path_factory.mktemp("spm") / "spm.model"
    train_sentencepiece(lines, path, vocab_size=48, model_type="bpe")
    return path


def test_piece_vocabulary_puts_eos_and_unk_first_and_matches_sentencepiece_ids(spm_model):
    vocab = piece_vocabulary(SubwordVocab(spm_model, ["<eos>", "<unk>"]).processor)
    sub = SubwordVocab(spm_model, vocab)
    assert vocab[:2] == ["<eos>", "<unk>"]
    assert [sub.processor.id_to_piece(i) for i in range(len(vocab))] == vocab
    assert sub.word_ids("volano") == tuple(sub.processor.encode("volano"))
    assert sub.encode_sentence(["il", "volano"]) == list(sub.processor.encode("il volano"))


def naive_subword_scores(model, sub: SubwordVocab, vocab, prefixes, targets, word_end):
    boundary = [i for i, p in enumerate(vocab) if p.startswith(WORD_START)] + [0]
    out = np.zeros((len(prefixes), len(targets[0])))
    for i, (prefix, cands) in enumerate(zip(prefixes, targets)):
        context = [0] + [t for w in prefix for t in sub.processor.encode(w)]
        for j, w in enumerate(cands):
            pieces = sub.processor.encode(w)
            logp = naive_logprob(model, context + pieces, len(context))   # (m+1, V)
            total = sum(logp[r, p].item() for r, p in enumerate(pieces))
            if word_end:
                total += torch.logsumexp(logp[len(pieces), boundary], dim=0).item()
            out[i, j] = total
    return out


@pytest.mark.parametrize("kind", ["transformer", "lstm"])
def test_subword_word_probability_is_product_of_pieces_and_word_end(tmp_path, spm_model, kind):
    """P(word) = prod P(piece) * P(next piece starts a word or is <eos>), to 1e-5,
    with multi-piece targets; word_end=False leaves out the last factor."""
    sub0 = SubwordVocab(spm_model, ["<eos>", "<unk>"])
    vocab = piece_vocabulary(sub0.processor)
    sub = SubwordVocab(spm_model, vocab)
    directory, model = make_model_dir(tmp_path / kind, kind, vocab, tokenizer="sentencepiece",
                                      spm=spm_model)
    prefixes = [["il", "cantava"], [], ["le", "dormivano", "che", "non", "legge"], ["la"]]
    targets = [["volano", "vola"], ["parlato", "parla"], ["scrivevano", "scriveva"],
               ["camminavano", "il"]]
    assert max(len(sub.word_pieces(w)) for t in targets for w in t) >= 2   # multi-piece path
    assert all(sub.word_pieces(w)[0].startswith(WORD_START) for t in targets for w in t)
    for word_end in (True, False):
        scorer = load_model(directory, device="cpu", batch_size=3, word_end=word_end)
        got = scorer.logprob(prefixes, targets)
        ref = naive_subword_scores(model, sub, vocab, prefixes, targets, word_end)
        assert np.abs(got - ref).max() < TOL
    with_end = load_model(directory, device="cpu").logprob(prefixes, targets)
    without = load_model(directory, device="cpu", word_end=False).logprob(prefixes, targets)
    assert (with_end < without).all()   # the word-end factor is a probability < 1


def test_subword_in_vocab_means_every_piece_known(tmp_path, spm_model):
    vocab = piece_vocabulary(SubwordVocab(spm_model, ["<eos>", "<unk>"]).processor)
    directory, _ = make_model_dir(tmp_path / "t", "transformer", vocab,
                                  tokenizer="sentencepiece", spm=spm_model)
    scorer = load_model(directory, device="cpu")
    assert scorer.in_vocab("volano") and scorer.in_vocab("cantavano")
    assert not scorer.in_vocab("volanoΩ")          # a character sentencepiece never saw
    assert not scorer.in_vocab("")
    with pytest.raises(LMError, match="carry_state is implemented for word-level LSTM"):
        lstm_dir, _ = make_model_dir(tmp_path / "l", "lstm", vocab, tokenizer="sentencepiece",
                                     spm=spm_model)
        load_model(lstm_dir, carry_state=True)


# ---- loading errors -----------------------------------------------------------------
def test_corrupt_or_foreign_checkpoints_give_a_clear_error(tmp_path):
    directory, model = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    weights = directory / "model.pt"
    good = weights.read_bytes()
    for content in (b"this is not a checkpoint", good[:len(good) // 2]):
        weights.write_bytes(content)
        with pytest.raises(LMError, match=r"model.pt: unreadable checkpoint, corrupt or not "
                                          r"written by `agree train-lm`"):
            load_model(directory)
    torch.save(model, weights)                               # a pickled module, not weights
    with pytest.raises(LMError, match="unreadable checkpoint"):
        load_model(directory)
    torch.save([1, 2, 3], weights)
    with pytest.raises(LMError, match="not a model checkpoint"):
        load_model(directory)
    weights.unlink()
    with pytest.raises(LMError, match="no model.pt in the model directory"):
        load_model(directory)


def test_config_and_weights_that_do_not_match_give_a_clear_error(tmp_path):
    directory, model = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    bigger = LMConfig(kind="lstm", vocab_size=len(VOCAB), emb_size=12, hidden_size=32)
    torch.save({"state_dict": model.state_dict(), "config": bigger.to_dict()},
               directory / "model.pt")
    with pytest.raises(LMError, match=r"model.pt: weights do not match the configuration .*"
                                      r"size mismatch"):
        load_model(directory)
    cfg = json.loads((directory / "config.json").read_text())
    bad = {**cfg, "hidden_size": "many"}
    torch.save({"state_dict": model.state_dict(), "config": {**bad, "colour": "red"}},
               directory / "model.pt")
    with pytest.raises(LMError, match="invalid model configuration .*colour"):
        load_model(directory)


def test_kind_vocabulary_and_tokenizer_mismatches(tmp_path):
    directory, _ = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    cfg = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(json.dumps({**cfg, "kind": "transformer"}))
    with pytest.raises(LMError, match="config.json says kind 'transformer' but model.pt "
                                      "holds a 'lstm' model"):
        load_model(directory)
    (directory / "config.json").write_text(json.dumps(cfg))
    (directory / "vocab.txt").write_text("\n".join(VOCAB[:-1]) + "\n")
    with pytest.raises(LMError, match="41 entries but the model predicts 42 tokens"):
        load_model(directory)
    (directory / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (directory / "config.json").write_text(json.dumps({**cfg, "tokenizer": "sentencepiece"}))
    with pytest.raises(LMError, match="config.json: tokenizer is 'sentencepiece' but model.pt was trained "
                                      "with 'word'; config.json was edited"):
        load_model(directory)
    sp_dir, _ = make_model_dir(tmp_path / "sp", "lstm", VOCAB, tokenizer="sentencepiece")
    with pytest.raises(LMError, match="spm.model: no sentencepiece model"):
        load_model(sp_dir)
    with pytest.raises(LMError, match="unknown device 'tpu'"):
        NeuralScorer(torch.nn.Module(), VOCAB, kind="lstm", device="tpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_gives_the_cpu_values(tmp_path):  # pragma: no cover - needs a GPU
    directory, _ = make_model_dir(tmp_path / "m", "lstm", VOCAB)
    prefixes, targets = mixed_items()
    cpu = load_model(directory, device="cpu").logprob(prefixes, targets)
    gpu = load_model(directory, device="cuda").logprob(prefixes, targets)
    np.testing.assert_allclose(gpu, cpu, atol=1e-4)
