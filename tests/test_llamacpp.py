"""The llama.cpp engine (lm/gguf/llamacpp.py) on the real SmolLM2-135M Q4_1 file:
conventions against llama-cpp-python's own one-sequence API, batch invariance,
over-long items, bad files. Skipped when llama-cpp-python or the file is absent."""
from __future__ import annotations

import hashlib
import sys

import numpy as np
import pytest

from formats.spacing import render
from lm.base import TargetQuery, Words
from lm.errors import LMError
from tests.conftest import raises_as_cli
from tests.gguf_fixtures import smol_path, tiny_gguf

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python (agree-bench[gguf]) is not installed")

from lm.gguf.llamacpp import load_llamacpp  # noqa: E402  (after the skip)

#: the engine at batch size 1 (one sequence per decode, no shared prefix) against
#: llama-cpp-python's own one-sequence API: the same computation (measured 0).
TOLERANCE = 5e-4

SENTENCES = ["The keys to the cabinet are on the table .", "The keys to the cabinet is on the table .",
             "Many girls insulted themselves .", "Many girls insulted herself .",
             "Katherine can't help herself .", "Katherine can't help himself .", "Hello"]
QUERIES = [TargetQuery(tuple("The keys to the cabinet are on the table".split()), 5, ("are", "is")),
           TargetQuery(("Dogs", "bark"), 1, ("bark", "barks")),
           TargetQuery(("Runs",), 0, ("Runs", "Run")),
           TargetQuery(tuple("the author that the guards like laughs".split()), 6, ("laughs", "laugh"))]


@pytest.fixture(scope="module")
def scorer():
    """The batched path (64 sequences per decode, a prefix tree): ``--batch-size 64``."""
    sc = load_llamacpp(smol_path(), threads=1, batch_size=64)
    yield sc
    sc.close()


@pytest.fixture(scope="module")
def single():
    """One sequence per decode: llama.cpp's quantized CPU kernels take other paths at
    other batch shapes (see BATCH_DRIFT_NATS), so the engine is checked against the
    one-sequence API at this shape, and its batches against this scorer."""
    sc = load_llamacpp(smol_path(), threads=1, batch_size=1, share_prefix=False)
    yield sc
    sc.close()


@pytest.fixture(scope="module")
def reference():
    """llama-cpp-python's high-level API, one sequence per call, all logits kept."""
    return llama_cpp.Llama(str(smol_path()), n_ctx=128, logits_all=True, verbose=False, n_threads=1)


def ref_rows(reference, tokens):
    """fp32 log-softmax rows after each token of ``tokens`` (one sequence)."""
    reference.reset()
    reference.eval(tokens)
    x = np.array(reference.scores[: len(tokens)], dtype=np.float32)
    m = x.max(axis=1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))


def tokens_of(scorer, words, space_after=None):
    """BOS + the text (words joined by single spaces, or as the flags say) tokenized once."""
    text = render(words, space_after) if space_after is not None else " ".join(words)
    return [scorer.bos] + list(scorer._tokens(text)) if words else [scorer.bos]


def test_sentence_method_matches_one_sequence_reference(single, reference):
    scorer = single
    sents = [s.split() for s in SENTENCES]
    words = scorer.word_logprobs(sents)
    for s, w, total in zip(sents, words, scorer.sentence_logprob(sents)):
        toks = tokens_of(scorer, s)
        rows = ref_rows(reference, toks)
        ref = rows[np.arange(len(toks) - 1), toks[1:]]
        assert len(w) == len(s) and np.all(w < 0)  # the first word is scored too
        assert abs(total - float(np.sum(w))) < 1e-9
        assert abs(total - float(ref.sum())) < TOLERANCE
        # word 0: P(its pieces | BOS) -- BOS is the model's own, added once
        n0 = len(scorer._tokens(s[0]))
        assert abs(w[0] - float(ref[:n0].sum())) < TOLERANCE


def test_target_method_has_word_end_factor(single, reference):
    scorer = single
    got = scorer.score_targets(QUERIES)
    assert got.shape == (4, 2) and np.isfinite(got).all()
    for q, row in zip(QUERIES, got):
        prefix = tokens_of(scorer, q.prefix)
        for cand, value in zip(q.candidates, row):
            piece = tokens_of(scorer, q.prefix + (cand,))[len(prefix):]
            rows = ref_rows(reference, prefix + piece)
            n = len(prefix)
            pieces = sum(rows[n - 1 + j, t] for j, t in enumerate(piece))
            last = rows[n - 1 + len(piece)]
            word_end = np.log(np.exp(last[scorer._word_start]).sum())
            assert word_end < 0
            assert abs(value - (pieces + word_end)) < TOLERANCE
    assert got[0, 0] > got[0, 1]  # "keys ... are" over "keys ... is"


