"""The run context (formats/run.py) and the one logging path: -q / default / -v on stderr,
the handler writing to the stderr of the moment, the --out policy and manifest through it."""
from __future__ import annotations

import io
import json
import logging
import sys

import pytest

from conftest import raises_as_cli, run_agree
from formats.errors import AgreeError
from treebanks import progress as progress_module
from treebanks.progress import progress
from formats.run import RunContext, configure_logging

TEXT = "".join(f"the dog{i} runs .\nthe cats{i} run .\n" for i in range(5))


def _corpus(tmp_path, *flags):
    (tmp_path / "t.txt").write_text(TEXT, encoding="utf-8")
    return run_agree("corpus", str(tmp_path / "t.txt"), "--lang", "en", "--max-unk", "1",
                     "--out", str(tmp_path / "c"), *flags)


def test_verbosity_levels(tmp_path):
    default, quiet, verbose = _corpus(tmp_path), _corpus(tmp_path, "-q"), _corpus(tmp_path, "-v")
    assert [r.exit_code for r in (default, quiet, verbose)] == [0, 0, 0]
    info = "sentences (40 tokens) read"
    assert info in default.stderr and "manifest.json in" not in default.stderr
    assert quiet.stderr == ""                       # no lines, no progress bar
    assert info in verbose.stderr and "corpus: manifest.json in" in verbose.stderr


def test_warnings_stay_with_quiet(tmp_path):
    (tmp_path / "t.txt").write_text(TEXT, encoding="utf-8")
    r = run_agree("corpus", str(tmp_path / "t.txt"), "--lang", "xx", "--max-unk", "1",
                  "--out", str(tmp_path / "c"), "-q")
    assert r.exit_code == 0
    assert r.stderr.startswith("Warning: the tokenizer has no rules for language 'xx'")
    assert r.stderr.count("\n") == 1


def test_the_handler_writes_to_the_stderr_of_the_moment(monkeypatch):
    configure_logging(logging.INFO)
    swapped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", swapped)
    logging.getLogger("agreement.anything").info("a line for people")
    logging.getLogger("lm.anything").debug("detail")
    assert swapped.getvalue() == "a line for people\n"


def test_output_dir_and_manifest_inside_root(tmp_path):
    (tmp_path / "data.txt").write_text("x\n", encoding="utf-8")
    run = RunContext("export", out="made", root=tmp_path, argv=("export", "data.txt", "--out", "made"))
    with run.output_dir(["data.txt"]) as tmp:
        (tmp / "pairs.txt").write_text("y\n", encoding="utf-8")
        run.write_manifest(tmp, ["data.txt"], {"n": 1})
    manifest = json.loads((tmp_path / "made" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["command"] == "export"
    assert manifest["argv"] == ["export", "data.txt", "--out", "made"]
    assert [i["path"] for i in manifest["inputs"]] == ["data.txt"]      # recorded as given
    assert (tmp_path / "made" / "pairs.txt").read_text(encoding="utf-8") == "y\n"


def test_output_dir_refuses_its_input(tmp_path):
    (tmp_path / "in").mkdir()
    run = RunContext("export", out="in", root=tmp_path)
    with raises_as_cli(AgreeError, "export", r"/in: --out is the input .*/in; choose another --out"):
        with run.output_dir(["in"]):   # refused before the block runs
            raise AssertionError("the block must not run")
    assert list((tmp_path / "in").iterdir()) == []


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_lines_in_a_file_and_a_bar_on_a_terminal(monkeypatch):
    """stderr to a file: a plain line every LINE_EVERY seconds and a last one, no carriage
    return; on a terminal: tqdm's bar; with --quiet's level: nothing."""
    configure_logging(logging.INFO)
    log = logging.getLogger("agreement.scoring.anything")
    monkeypatch.setattr(progress_module, "LINE_EVERY", 0.0)
    to_file = io.StringIO()
    monkeypatch.setattr(sys, "stderr", to_file)
    with progress(log, total=4, desc="scoring m", unit="item") as bar:
        bar.update(2)
        bar.update(2)
    lines = to_file.getvalue().splitlines()
    assert lines[0].startswith("scoring m: 2 of 4 (50%), ") and lines[0].endswith(" item/s")
    assert len(lines) == 2 and lines[1].startswith("scoring m: 4 done in ") and "\r" not in to_file.getvalue()
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress(log, total=4, desc="scoring m", unit="item") as bar:
        bar.update(4)
    assert "\r" in terminal.getvalue() and "4/4" in terminal.getvalue()
    configure_logging(logging.WARNING)
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    with progress(log, total=4, desc="scoring m", unit="item") as bar:
        bar.update(4)
    assert quiet.getvalue() == ""
    configure_logging(logging.INFO)


def test_a_short_loop_says_nothing_in_a_file(monkeypatch):
    configure_logging(logging.INFO)
    to_file = io.StringIO()
    monkeypatch.setattr(sys, "stderr", to_file)
    with progress(logging.getLogger("lm.anything"), total=3, desc="reading", unit="B", unit_scale=True) as bar:
        bar.update(3)
    assert to_file.getvalue() == ""


def test_the_seed_travels_in_the_run_context(tmp_path):
    """--seed becomes RunContext.seed at the edge, and the verbs read it from there (the
    command passes no seed of its own): the manifest records the run's seed."""
    from lm.corpus.prepare import corpus_to_dir

    r = _corpus(tmp_path, "--seed", "7", "-q")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "c" / "manifest.json").read_text())["parameters"]["seed"] == 7
    corpus_to_dir(RunContext("corpus", out=tmp_path / "lib", seed=8), [tmp_path / "t.txt"], "en", max_unk=1)
    assert json.loads((tmp_path / "lib" / "manifest.json").read_text())["parameters"]["seed"] == 8
    assert RunContext("corpus").seed == 1111      # --seed's default
