"""Whole-sentence scoring (--method sentence) in every backend, and the paper's sets
without .tab (generated.text/.gold/.eval alone; the Linzen et al. 2016 4-column .gold)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from conftest import run_agree, tiny_corpus
from formats.testsets.colorlessgreen import read_colorlessgreen, write_colorlessgreen
from agreement.errors import AgreeError
from formats.testsets import detect_testset, load_testset
from formats.items import Item, write_items
from lm.load import load_model

torch = pytest.importorskip("torch")
from lm.neural.models import LMConfig, build_model  # noqa: E402

WORDS = [f"w{i}" for i in range(30)]
VOCAB = ["<eos>", "<unk>"] + WORDS


def run(*args):
    return run_agree("score", *args)


def neural_dir(path, kind, vocab, tokenizer="word", spm=None):
    cfg = LMConfig(kind=kind, vocab_size=len(vocab), tokenizer=tokenizer, emb_size=12,
                   hidden_size=16, layers=2, heads=2, max_len=64, dropout=0.3)
    torch.manual_seed(0)
    model = build_model(cfg)
    with torch.no_grad():
        model.decoder.bias.normal_()
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(cfg.to_dict()))
    torch.save({"state_dict": model.state_dict(), "config": cfg.to_dict()}, path / "model.pt")
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    if spm is not None:
        (path / "spm.model").write_bytes(spm.read_bytes())
    return path, model.eval()


def naive_piece_logprobs(model, ids):
    """log-softmax at every position of [<eos>] + ids, the rows predicting ids."""
    with torch.no_grad():
        h, _ = model.features(torch.tensor([[0] + ids]))
        logp = torch.log_softmax(model.decoder(h[0]).double(), dim=-1)
    return np.array([logp[i, t].item() for i, t in enumerate(ids)])


def sentences(seed=0, n=9):
    rng = random.Random(seed)
    return [[rng.choice(WORDS + ["OOV"]) for _ in range(rng.randint(1, 11))] for _ in range(n)]


@pytest.mark.parametrize("kind", ["lstm", "transformer"])
def test_neural_word_logprobs_equal_full_softmax_and_ignore_batching(tmp_path, kind):
    directory, model = neural_dir(tmp_path / kind, kind, VOCAB)
    sents = sentences()
    index = {w: i for i, w in enumerate(VOCAB)}
    ref = [naive_piece_logprobs(model, [index.get(w, 1) for w in s]) for s in sents]
    for batch_size in (1, 4, 64):
        got = load_model(directory, device="cpu", batch_size=batch_size).word_logprobs(sents)
        assert [len(g) for g in got] == [len(s) for s in sents]
        assert max(np.abs(g - r).max() for g, r in zip(got, ref)) < 1e-4
    scorer = load_model(directory, device="cpu")
    assert np.allclose(scorer.sentence_logprob(sents), [r.sum() for r in ref], atol=1e-4)
    # the first word is scored after <eos>: the same as the target method with no prefix
    first = scorer.logprob([[]], [[sents[0][0]]])[0, 0]
    assert abs(first - ref[0][0]) < 1e-4


def test_subword_word_logprobs_sum_the_pieces(tmp_path):
    from lm.corpus.subword import SubwordVocab, piece_vocabulary, train_sentencepiece

    rng = random.Random(3)
    stems, ends = ["cant", "vol", "dorm", "parl", "scriv"], ["a", "ano", "ava", "avano", "ato"]
    words = [s + e for s in stems for e in ends] + ["il", "la", "che"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 8))) for _ in range(300)]
    spm = tmp_path / "spm.model"
    train_sentencepiece(lines, spm, vocab_size=40, model_type="bpe")
    vocab = piece_vocabulary(SubwordVocab(spm, ["<eos>", "<unk>"]).processor)
    sub = SubwordVocab(spm, vocab)
    directory, model = neural_dir(tmp_path / "sp", "lstm", vocab, "sentencepiece", spm)
    sents = [["il", "cantavano", "che", "volato"], ["scrivevano"], ["la", "dormiva", "parla"]]
    scorer = load_model(directory, device="cpu", batch_size=2)
    got = scorer.word_logprobs(sents)
    for s, g in zip(sents, got):
        ids = sub.encode_sentence(s)
        assert ids == list(sub.processor.encode(" ".join(s)))  # words encoded one by one
        piece = naive_piece_logprobs(model, ids)
        counts = [len(sub.word_ids(w)) for w in s]
        assert max(counts) >= 2
        ends = np.cumsum([0] + counts)
        assert np.allclose(g, [piece[a:b].sum() for a, b in zip(ends[:-1], ends[1:])], atol=1e-4)
        assert abs(g.sum() - piece.sum()) < 1e-4
    assert scorer.word_pieces("cantavano") == sub.word_pieces("cantavano")


LINES = (["the dog runs ."] * 6 + ["the dogs run ."] * 3 + ["the dog near the cats runs ."] * 2
         + ["the cats near the dog run ."])


@pytest.fixture(scope="module")
def count_models(tmp_path_factory):
    """A unigram model, and a 3-gram KenLM model when lmplz is built (else None)."""
    from lm.corpus.prepare import load_corpus
    from lm.errors import LMError
    from lm.unigram import train_unigram

    root = tmp_path_factory.mktemp("models")
    corpus = load_corpus(tiny_corpus(root / "corpus", LINES))
    train_unigram(corpus, root / "uni")
    kn = None
    try:
        import kenlm  # noqa: F401
        from lm.kenlm.scorer import train_kn5

        train_kn5(corpus, root / "kn", order=3)
        kn = root / "kn"
    except (ImportError, LMError):
        pass
    return root / "uni", kn


def test_count_backends_word_logprobs_equal_the_target_method(count_models):
    """KenLM (full_scores, bos, no eos) and unigram: word i's score is the target
    method's P(word_i | words before i); unknown words are scored too."""
    sents = [["the", "dog", "near", "the", "cats", "runs", "."], ["dogs", "zebra", "run"]]
    for directory in [d for d in count_models if d is not None]:
        scorer = load_model(directory)
        got = scorer.word_logprobs(sents)
        for s, g in zip(sents, got):
            ref = scorer.logprob([s[:i] for i in range(len(s))], [[w] for w in s])[:, 0]
            assert np.allclose(g, ref, atol=1e-9), directory
        assert np.allclose(scorer.sentence_logprob(sents), [g.sum() for g in got])
    if count_models[1] is None:
        pytest.skip("KenLM's lmplz is not built: only the unigram was checked")


