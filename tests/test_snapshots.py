"""train-lm --snapshot-every: snapshot directories, byte-identity, interrupt + resume, bad input."""
from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from conftest import run_agree
from formats.run import RunContext
from lm.load import load_model
from lm.errors import LMError, TrainingInterrupted
from lm.training.snapshots import Schedule, check_series, list_snapshots, parse_schedule
from lm.training.train import partial_dir, train_lm
from lm.training.train_dir import train_lm_to_dir
from test_train import TINY, make_corpus

#: 30 steps, a snapshot every 10 (steps_per_epoch is 53 on this corpus: all within epoch 1)
RUN = dict(arch="lstm", seed=2, max_steps=30, snapshot_every=10, **TINY)
ARGV = ["train-lm", "corpus", "--snapshot-every", "10", "--out", "m"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("snap") / "corpus")


def files(run_dir: Path) -> dict[str, bytes]:
    """Every file of a run's snapshots, by path under snapshots/."""
    root = run_dir / "snapshots"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def train(corpus, out, argv=ARGV, **kw):
    """train_lm_to_dir with RUN's settings (its seed the run's)."""
    settings = {**RUN, **kw}
    return train_lm_to_dir(RunContext("train-lm", out=out, argv=tuple(argv), seed=settings.pop("seed")),
                           [corpus], **settings)


def interrupt_at(step):
    def on_step(s):
        if s == step:
            os.kill(os.getpid(), signal.SIGINT)
    return on_step


