"""``agree score --normalize`` (issue 44): whole-sentence scores divided by the model's
pieces, the text's UTF-8 bytes or characters, or SLOR against a word unigram; the
default sum unchanged; the faults one ``Error:`` line each, nothing written."""
from __future__ import annotations

import json

import numpy as np
import pytest

from agreement.scoring.normalize import check_normalize, normalized, sentence_text
from conftest import run_agree
from formats.items import write_items
from formats.scored import read_scored
from lm.base import Words
from lm.errors import FieldError
from lm.load import load_model
from test_score_cli import ITEMS, PLUR, SING, unigram


class Pieces:
    """Pieces per word as a subword model would give them: one per 3 characters."""

    @staticmethod
    def sentence_pieces(words):
        return [[w[i:i + 3] for i in range(0, len(w), 3)] for w in words]


SENTENCES = [Words(("La", "città", "è", "bella", "."), (True, True, True, False, False)),
             Words(("the", "dogs", "run"))]


def test_each_normalisation_divides_by_what_it_names():
    logp = np.array([-20.0, -12.0])
    text = sentence_text(SENTENCES[0])
    assert text == "La città è bella." and len(text) == 17 and len(text.encode()) == 19
    assert normalized("sum", logp, SENTENCES).tolist() == [-20.0, -12.0]
    assert normalized("char", logp, SENTENCES).tolist() == [-20.0 / 17, -12.0 / 12]
    assert normalized("byte", logp, SENTENCES).tolist() == [-20.0 / 19, -12.0 / 12]
    # pieces: La | cit tà | è | bel la | . = 7; the | dog s | run = 4
    assert normalized("token", logp, SENTENCES, pieces=Pieces.sentence_pieces).tolist() == [-20.0 / 7, -12.0 / 4]


def test_slor_subtracts_the_unigram_and_divides_by_words(tmp_path):
    uni = load_model(unigram(tmp_path / "u", SING))
    lu = [float(np.sum(w)) for w in uni.word_logprobs(SENTENCES)]
    out = normalized("slor", np.array([-20.0, -12.0]), SENTENCES, unigram=uni)
    assert out.tolist() == pytest.approx([(-20.0 - lu[0]) / 5, (-12.0 - lu[1]) / 3], abs=0)


@pytest.mark.parametrize("name, unigram_dir, method, message", [
    ("slor", None, "sentence", "{normalize} slor needs a word unigram model: give {unigram} DIR"),
    ("char", None, "target", "{normalize} char divides whole-sentence scores; use {method} sentence"),
    ("byte", "u", "sentence", "{unigram} is read by {normalize} slor only (not byte)"),
    ("mean", None, "sentence", "{normalize} 'mean': unknown"),
])
def test_what_cannot_be_applied_is_a_field_error(name, unigram_dir, method, message):
    with pytest.raises(FieldError) as info:
        check_normalize(name, unigram_dir, method)
    assert str(info.value).startswith(message.replace("{", "").replace("}", ""))


@pytest.fixture
def testset(tmp_path):
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", ITEMS)
    return tmp_path / "ext"


def _rows(out):
    t = read_scored(out / "items.tsv")
    return {(i, v): (c, w) for i, v, c, w in zip(t.item_id, t.variant, t.logp_correct, t.logp_wrong)}


def test_char_and_slor_on_the_command_line(tmp_path, testset):
    model, uni = unigram(tmp_path / "m", PLUR), unigram(tmp_path / "u", SING)
    base = ["score", testset, "--model", model, "--method", "sentence", "-q"]
    r = run_agree(*base, "--out", tmp_path / "sum")
    assert r.exit_code == 0, r.stderr
    manifest = json.loads((tmp_path / "sum" / "manifest.json").read_text())
    assert "normalize" not in json.dumps(manifest["parameters"])   # the default records nothing new
    r = run_agree(*base, "--normalize", "char", "--out", tmp_path / "char")
    assert r.exit_code == 0, r.stderr
    assert json.loads((tmp_path / "char" / "manifest.json").read_text())["parameters"]["normalize"] == "char"
    raw, char = _rows(tmp_path / "sum"), _rows(tmp_path / "char")
    # the text as written: "the dog runs." is 13 characters, "the dog run." 12
    assert char[("a", 0)] == pytest.approx((raw[("a", 0)][0] / 13, raw[("a", 0)][1] / 12), rel=1e-12)
    r = run_agree(*base, "--normalize", "slor", "--unigram", uni, "--out", tmp_path / "slor")
    assert r.exit_code == 0, r.stderr
    slor = _rows(tmp_path / "slor")
    u = load_model(uni)
    good, bad = Words(("the", "dog", "runs", ".")), Words(("the", "dog", "run", "."))
    expect = ((raw[("a", 0)][0] - float(np.sum(u.word_logprobs([good])[0]))) / 4,
              (raw[("a", 0)][1] - float(np.sum(u.word_logprobs([bad])[0]))) / 4)
    assert slor[("a", 0)] == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("extra, message", [
    (["--method", "sentence", "--normalize", "slor"],
     "Error: --normalize slor needs a word unigram model: give --unigram DIR (one from agree train-lm "
     "--arch unigram)\n"),
    (["--normalize", "token"], "Error: --normalize token divides whole-sentence scores; use --method sentence\n"),
])
def test_a_normalisation_that_cannot_run_is_one_error_line(tmp_path, testset, extra, message):
    model = unigram(tmp_path / "m", PLUR)
    r = run_agree("score", testset, "--model", model, *extra, "--out", tmp_path / "o", "-q")
    assert (r.exit_code, r.stderr) == (1, message)
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.partial").exists()


def test_slor_needs_a_unigram_not_another_model(tmp_path, testset):
    model = unigram(tmp_path / "m", PLUR)
    (tmp_path / "k").mkdir()
    r = run_agree("score", testset, "--model", model, "--method", "sentence", "--normalize", "slor",
                  "--unigram", tmp_path / "k", "--out", tmp_path / "o", "-q")
    assert r.exit_code == 1 and r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "o").exists()
