"""A sentence that several items share is scored once (issue 44), in the sentence path of
both subword engines: the scorer counts the sentences asked for and those it read, and
each asker gets the scores the sentence gets alone in the same call."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from lm.base import Words
from lm.openings import distinct_sequences

A = Words(("the", "keys", "to", "the", "cabinet", "are", "here", "."), (True,) * 6 + (False, False))
B = Words(("the", "keys", "to", "the", "cabinet", "is", "here", "."), (True,) * 6 + (False, False))
C = Words(("a", "volcano", "erupts", "."), (True, True, False, False))


def test_distinct_sequences_keep_the_first_order():
    distinct, where = distinct_sequences([[1, 2], [3], [1, 2], [3], [4]])
    assert distinct == [[1, 2], [3], [4]] and where == [0, 1, 0, 1, 2]


def _check(scorer):
    many = scorer.word_logprobs([A, B, A, C, A, B])
    assert (scorer.sentences_asked, scorer.sentences_decoded) == (6, 3)
    for i, j in ((0, 2), (0, 4), (1, 5)):
        assert np.array_equal(many[i], many[j])
    once = scorer.word_logprobs([A, B, C])
    for got, want in zip((many[0], many[1], many[3]), once):
        assert np.array_equal(got, want)   # the same distinct sentences, the same call: the same bits


def test_llama_cpp_reads_a_shared_sentence_once():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python (the gguf extra) is not installed")
    from gguf_fixtures import smol_path
    from lm.gguf.llamacpp import load_llamacpp

    scorer = load_llamacpp(smol_path(), threads=1)
    try:
        _check(scorer)
    finally:
        scorer.close()


def test_transformers_reads_a_shared_sentence_once(tmp_path):
    pytest.importorskip("transformers", reason="the hf extra (transformers) is not installed")
    from hf_fixtures import build_tiny
    from lm.hf.load import load_hf_dir

    scorer = load_hf_dir(build_tiny("gpt2", tmp_path / "gpt2"), device="cpu")
    _check(scorer)
