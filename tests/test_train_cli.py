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


def interrupted(args, ready, seconds=60) -> tuple[int, str]:
    """``agree ARGS`` as a real process, sent SIGINT as soon as ``ready()`` is true;
    its exit code and stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "agreement.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            cwd=ROOT, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + seconds
        while not ready():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=seconds)
    finally:
        proc.kill()
    return proc.returncode, stderr


@pytest.mark.parametrize("signum, code, said", [(signal.SIGINT, 130, "Interrupted"),
                                                 (signal.SIGTERM, 143, "Terminated")])
def test_a_signal_before_the_first_step_saves_a_checkpoint(corpus, tmp_path, monkeypatch, signum, code, said):
    """Ctrl-C (or SIGTERM) while the run is still setting up (here: as its vocabulary is
    built) saves a checkpoint of step 0 once the model is built, says so, and --resume
    from it ends with the weights of an uninterrupted run."""
    import lm.neural.train as neural_train

    build = neural_train.build_vocabulary

    def build_then_signal(*args, **kwargs):
        build(*args, **kwargs)
        os.kill(os.getpid(), signum)

    monkeypatch.setattr(neural_train, "build_vocabulary", build_then_signal)
    out, partial = tmp_path / "m", tmp_path / "m.partial"
    args = [corpus, "--arch", "lstm", *TINY, "--max-steps", "5", "--out", out]
    r = run(*args)
    assert (r.exit_code, r.output) == (code, f"{said}: training interrupted before its first step; checkpoint "
                                             f"saved in {partial}. Continue with the same command and --resume\n")
    assert not out.exists()
    assert torch.load(partial / "checkpoint.pt", weights_only=True)["progress"]["step"] == 0

    monkeypatch.setattr(neural_train, "build_vocabulary", build)
    assert run(*args, "--resume").exit_code == 0
    assert run(*args[:-1], tmp_path / "whole").exit_code == 0
    resumed = torch.load(out / "model.pt", weights_only=True)["state_dict"]
    whole = torch.load(tmp_path / "whole" / "model.pt", weights_only=True)["state_dict"]
    assert resumed.keys() == whole.keys() and all(torch.equal(resumed[k], whole[k]) for k in whole)


def test_ctrl_c_as_soon_as_the_run_holds_its_output_is_resumable(corpus, tmp_path):
    """A real process, Ctrl-C as soon as it has claimed --out (torch loaded, nothing
    trained yet on most machines): a checkpoint, said so, exit 130, and --resume ends."""
    out, partial = tmp_path / "m", tmp_path / "m.partial"
    code, stderr = interrupted(["train-lm", corpus, "--arch", "lstm", *TINY, "--epochs", "1000", "--out", out],
                               (tmp_path / ".m.lock").exists, seconds=120)
    assert code == 130, stderr
    assert stderr.startswith("Interrupted: training interrupted ") and "Traceback" not in stderr
    assert f"checkpoint saved in {partial}. Continue with the same command and --resume" in stderr
    step = torch.load(partial / "checkpoint.pt", weights_only=True)["progress"]["step"]
    r = run(corpus, "--arch", "lstm", *TINY, "--epochs", "1000", "--max-steps", step + 3, "--resume", "--out", out)
    assert r.exit_code == 0, r.output
    assert json.loads((out / "manifest.json").read_text())["metrics"]["steps"] == step + 3


def test_ctrl_c_saves_a_checkpoint_and_resume_continues(corpus, tmp_path):
    """A real SIGINT to a real `agree train-lm` process: exit 130, a message saying how to
    resume, no traceback; --resume then continues from the saved step to the end."""
    out = tmp_path / "m"
    partial = tmp_path / "m.partial"
    args = ["train-lm", corpus, "--arch", "lstm", *TINY, "--epochs", "1000", "--checkpoint-minutes", "0.001",
            "--out", out]
    # once a checkpoint exists, the loop (and its handler) is running
    code, stderr = interrupted(args, (partial / "checkpoint.pt").is_file)
    assert code == 130, stderr
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