def test_batch_size_one_equals_default(scorer, single):
    """Within the engine's stated batch drift (measured 0.16 nats on these sentences
    with llama-cpp-python 0.3.36; it was under 1e-4 with earlier builds)."""
    sents = [s.split() for s in SENTENCES]
    batched_s, batched_t = scorer.sentence_logprob(sents), scorer.score_targets(QUERIES)
    one = single
    assert np.abs(one.sentence_logprob(sents) - batched_s).max() < BATCH_DRIFT_NATS
    assert np.abs(one.score_targets(QUERIES) - batched_t).max() < BATCH_DRIFT_NATS
    for a, b in zip(one.word_logprobs(sents), scorer.word_logprobs(sents)):
        assert np.abs(a - b).max() < BATCH_DRIFT_NATS


#: measured on the 32 BLiMP pairs below (2 per agreement paradigm), batch size 1 vs 64:
#: max 0.24 nats per sentence without prefix sharing, 0.22 with it (with the prefix tree
#: 0.53 on 160 pairs, 0.64 on 320; batched without sharing 0.63 on 320).
#: Not the KV cache's precision (an fp32 cache drifts as much): llama.cpp's CPU kernels
#: for quantized weights take other paths at other batch shapes, so batch size 1 is one
#: of those paths, not a reference. This is the tolerance the engine is held to.
BATCH_DRIFT_NATS = 0.7


