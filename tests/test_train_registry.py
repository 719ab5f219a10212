"""The training registry, the checkpoint's Progress, field-named errors and the one
device resolver (lm.training.trainers, lm.neural.checkpoint.Progress, lm.errors.FieldError, lm.device)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import asdict, fields
from pathlib import Path

import pytest
import torch

from agreement.cli import spell_fields
from agreement.commands.train import train_lm as train_command
from conftest import run_agree
from lm.neural.checkpoint import Progress
from lm.device import check_device_name, resolve_device
from lm.errors import FieldError, LMError, TrainingInterrupted, literal
from lm.neural.models import LMConfig
from lm.neural.presets import MODEL_SETTINGS
from lm.training.trainers import _TRAINERS, Trainer, TrainRun, get_trainer, register_trainer, sizes, trainers
from lm.training.train import partial_dir, train_lm
from lm.unigram import train_unigram
from test_train import TINY, make_corpus

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("reg") / "corpus")


def test_listing_the_architectures_imports_no_torch():
    """`agree train-lm --help` (and `agree --help`) read the registry without torch."""
    code = ("import sys; from lm.training.trainers import trainers, sizes; "
            "import agreement.commands.train; "
            "print(list(trainers()), sizes(), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert out.strip() == "['lstm', 'transformer', 'kn5', 'unigram'] ('paper', 'small') False"


def test_cli_choices_and_presets_come_from_the_registry():
    params = {p.name: p for p in train_command.params}
    assert list(params["arch"].type.choices) == list(trainers())
    assert tuple(params["size"].type.choices) == sizes()
    r = run_agree("train-lm", "--help")
    small = get_trainer("lstm").presets["small"]
    assert f"lstm small: --emb {small['emb_size']}, --hidden {small['hidden_size']}," in r.output
    assert "kn5: --order 5, --vocab-size none" in r.output


def test_model_settings_are_the_lmconfig_fields():
    assert set(MODEL_SETTINGS) == {f.name for f in fields(LMConfig)} - {"kind", "vocab_size"}


def test_settings_precedence_and_unknown_settings():
    lstm = get_trainer("lstm")
    s = lstm.settings("small", {"lr": 2.0, "epochs": None})
    assert (s["lr"], s["epochs"], s["hidden_size"], s["sp_vocab_size"]) == (2.0, 3, 200, 8000)
    assert get_trainer("kn5").settings("small", {}) == {"order": 5, "vocab_size": None}
    with pytest.raises(FieldError, match=r"^arch kn5 does not take epochs, hidden_size$") as e:
        get_trainer("kn5").settings("paper", {"hidden_size": 8, "epochs": 2})
    assert e.value.fields == ("arch", "epochs", "hidden_size")
    with pytest.raises(FieldError, match=r"unknown size 'huge' \(known: paper, small\)"):
        lstm.settings("huge", {})
    with pytest.raises(LMError, match=r"unknown architecture 'gru' \(known: lstm, "
                                      r"transformer, kn5, unigram\)"):
        get_trainer("gru")


def train_counts(corpus, out_dir, settings, run: TrainRun) -> dict:
    """A trainer registered by the test below: the unigram counter, reporting what it got."""
    metrics = train_unigram(corpus, out_dir)
    (out_dir / "seen.json").write_text(json.dumps({"settings": settings, "arch": run.arch,
                                                   "lang": run.lang}))
    return metrics


def test_a_registered_architecture_trains_through_train_lm(corpus, tmp_path):
    """A new backend is one register_trainer call: train_lm finds it, lays its preset
    over its defaults, cuts the vocabulary for it, and refuses settings it lacks."""
    register_trainer(Trainer(arch="counts", train="test_train_registry:train_counts",
                             defaults={"vocab_size": None, "order": 1},
                             presets={"tiny": {"vocab_size": 4}}, capped_vocab=True))
    try:
        r = train_lm([corpus], tmp_path / "m", arch="counts", size="tiny")
        seen = json.loads((tmp_path / "m" / "seen.json").read_text())
        assert seen == {"settings": {"vocab_size": 4, "order": 1}, "arch": "counts", "lang": "en"}
        vocab = (tmp_path / "m" / "vocab.txt").read_text().splitlines()
        assert vocab == (corpus / "vocab.txt").read_text().splitlines()[:6]
        assert r.kind == "counts" and r.metrics["valid_tokens"] > 0
        assert "tiny" in sizes() and "counts" in trainers()
        with pytest.raises(FieldError, match=r"^arch counts does not take resume$"):
            train_lm([corpus], tmp_path / "n", arch="counts", resume=True)
    finally:
        _TRAINERS.pop("counts")
    assert "tiny" not in sizes()


def test_progress_is_the_checkpoint_entry():
    # the stored keys: renaming one stops the checkpoints of this release from resuming
    assert [f.name for f in fields(Progress)] == [
        "epoch", "batch", "step", "lr", "best", "valid_tokens", "log", "elapsed", "loss_sum",
        "loss_steps", "tokens", "train_time"]
    p = Progress(epoch=1, batch=3, step=60, lr=5.0, best=2.5, valid_tokens=99, log=[[1, 53]])
    assert Progress.from_dict(asdict(p), Path("c.pt")) == p
    with pytest.raises(LMError, match=r"c.pt: .*progress entry does not match .*unknown: "
                                      r"momentum; missing: none"):
        Progress.from_dict({**asdict(p), "momentum": 0.9}, Path("c.pt"))
    entry = asdict(p)
    del entry["step"]
    with pytest.raises(LMError, match=r"unknown: none; missing: step"):
        Progress.from_dict(entry, Path("c.pt"))


def test_a_checkpoint_without_valid_tokens_resumes(corpus, tmp_path):
    """Interrupted before its first validation, a run of this release stored no
    valid_tokens: such a checkpoint still resumes, to the weights of a straight run."""
    def on_step(step):
        if step == 3:
            os.kill(os.getpid(), signal.SIGINT)
    out = tmp_path / "m"
    with pytest.raises(TrainingInterrupted):
        train_lm([corpus], out, arch="lstm", seed=2, max_steps=12, on_step=on_step, **TINY)
    path = partial_dir(out) / "checkpoint.pt"
    ckpt = torch.load(path, weights_only=True)
    assert ckpt["progress"]["step"] == 3 and ckpt["progress"]["valid_tokens"] is None
    del ckpt["progress"]["valid_tokens"]
    torch.save(ckpt, path)
    train_lm([corpus], out, arch="lstm", seed=2, max_steps=12, resume=True, **TINY)
    train_lm([corpus], tmp_path / "s", arch="lstm", seed=2, max_steps=12, **TINY)
    a = torch.load(out / "model.pt", weights_only=True)["state_dict"]
    b = torch.load(tmp_path / "s" / "model.pt", weights_only=True)["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_field_errors_are_spelled_as_the_commands_options():
    e = FieldError(f"{{emb_size}} must equal {{hidden_size}} in {literal('/a/{b}')}; {{tied}}, "
                   "{max_steps}, {unknown_field}")
    assert str(e) == "emb_size must equal hidden_size in /a/{b}; tied, max_steps, unknown_field"
    assert spell_fields(e, train_command) == ("--emb must equal --hidden in /a/{b}; --tied, "
                                              "--max-steps, unknown_field")
    assert spell_fields(LMError("{emb_size}"), train_command) == "{emb_size}"


@pytest.mark.parametrize("name", ["auto", "cpu", "cuda", "cuda:1"])
def test_device_names(name):
    assert check_device_name(name) == name


@pytest.mark.parametrize("name", ["tpu", "cuda:x", "CPU", "", "cuda:"])
def test_bad_device_names(name):
    with pytest.raises(FieldError, match=r"unknown device .* \(use auto, cpu, cuda or cuda:N\)"):
        check_device_name(name)


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    if torch.cuda.is_available():  # pragma: no cover - needs a GPU
        assert resolve_device("cuda", local_rank=0) == torch.device("cuda", 0)
    else:
        assert resolve_device("auto") == torch.device("cpu")
        with pytest.raises(FieldError, match=r"^device cuda:1 requested but CUDA is not"):
            resolve_device("cuda:1")


@pytest.mark.parametrize("command", ["train-lm", "score"])
def test_one_device_option(command, corpus, tmp_path):
    """train-lm and score share one --device type: a bad name is a usage error before work."""
    r = run_agree(command, str(corpus), "--device", "tpu", "--out",
                                 str(tmp_path / "o"))
    assert r.exit_code == 2 and "Invalid value for '--device': unknown device 'tpu'" in r.output
    assert not (tmp_path / "o").exists()