def item(i, prefix, correct, wrong, attractors=0):
    tokens = tuple(prefix.split()) + (correct, ".")
    return Item(f"i{i}", 0, "NOUN VERB", "L", tokens, ("_",) * len(tokens), ("_",) * len(tokens),
                correct, wrong, "_", "Sing", 1, len(tokens) - 2, attractors, False)


ITEMS = [item(0, "the dog", "runs", "run"), item(1, "the dogs", "run", "runs"),
         item(2, "the dog near the cats", "runs", "run", 1),
         item(3, "the cats near the dog", "run", "runs", 1)]


def test_sentence_method_on_our_items(tmp_path, count_models):
    """For a unigram model the two methods agree (only the target differs); every row
    says its method; summary.md states the method."""
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", ITEMS)
    uni = count_models[0]
    outs = {}
    for method in ("target", "sentence"):
        r = run(tmp_path / "ext", "--model", uni, "--method", method, "--out", tmp_path / method, "-q")
        assert r.exit_code == 0, r.stderr
        outs[method] = r.stdout
        rows = (tmp_path / method / "items.tsv").read_text().splitlines()
        assert rows[0].endswith("\ttestset\tmethod\tundecidable")
        assert {row.split("\t")[-2] for row in rows[1:]} == {method}
        assert f"Method: {method}" in (tmp_path / method / "summary.md").read_text()
    assert outs["target"] == outs["sentence"]
    if count_models[1] is not None:
        r = run(tmp_path / "ext", "--model", count_models[1], "--method", "sentence",
                "--out", tmp_path / "kn", "-q")
        assert r.exit_code == 0, r.stderr
        rows = [line.split("\t") for line in (tmp_path / "kn" / "items.tsv").read_text().splitlines()[1:]]
        scorer = load_model(count_models[1])
        good = scorer.sentence_logprob([list(ITEMS[0].tokens)])[0]
        assert float(rows[0][6]) == pytest.approx(good, abs=1e-9)


