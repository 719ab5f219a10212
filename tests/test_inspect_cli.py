"""``agree inspect`` end to end (CliRunner): its files, byte-identical reruns, and one
``Error:`` line for every bad input, with nothing written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.items import write_items
from tests.conftest import run_agree
from tests.inspect_fixtures import VOCAB, number_items, number_lstm, write_items_dir, write_model_dir

TABLES = ("units.tsv", "topk.tsv", "trajectories.tsv", "probes.tsv", "patching.tsv")
PNGS = ("ablation.png", "trajectories.png", "probes.png", "patching.png")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect")
    return write_items_dir(root / "items"), write_model_dir(root / "model", number_lstm())


def test_help_has_an_example():
    result = run_agree("inspect", "--help")
    assert result.exit_code == 0 and "Example:" in result.output


def test_inspect_writes_every_table_and_the_same_seed_gives_the_same_bytes(inputs, tmp_path):
    items, model = inputs
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        result = run_agree("inspect", items, "--model", model, "--top", "1", "--draws", "3", "--folds", "4",
                           "--out", out, "-q")
        assert result.exit_code == 0, result.output + result.stderr
        assert "top units\t0:0" in result.stdout
        outs.append(out)
    for name in (*TABLES, *PNGS, "inspect.md"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    manifest = json.loads((outs[0] / "manifest.json").read_text())
    assert manifest["command"] == "inspect" and manifest["counts"]["inspected"] == 40
    header = (outs[0] / "units.tsv").read_text().splitlines()[0].split("\t")
    assert header[:4] == ["site", "layer", "unit", "condition"]
    assert "| state | all |  | 40/40 |" in (outs[0] / "inspect.md").read_text()


def test_another_seed_draws_other_random_units(inputs, tmp_path):
    items, model = inputs
    for seed in ("1", "2"):
        assert run_agree("inspect", items, "--model", model, "--analysis", "ablation", "--draws", "4",
                         "--seed", seed, "--out", tmp_path / seed, "-q").exit_code == 0
    assert (tmp_path / "1" / "topk.tsv").read_text() != (tmp_path / "2" / "topk.tsv").read_text()


def error_of(result) -> str:
    assert result.exit_code == 1, result.output + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def unigram_dir(path):
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"kind": "unigram", "smoothing": "add-one",
                                                  "vocab_size": len(VOCAB)}))
    (path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (path / "counts.tsv").write_text("word\tcount\n" + "".join(f"{w}\t3\n" for w in VOCAB))
    return path


def test_a_model_that_cannot_be_opened_is_one_error_naming_what_can(inputs, tmp_path):
    items, _ = inputs
    line = error_of(run_agree("inspect", items, "--model", unigram_dir(tmp_path / "uni"), "--out", tmp_path / "o"))
    assert "a unigram model cannot be opened" in line and "lstm and transformer" in line
    assert not (tmp_path / "o").exists()


def test_llama_cpp_is_refused_before_the_file_is_read(inputs, tmp_path):
    from tests.gguf_fixtures import tiny_gguf

    items, _ = inputs
    gguf = tiny_gguf(tmp_path / "tiny.gguf")
    line = error_of(run_agree("inspect", items, "--model", f"gguf:{gguf}", "--engine", "llama.cpp",
                              "--out", tmp_path / "o"))
    assert "llama.cpp engine cannot be opened" in line and "Hugging Face causal" in line


def test_a_layer_out_of_range_is_one_error(inputs, tmp_path):
    items, model = inputs
    line = error_of(run_agree("inspect", items, "--model", model, "--layers", "0,3", "--out", tmp_path / "o"))
    assert "--layers: layer 3 is out of range for hidden" in line and "(layers 0 to 0)" in line
    line = error_of(run_agree("inspect", items, "--model", model, "--site", "cell", "--out", tmp_path / "o"))
    assert "--site cell: its units cannot be ablated" in line
    assert not (tmp_path / "o").exists()


def test_an_empty_test_set_is_one_error(inputs, tmp_path):
    _, model = inputs
    (tmp_path / "empty").mkdir()
    write_items(tmp_path / "empty" / "items.tsv", [])
    line = error_of(run_agree("inspect", tmp_path / "empty", "--model", model, "--out", tmp_path / "o"))
    assert "no items in the test set" in line


def test_patching_pairs_without_a_cue_is_one_error_counting_them(inputs, tmp_path):
    _, model = inputs
    pairs = tmp_path / "pairs.jsonl"
    rows = [{"sentence_good": f"the {s} runs .", "sentence_bad": f"the {s} run .", "UID": "x",
             "pairID": str(k)} for k, s in enumerate(("dog", "cat", "bird"))]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    line = error_of(run_agree("inspect", pairs, "--model", model, "--out", tmp_path / "o"))
    assert "no item has a known subject number (3 the subject's number is unknown" in line
    items = tmp_path / "nocue"
    items.mkdir()
    write_items(items / "items.tsv", [it.replace(pos=("_",) * len(it.tokens)) for it in number_items()[:5]])
    line = error_of(run_agree("inspect", items, "--model", model, "--analysis", "patching", "--out", tmp_path / "o"))
    assert "patching: no item has a twin" in line and "5 no known cue position" in line
    assert not (tmp_path / "o").exists()


def test_the_out_policy_holds(inputs, tmp_path):
    items, model = inputs
    assert "never writes into its inputs" in error_of(run_agree("inspect", items, "--model", model, "--out", items))
    inside = Path(items) / "inspect"   # the items directory given, its items.tsv read
    assert "lies inside the input" in error_of(run_agree("inspect", items, "--model", model, "--out", inside))
    assert not inside.exists()
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "thesis.tex").write_text("x")
    line = error_of(run_agree("inspect", items, "--model", model, "--analysis", "probes", "--out", mine))
    assert "is not an output of `agree inspect`" in line and (mine / "thesis.tex").read_text() == "x"