class TestSnapshots:
    def test_complete_scorable_directories(self, corpus, tmp_path):
        r = train(corpus, tmp_path / "m")
        snaps = list_snapshots(tmp_path / "m")
        assert [p.name for p in snaps] == ["step-000010", "step-000020", "step-000030"]
        assert r.metrics["snapshots"] == 3 and r.metrics["tokens_seen"] == 30 * 4 * 8
        for n, snap in enumerate(snaps, start=1):
            assert sorted(p.name for p in snap.iterdir()) == ["config.json", "manifest.json", "model.pt",
                                                              "vocab.txt"]
            m = json.loads((snap / "config.json").read_text())["metrics"]
            assert (m["steps"], m["tokens_seen"], m["snapshot"]) == (10 * n, 10 * n * 32, n)
            assert 1 < m["valid_ppl"] < 100 and m["valid_tokens"] > 0
            manifest = json.loads((snap / "manifest.json").read_text())
            assert manifest["command"] == "train-lm" and manifest["metrics"] == m
            assert manifest["parameters"]["snapshot_every"] == 10
            scores = load_model(snap).logprob([["the", "dog"]], [["runs", "run"]])
            assert scores.shape == (1, 2)
        # the last snapshot is the weights at step 30; its validation is the run's last
        assert json.loads((snaps[-1] / "config.json").read_text())["metrics"]["valid_ppl"] \
            == pytest.approx(r.metrics["valid_ppl"])
        check_series(tmp_path / "m", snaps)

    def test_snapshots_do_not_change_training(self, corpus, tmp_path):
        """Validation at each snapshot draws no random numbers: the final weights and the
        training log are those of a run without snapshots."""
        train_lm([corpus], tmp_path / "plain", **{**RUN, "snapshot_every": None})
        train_lm([corpus], tmp_path / "snap", **RUN)
        assert (tmp_path / "plain" / "model.pt").read_bytes() == (tmp_path / "snap" / "model.pt").read_bytes()
        log = [(tmp_path / d / "train_log.tsv").read_text().splitlines() for d in ("plain", "snap")]
        assert [r.split("\t")[:4] for r in log[0]] == [r.split("\t")[:4] for r in log[1]]
        plain = json.loads((tmp_path / "plain" / "config.json").read_text())
        assert "snapshot_every" not in plain["training"] and "snapshots" not in plain["metrics"]

    def test_same_seed_same_bytes(self, corpus, tmp_path):
        train(corpus, tmp_path / "a")
        train(corpus, tmp_path / "b")
        assert files(tmp_path / "a") == files(tmp_path / "b")

    @pytest.mark.parametrize("at", [15, 20])
    def test_interrupted_and_resumed_equals_uninterrupted(self, corpus, tmp_path, at):
        """SIGINT between snapshots (15) and at a snapshot's step (20): the resumed run's
        snapshots are byte for byte those of one uninterrupted run, none twice, none missing."""
        train(corpus, tmp_path / "straight")
        out = tmp_path / "resumed"
        with pytest.raises(TrainingInterrupted):
            train(corpus, out, on_step=interrupt_at(at))
        made = sorted(p.name for p in list_snapshots(partial_dir(out)))
        assert made == ["step-000010", "step-000020"][:at // 10]
        train(corpus, out, argv=(*ARGV, "--resume"), resume=True)
        assert files(out) == files(tmp_path / "straight")
        assert (out / "model.pt").read_bytes() == (tmp_path / "straight" / "model.pt").read_bytes()

    def test_killed_after_the_checkpoint(self, corpus, tmp_path):
        """A run killed after its last checkpoint leaves snapshots past it and a half-written
        one: resuming replaces the first with what the run makes again and removes the second."""
        train(corpus, tmp_path / "straight")
        out = tmp_path / "killed"
        with pytest.raises(TrainingInterrupted):
            train(corpus, out, on_step=interrupt_at(15))
        work = partial_dir(out) / "snapshots"
        shutil.copytree(work / "step-000010", work / "step-000020")   # stale: not step 20's weights
        (work / ".step-000030.tmp").mkdir()
        (work / ".step-000030.tmp" / "model.pt").write_bytes(b"half")
        train(corpus, out, resume=True)
        assert files(out) == files(tmp_path / "straight")

    def test_every_n_tokens(self, corpus, tmp_path):
        """A snapshot at the first step that reaches each multiple of 100 tokens (32 a step)."""
        r = train_lm([corpus], tmp_path / "m", **{**RUN, "snapshot_every": None, "snapshot_tokens": 100})
        seen = [json.loads((p / "config.json").read_text())["metrics"]["tokens_seen"]
                for p in list_snapshots(tmp_path / "m")]
        assert seen == [128, 224, 320, 416, 512, 608, 704, 800, 928] and r.metrics["snapshots"] == 9
        assert all(s - 32 < k * 100 <= s for k, s in enumerate(seen, start=1))

    def test_transformer(self, corpus, tmp_path):
        train_lm([corpus], tmp_path / "tf", **{**RUN, "arch": "transformer", "heads": 2, "max_len": 8,
                                               "max_steps": 10, "snapshot_every": 5})
        snaps = list_snapshots(tmp_path / "tf")
        assert [p.name for p in snaps] == ["step-000005", "step-000010"]
        assert load_model(snaps[0]).kind == "transformer"


class TestBadInput:
    def test_schedule(self):
        assert parse_schedule("100") == Schedule(steps=100)
        assert parse_schedule("2M-tokens") == Schedule(tokens=2_000_000)
        assert parse_schedule("1.5k-tokens") == Schedule(tokens=1500)
        for bad, message in [("0", "at least 1"), ("0-tokens", "at least 1"), ("-3", "neither"),
                             ("2x", "neither"), ("1.2345k-tokens", "not a whole number")]:
            with pytest.raises(LMError, match=message):
                parse_schedule(bad)

    def test_library(self, corpus, tmp_path):
        with pytest.raises(LMError, match=r"^snapshot_every must be at least 1 \(got 0\)$"):
            train_lm([corpus], tmp_path / "m", **{**RUN, "snapshot_every": 0})
        with pytest.raises(LMError, match=r"counts either steps or tokens, not both"):
            train_lm([corpus], tmp_path / "m", **{**RUN, "snapshot_tokens": 100})
        with pytest.raises(LMError, match=r"^arch unigram is not trained in steps, so it takes no "
                                          r"snapshot_every"):
            train_lm([corpus], tmp_path / "m", arch="unigram", snapshot_every=10)
        assert not (tmp_path / "m").exists() and not partial_dir(tmp_path / "m").exists()

    def test_resume_with_other_snapshots_is_refused(self, corpus, tmp_path):
        with pytest.raises(TrainingInterrupted):
            train(corpus, tmp_path / "m", on_step=interrupt_at(15))
        with pytest.raises(LMError, match=r"option snapshot_every \(10 then, 5 now\)"):
            train_lm([corpus], tmp_path / "m", resume=True, **{**RUN, "snapshot_every": 5})

    @pytest.mark.parametrize("args, code, message", [
        (["--snapshot-every", "0"], 2, "Error: Invalid value for '--snapshot-every': N must be at least 1 (got 0)"),
        (["--snapshot-every", "two"], 2, "Error: Invalid value for '--snapshot-every': 'two' is neither"),
        (["--snapshot-every", "10", "--arch", "kn5"], 1,
         "Error: --arch kn5 is not trained in steps, so it takes no --snapshot-every (snapshots are for the "
         "neural architectures)\n"),
    ])
    def test_cli(self, corpus, tmp_path, args, code, message):
        r = run_agree("train-lm", corpus, *args, "--out", tmp_path / "m")
        assert r.exit_code == code and message in r.output and "Traceback" not in r.output
        assert not (tmp_path / "m").exists()