# --------------------------------------------------------------------------- sets without .tab

def test_generated_text_gold_eval_without_tab(tmp_path):
    items = ITEMS
    write_colorlessgreen(items, tmp_path)
    with_tab = read_colorlessgreen(tmp_path)
    (tmp_path / "generated.tab").unlink()
    assert detect_testset(tmp_path) == ("colorlessgreen", tmp_path / "generated")
    alone = load_testset(tmp_path).items
    assert [(a.item_id, a.variant, a.tokens, a.correct, a.wrong, a.target_index, a.cue_index,
             a.construction, a.direction, a.perturbation) for a in alone] == \
        [(b.item_id, b.variant, b.tokens, b.correct, b.wrong, b.target_index, b.cue_index,
          b.construction, b.direction, b.perturbation) for b in with_tab]
    # unknown without .tab: attractors (0) and, when .gold's features lack it, the number
    assert all(a.attractors == 0 and a.number == "_" for a in alone)
    (tmp_path / "generated.eval").write_text("9\n" * len(items))
    with pytest.raises(AgreeError, match=r"generated.eval:1: target index '9' differs"):
        load_testset(tmp_path)


def linzen(tmp_path):
    (tmp_path / "subj.text").write_text(
        "the dog runs . <eos>\nthe dogs near the cat run . <eos>\nthe key to the cabinets is here .\n")
    (tmp_path / "subj.gold").write_text("2\truns\trun\t0\n5\trun\truns\t1\n4\tis\tare\t1\n")
    (tmp_path / "subj.eval").write_text("2\n5\n4\n")
    return tmp_path / "subj.gold"


def test_linzen_four_column_gold(tmp_path, count_models):
    gold = linzen(tmp_path)
    kind, prefix = detect_testset(gold)
    assert (kind, prefix) == ("colorlessgreen", tmp_path / "subj")
    items = load_testset(gold).items
    assert [(it.item_id, it.target_index, it.correct, it.wrong, it.attractors) for it in items] == [
        ("linzen:1", 2, "runs", "run", 0), ("linzen:2", 5, "run", "runs", 1),
        ("linzen:3", 4, "is", "are", 1)]
    assert items[1].tokens == ("the", "dogs", "near", "the", "cat", "run", ".")
    r = run(gold, "--model", count_models[0], "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    # decidable items plus undecidable (tied) ones: every item is in the breakdown
    assert sorted((row["value"], row["items"] + row.get("undecidable", 0)) for row in summary["accuracy"]
                  if row["by"] == "attractors") == [(0, 1), (1, 2)]


def test_bad_gold_rows(tmp_path):
    gold = linzen(tmp_path)
    gold.write_text("2\truns\trun\n5\trun\truns\t1\n4\tis\tare\t1\n")
    r = run(gold, "--out", tmp_path / "o")
    assert r.exit_code == 1 and r.stderr.startswith(f"Error: {gold}:1: expected 12 tab-separated")
    gold.write_text("2\truns\trun\tmany\n5\trun\truns\t1\n4\tis\tare\t1\n")
    r = run(gold, "--out", tmp_path / "o")
    assert (r.exit_code, r.stderr) == (1, f"Error: {gold}:1: number of attractors 'many' is not an integer\n")