def test_batch_drift_on_blimp_pairs_stays_within_the_stated_tolerance(scorer, shared):
    import json

    sents = []
    for f in sorted(shared("blimp", "data").glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines()[:2]:
            d = json.loads(line)
            sents += [d["sentence_good"].split(), d["sentence_bad"].split()]
    one = load_llamacpp(smol_path(), threads=1, batch_size=1, share_prefix=False)
    try:
        ref = one.sentence_logprob(sents)
    finally:
        one.close()
    got = scorer.sentence_logprob(sents)          # default: shared openings, 64 per decode
    assert np.abs(got - ref).max() < BATCH_DRIFT_NATS
    same = np.sign(got[0::2] - got[1::2]) == np.sign(ref[0::2] - ref[1::2])
    assert same.mean() >= 0.9, f"choices differ on {int((~same).sum())} of {same.size} pairs"


def test_the_default_path_is_batch_invariant(single):
    """By default a sequence is decoded alone: its scores are the same bits whatever else
    is scored in the call (issue 44: the batched path flipped choices on a release sample)."""
    sents = [s.split() for s in SENTENCES]
    sc = load_llamacpp(smol_path(), threads=1)
    try:
        assert (sc.batch_size, sc.share_prefix) == (1, False)
        assert sc.conventions()["batch_invariant"].startswith("yes")
        alone = [sc.word_logprobs([s])[0] for s in sents]
        together = sc.word_logprobs(sents[::-1] + sents)
        for a, b, c in zip(alone, together[len(sents):], together[:len(sents)][::-1]):
            assert np.array_equal(a, b) and np.array_equal(a, c)
        targets = sc.score_targets(QUERIES)
        assert np.array_equal(targets[:1], sc.score_targets(QUERIES[:1]))
        assert np.array_equal(np.concatenate(single.word_logprobs(sents)), np.concatenate(alone))
    finally:
        sc.close()


def test_word_end_mask_and_pieces(scorer):
    assert scorer.word_pieces("cabinet") == [" cabinet"]
    assert scorer._word_start.sum() > 1000
    assert scorer._word_start[scorer._word_tokens("cabinet", 1)[0]]
    assert not scorer._word_start[scorer._word_tokens("cabinet", 0)[0]]
    assert scorer.in_vocab("zyzzyva") and not scorer.in_vocab("")


def test_over_long_item_is_a_counted_skip():
    sc = load_llamacpp(smol_path(), threads=1, n_ctx=24)
    try:
        long = ["word"] * 40
        out = sc.word_logprobs([long, "Dogs bark .".split()])
        assert np.isnan(out[0]).all() and np.isfinite(out[1]).all()
        q = sc.score_targets([TargetQuery(tuple(long), 39, ("word", "words")), QUERIES[1]])
        assert np.isnan(q[0]).all() and np.isfinite(q[1]).all()
        assert sc.skipped == 3 and sc.conventions()["skipped_over_context"] == 3
    finally:
        sc.close()


def test_conventions_on_record(scorer):
    c = scorer.conventions()
    assert c["engine"] == "llama.cpp" and c["engine_version"].startswith("llama-cpp-python ")
    assert c["sha256"] == hashlib.sha256(smol_path().read_bytes()).hexdigest()
    assert c["quantization"] == "Q4_1" and c["logits_dtype"] == "float32"
    assert c["bos_token"] == "1 (bos)" and c["threads"] == 1
    for key in ("bos_added", "first_token", "ties", "word_end_correction", "sentence_method", "batch_size"):
        assert c[key]


def test_unsupported_architecture(tmp_path):
    path = tiny_gguf(tmp_path / "odd.gguf", "nonsense")
    with pytest.raises(LMError, match=r"odd\.gguf: llama\.cpp .* cannot load this file \(architecture 'nonsense'\)"):
        load_llamacpp(path)


def test_without_llama_cpp_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp now raises ImportError
    with raises_as_cli(LMError, "score", r"pip install 'agree-bench\[gguf\]' \(or use --engine transformers\)"):
        load_llamacpp(tiny_gguf(tmp_path / "t.gguf", "llama"))


def test_scoring_record_one_line_per_model(scorer):
    from agreement.reporting.summary_md import scoring_lines

    record = {scorer.name: scorer.conventions()}
    assert record[scorer.name]["engine"] == "llama.cpp"
    lines = [x for x in scoring_lines(record) if x.startswith("- ")]
    assert len(lines) == 1 and "engine llama.cpp" in lines[0] and "quantization Q4_1" in lines[0]


def test_text_as_written_and_its_pieces(single, reference):
    """A sentence with its spacing is read as that text, tokenized once; each word's
    pieces (tokens.tsv) are the ones it owns, as llama.cpp spells them."""
    scorer = single
    w = Words(("Katherine", "can't", "help", "herself", "."), (True, True, True, False, False))
    toks = tokens_of(scorer, w, w.space_after)
    rows = ref_rows(reference, toks)
    ref = float(rows[np.arange(len(toks) - 1), toks[1:]].sum())
    assert abs(scorer.sentence_logprob([w])[0] - ref) < TOLERANCE
    pieces = scorer.sentence_pieces(w)
    assert "".join(p for word in pieces for p in word).replace("\u2581", " ") == "Katherine can't help herself."
    assert pieces[-1] == ["."] and pieces[3] == ["\u2581herself"]
    assert scorer.conventions()["convention"] == "agree"


# ---- float copies and lanes (issue 23) ------------------------------------------------

def test_float_copies_on_record_and_removed_on_close(scorer):
    """dtype float16/float32: llama.cpp computes with a copy of the Q4_1 weights made
    at load in a temporary directory (not beside the input), removed once loaded; float32
    (an exact copy, float32 KV cache) and float16 agree to a few hundredths of a nat,
    while the stored weights, read with Q8-rounded activations, stand further off."""
    sents = [s.split() for s in SENTENCES[:6]]
    got, copies = {}, []
    for dtype in ("float32", "float16"):
        sc = load_llamacpp(smol_path(), threads=1, dtype=dtype)
        try:
            copies.append(sc._copy.path)
            assert sc._copy.path.parent != smol_path().parent
            assert not sc._copy.path.parent.exists()   # loaded, then removed: nothing to leave behind
            c = sc.conventions()
            assert c["weights_dtype"].startswith(f"{dtype} (a copy of the Q4_1 weights")
            assert c["kv_cache"] == ("float32" if dtype == "float32" else "float16")
            assert c["quantization"] == "Q4_1"
            got[dtype] = sc.sentence_logprob(sents)
        finally:
            sc.close()
    assert not any(p.exists() or p.parent.exists() for p in copies)
    assert np.abs(got["float16"] - got["float32"]).max() < 0.15
    stored = scorer.sentence_logprob(sents)
    assert np.median(np.abs(stored - got["float32"])) > np.median(np.abs(got["float16"] - got["float32"]))
    assert scorer.conventions()["weights_dtype"] == "as stored"


def test_float_copy_faults_are_one_error(monkeypatch, tmp_path):
    import tempfile

    import formats.resources as resources
    from lm.errors import FieldError

    with raises_as_cli(FieldError, "score", r"--dtype float8: the llama\.cpp engine computes"):
        load_llamacpp(smol_path(), dtype="float8")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no" / "such"))
    with pytest.raises(LMError, match=r"cannot make a directory for a float16 copy in .*no/such"):
        load_llamacpp(smol_path(), dtype="float16")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(resources.shutil, "disk_usage", lambda p: type("U", (), {"free": 10 << 20})())
    with raises_as_cli(LMError, "score", r"a float16 copy needs about 282 MB on disk; 10\.5 MB are free there "
                                         r"\(.*; set TMPDIR elsewhere, or compute with the weights as stored\)"):
        load_llamacpp(smol_path(), dtype="float16")
    assert not list(tmp_path.glob("agree-gguf-*"))   # the refused copy's directory is gone


def test_lanes_decode_rounds_side_by_side_with_the_same_scores(monkeypatch):
    """threads=2 on CPU: two contexts on one model decode alternate rounds in two
    agree-lane threads; the rounds are the ones one lane makes, so every score is
    bit-identical to threads=1; a fault in a lane reaches the caller."""
    import threading

    import lm.gguf.llamacpp as engine

    sents = [s.split() for s in SENTENCES] * 3
    one = load_llamacpp(smol_path(), threads=1, batch_size=4)
    two = load_llamacpp(smol_path(), threads=2, batch_size=4)
    try:
        names, real = set(), engine.decode_round

        def spy(lane, groups):
            names.add(threading.current_thread().name.split("_")[0])
            return real(lane, groups)

        monkeypatch.setattr(engine, "decode_round", spy)
        a, b = one.sentence_logprob(sents), two.sentence_logprob(sents)
        assert np.array_equal(a, b) and np.isfinite(a).all()
        assert names >= {"agree-lane", "MainThread"} and len(two._lanes) == 2
        assert two.conventions()["threads"].startswith("2: 2 lanes") and one.conventions()["threads"] == 1
        assert np.array_equal(one.score_targets(QUERIES), two.score_targets(QUERIES))

        def broken(lane, groups):
            raise LMError("a lane failed")

        monkeypatch.setattr(engine, "decode_round", broken)
        with pytest.raises(LMError, match="a lane failed"):
            two.sentence_logprob(sents)
    finally:
        one.close()
        two.close()


def test_prefix_tree_reads_a_shared_token_once_and_scores_as_one_sequence(monkeypatch):
    """A round goes in as a prefix tree: BOS and the openings sentences of different
    groups share are one batch entry each. On the exact float32 copy, where llama.cpp's
    kernels do not depend on the batch's shape, every sentence and target scores as
    when read alone (one sequence per decode, nothing shared)."""
    import lm.gguf.llamacpp_decode as decode

    sents = [s.split() for s in SENTENCES] + [["The", "keys", "are", "here", "."], ["The", "key", "is", "here", "."]]
    tree = load_llamacpp(smol_path(), threads=1, dtype="float32", batch_size=64)
    alone = load_llamacpp(smol_path(), threads=1, dtype="float32", batch_size=1, share_prefix=False)
    try:
        fed, real = [], decode._decode

        def spy(lane, entries):
            fed.append(entries)
            return real(lane, entries)

        monkeypatch.setattr(decode, "_decode", spy)
        got = tree.sentence_logprob(sents)
        assert len(fed) == 1
        bos = [e for e in fed[0] if e[1] == 0]
        assert len(bos) == 1 and len(bos[0][0]) == len(sents)   # one BOS for all 9 sentences
        the = [e for e in fed[0] if e[1] == 1 and len(e[0]) > 2]
        assert the, "'The' opens four sentences of two groups: one entry"
        assert np.abs(got - alone.sentence_logprob(sents)).max() < 1e-3
        assert np.abs(tree.score_targets(QUERIES) - alone.score_targets(QUERIES)).max() < 1e-3
        for a, b in zip(tree.word_logprobs(sents), alone.word_logprobs(sents)):
            assert np.abs(a - b).max() < 1e-3
    finally:
        tree.close()
        alone.close()
