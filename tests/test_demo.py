"""``agree demo`` end to end at the tiny size: the real commands, models and report."""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from agreement.cli import cli
from agreement.demo import MODELS, commands, demo_config, run_demo
from agreement.report import Tally


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "demo-out"
    return run_demo(out, demo_config("tiny", seed=1111, quiet=True))


@pytest.mark.slow
def test_every_step_wrote_its_directory(tiny):
    out = tiny.out_dir
    for sub in ("synth", "corpus", "extract", "nonce", "models/lstm", "models/kn5", "models/unigram", "score"):
        assert (out / sub / "manifest.json").is_file(), sub
    assert (out / "synth" / "treebank.conllu").stat().st_size > 0
    # each step's manifest records its own command line and paths relative to --out
    extract = json.loads((out / "extract" / "manifest.json").read_text())
    assert extract["argv"][:2] == ["extract", "synth/treebank.conllu"]
    assert extract["inputs"][0]["path"] == "synth/treebank.conllu"
    assert not list(out.parent.glob(".demo-out.tmp-*"))   # the temporary directory is gone


@pytest.mark.slow
def test_report_has_the_tables_the_sentence_and_the_plots(tiny):
    text = tiny.report.read_text(encoding="utf-8")
    assert tiny.finding in text
    assert re.search(r"nonce sentences with at least one attractor \(\d+ items\)", tiny.finding)
    for heading in ("## Accuracy", "## By number of attractors", "## By construction", "## Time"):
        assert heading in text
    assert "`L NOUN VERB VERB`" in text and "`L NOUN NOUN VERB`" in text
    for label in ("LSTM", "5-gram", "unigram"):
        assert f"| {label} |" in text
    links = re.findall(r"!\[[^]]*\]\(([^)]+\.png)\)", text)
    assert links and all((tiny.out_dir / link).is_file() for link in links)


@pytest.mark.slow
def test_accuracies_are_proportions_and_the_lstm_beats_chance(tiny):
    for m in MODELS:
        for key in ("original", "nonce", "original_attr", "nonce_attr"):
            assert 0.0 <= tiny.accuracy[m.name][key] / 100 <= 1.0
    # scored rows: one per item and model, correct in {0, 1}
    rows = (tiny.out_dir / "score" / "items.tsv").read_text(encoding="utf-8").splitlines()
    header = rows[0].split("\t")
    correct = [r.split("\t")[header.index("correct")] for r in rows[1:]]
    assert set(correct) <= {"0", "1"}
    lstm = Tally()
    for r in rows[1:]:
        f = dict(zip(header, r.split("\t")))
        if f["model"] == "lstm" and f["variant"] == "0":
            lstm.add(f["correct"] == "1")
    assert lstm.n > 100
    assert lstm.ci()[0] > 50.0, f"LSTM on originals: {lstm.pct:.1f}% of {lstm.n}"
    assert lstm.pct == pytest.approx(tiny.accuracy["lstm"]["original"])


def test_commands_are_the_documented_pipeline():
    steps = [args[0] for args in commands(demo_config("tiny"))]
    assert steps == ["corpus", "extract", "nonce", "train-lm", "train-lm", "train-lm", "score"]


def test_cli_help_and_bad_size():
    runner = CliRunner()
    result = runner.invoke(cli, ["demo", "--help"])
    assert result.exit_code == 0 and "Example:" in result.output and "agree demo --out demo-out" in result.output
    result = runner.invoke(cli, ["demo", "--size", "huge", "--out", "x"])
    assert result.exit_code == 2 and "'huge' is not one of 'tiny', 'default'" in result.output


def test_unknown_preset_is_an_error():
    with pytest.raises(ValueError, match="unknown demo size 'huge'"):
        demo_config("huge")
