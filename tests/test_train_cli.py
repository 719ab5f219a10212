"""`agree train-lm`: help, errors, manifest, and Ctrl-C + --resume through the real CLI."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from conftest import run_agree
from test_train import log_rows, make_corpus, write_text

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--size", "small", "--emb", "16", "--hidden", "16", "--batch-size", "4", "--bptt", "8",
        "--lr", "5", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("cli") / "corpus")


def run(*args):
    return run_agree("train-lm", *args)


def test_help_has_example():
    r = run("--help")
    assert r.exit_code == 0
    example = "Example:\n    agree train-lm wiki.xml.bz2 --lang en --arch lstm --size small"
    assert example in r.output
    for option in ("--arch [lstm|transformer|kn5|unigram]", "--resume", "--max-steps",
                   "--tied / --no-tied", "--tokenizer [word|sentencepiece]",
                   "--checkpoint-minutes"):
        assert option in r.output


def test_trains_and_writes_manifest(corpus, tmp_path):
    out = tmp_path / "m"
    r = run(corpus, "--arch", "lstm", "--max-steps", "5", "--seed", "4", *TINY, "--out", out)
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == "train-lm"
    assert manifest["parameters"]["arch"] == "lstm" and manifest["parameters"]["hidden_size"] == 16
    assert manifest["metrics"]["steps"] == 5 and manifest["metrics"]["valid_ppl"] > 1
    assert {i["path"] for i in manifest["inputs"]} >= {str(corpus / "train.txt")}
    assert (out / "model.pt").is_file() and not (tmp_path / "m.partial").exists()


def test_each_line_of_the_lm_layer_once(corpus, tmp_path):
    """The lm layer's lines go through the one logging setup, one line each (not also
    through a second handler), and no progress bar's carriage returns reach a file."""
    r = run(corpus, "--arch", "lstm", "--max-steps", "3", *[a for a in TINY if a != "--quiet"],
            "--out", tmp_path / "m")
    assert r.exit_code == 0, r.output
    epoch_lines = [line for line in r.stderr.splitlines() if line.startswith("epoch 1")]
    assert len(epoch_lines) == 1 and r.stderr.count("training ") == 1
    assert "\r" not in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--arch", "kn5", "--hidden", "10"], "Error: --arch kn5 does not take --hidden\n"),
    (["--arch", "kn5", "--epochs", "3"], "Error: --arch kn5 does not take --epochs\n"),
    (["--arch", "lstm", "--tied", "--emb", "8", "--hidden", "16"],
     "Error: invalid model settings: tied weights need emb_size == hidden_size (got 8 and 16)\n"),
])
def test_bad_options(corpus, tmp_path, args, message):
    r = run(corpus, *args, "--out", tmp_path / "m")
    assert (r.exit_code, r.output) == (1, message)
    assert not (tmp_path / "m").exists() and not (tmp_path / "m.partial").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present here")
def test_cuda_requested_without_cuda(corpus, tmp_path):
    r = run(corpus, *TINY, "--device", "cuda", "--out", tmp_path / "m")
    assert (r.exit_code, r.output) == (1, "Error: --device cuda requested but CUDA is not "
                                          "available\n")
    assert not (tmp_path / "m.partial").exists()


def test_unknown_arch_is_a_usage_error(corpus, tmp_path):
    r = run(corpus, "--arch", "gru", "--out", tmp_path / "m")
    assert r.exit_code == 2
    assert "Invalid value for '--arch': 'gru' is not one of 'lstm', 'transformer', 'kn5', " \
           "'unigram'." in r.output


def test_corpus_smaller_than_a_batch(tmp_path):
    text = write_text(tmp_path / "few.txt", 12)
    r = run(text, "--lang", "en", "--arch", "lstm", "--size", "small", "--quiet",
            "--out", tmp_path / "m")
    assert r.exit_code == 1
    assert r.output.startswith("Error: ") and "is fewer than one batch (8 rows x 36 = 288); " \
        "use a smaller --batch-size or --bptt, or a larger corpus\n" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["few.txt"]


def test_resume_without_checkpoint(corpus, tmp_path):
    r = run(corpus, "--resume", *TINY, "--out", tmp_path / "m")
    assert r.exit_code == 1
    assert r.output == f"Error: nothing to resume: no checkpoint in {tmp_path / 'm.partial'} " \
                       "(run without --resume to start training)\n"


def test_ctrl_c_saves_a_checkpoint_and_resume_continues(corpus, tmp_path):
    """A real SIGINT to a real `agree train-lm` process: exit 130, a message saying how to
    resume, no traceback; --resume then continues from the saved step to the end."""
    out = tmp_path / "m"
    partial = tmp_path / "m.partial"
    args = [sys.executable, "-m", "agreement.cli", "train-lm", str(corpus), "--arch", "lstm",
            *TINY, "--epochs", "1000", "--checkpoint-minutes", "0.001", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not (partial / "checkpoint.pt").is_file():   # the loop (and its handler) is running
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "Interrupted: training interrupted at epoch" in stderr
    assert f"checkpoint saved in {partial}. Continue with the same command and --resume" in stderr
    assert "Traceback" not in stderr and not out.exists()
    step = torch.load(partial / "checkpoint.pt", weights_only=True)["progress"]["step"]
    assert step > 0

    r = run(corpus, "--arch", "lstm", *TINY, "--epochs", "1000", "--max-steps", step + 3,
            "--resume", "--out", out)
    assert r.exit_code == 0, r.output
    assert json.loads((out / "manifest.json").read_text())["metrics"]["steps"] == step + 3
    assert log_rows(out)[-1][1] == str(step + 3)
    assert not partial.exists()
