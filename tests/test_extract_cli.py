"""``agree extract`` through click's CliRunner: outputs, stdout, and bad input."""
from __future__ import annotations

import json

import pytest

from conftest import run_agree
from formats.items import read_items
from test_extract import toy_conllu, toy_treebank
from treebanks.paradigms import ParadigmTable


def run(*args):
    return run_agree("extract", *args)


@pytest.fixture
def toy(tmp_path):
    return toy_treebank(tmp_path / "tb")


def test_writes_the_output_directory(toy, tmp_path):
    out = tmp_path / "out"
    r = run(toy, "--out", out, "--lang", "en", "-q")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == ["constructions.tsv", "items.tsv", "manifest.json",
                                                     "paradigms.tsv"]
    assert r.output.splitlines() == [
        "dir  construction     sing  plur  arcs  items",
        "L    NOUN VERB VERB     15    13    28     25",
        "     1 constructions                       25"]
    rows = (out / "constructions.tsv").read_text().splitlines()
    assert rows == ["direction\tconstruction\tpairs\tsing\tplur\tcue_counts\tentropy\tarcs\titems",
                    "L\tNOUN VERB VERB\tSing>Sing:15 Plur>Plur:13\t15\t13\tNumber=Plur:13 Number=Sing:15\t"
                    "0.000000\t28\t25"]
    items = list(read_items(out))
    assert len(items) == 25 and items[0].item_id == "toy:sv-Sing-0:1-6"
    assert ParadigmTable.load(out).counts  # nonce reads it back
    m = json.loads((out / "manifest.json").read_text())
    assert m["command"] == "extract" and m["inputs"][0]["path"] == str(toy) and len(m["inputs"][0]["sha256"]) == 64
    assert (m["parameters"]["features"], m["parameters"]["lang"], m["parameters"]["min_count"]) == ("Number", "en", 10)
    assert m["counts"] == {"sentences": 49, "tokens": 413, "constructions": 1, "items": 25}
    assert (m["filters"]["non_projective"], m["filters"]["same_spelling"], m["filters"]["no_alternative"]) == (1, 2, 1)


def test_same_input_byte_identical_output(toy, tmp_path):
    for name in ("a", "b"):
        assert run(toy, "--out", tmp_path / name, "-q").exit_code == 0
    for f in ("constructions.tsv", "items.tsv", "paradigms.tsv"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_explain_prints_counts_and_verdict(toy, tmp_path):
    r = run(toy, "--out", tmp_path / "o", "-q", "--explain", "R VERB NOUN DET NOUN")
    assert r.exit_code == 0
    assert "R VERB NOUN DET NOUN: REJECTED (20 candidate arcs)\n  cue>target pairs: Plur>Sing 10, Sing>Sing 10\n" \
        in r.output
    assert "  -> rejected: H(cue|target) = 0.6931 nats >= 0.001" in r.output


def test_colorlessgreen_format(toy, tmp_path):
    out = tmp_path / "cg"
    assert run(toy, "--out", out, "--format", "colorlessgreen", "-q").exit_code == 0
    for suffix in ("text", "gold", "eval", "tab"):
        assert (out / f"generated.{suffix}").is_file()
    assert len((out / "generated.text").read_text().splitlines()) == 25


def test_options_reach_the_library(toy, tmp_path):
    r = run(toy, "--out", tmp_path / "o", "-q", "--min-count", 14)
    assert r.exit_code == 0 and "0 constructions" in r.output
    assert list(read_items(tmp_path / "o")) == []


def test_help_ends_with_an_example():
    r = run_agree("extract", "--help")
    assert r.exit_code == 0 and "Example:\n    agree extract ../shared/data/ud/en_ewt" in r.output
    for option in ("--features", "--min-count", "--min-distance", "--max-distance", "--alt", "--infer-verb-number",
                   "--vocab", "--explain", "--format", "--lang"):
        assert option in r.output


# --- bad input: one "Error: ..." line, exit code 1, no output directory -------------

def expect_error(args, message, out):
    r = run(*args, "--out", out, "-q")
    assert (r.exit_code, r.output) == (1, f"Error: {message}\n")
    assert not out.exists() and not list(out.parent.glob(f".{out.name}.tmp-*"))


def test_malformed_line(tmp_path):
    path = tmp_path / "bad.conllu"
    text = toy_conllu().splitlines()
    text[1] = text[1].replace("\tthe\tDET", "\tthe DET")  # one column short
    path.write_text("\n".join(text) + "\n")
    expect_error([path], f"{path}:2: expected 10 tab-separated columns, found 9", tmp_path / "o")


def test_non_integer_head(tmp_path):
    path = tmp_path / "bad.conllu"
    text = toy_conllu().splitlines()
    text[1] = text[1].replace("\t2\tdet", "\ttwo\tdet")
    path.write_text("\n".join(text) + "\n")
    expect_error([path], f"{path}:2: HEAD: 'two' is not a number",
                 tmp_path / "o")


def test_missing_empty_and_non_utf8_files(toy, tmp_path):
    expect_error([toy, tmp_path / "nope.conllu"], f"{tmp_path / 'nope.conllu'}: no such file", tmp_path / "o")
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    expect_error([toy, empty], f"{empty}: empty treebank (no sentences)", tmp_path / "o")
    latin = tmp_path / "latin1.conllu"
    latin.write_bytes(toy_conllu().replace("ball", "b\xe4ll").encode("latin-1"))
    line = next(i for i, l in enumerate(toy_conllu().splitlines(), 1) if "ball" in l)
    expect_error([latin], f"{latin}:{line}: not UTF-8 text (byte 0xe4 at column 4); CoNLL-U files must be UTF-8",
                 tmp_path / "o")


def test_treebank_without_the_feature(toy, tmp_path):
    expect_error([toy, "--features", "Foo"], f"{toy}: no token has the feature Foo; features in this treebank: "
                 "Definite, Degree, Mood, Number, Person, PronType, Tense, VerbForm, Voice", tmp_path / "o")


def test_existing_output_survives_a_failed_run(toy, tmp_path):
    out = tmp_path / "o"
    assert run(toy, "--out", out, "-q").exit_code == 0
    before = (out / "items.tsv").read_bytes()
    r = run(tmp_path / "nope.conllu", "--out", out, "-q")
    assert r.exit_code == 1 and (out / "items.tsv").read_bytes() == before
