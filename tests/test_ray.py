"""`agree score --executor ray` on a local 2-CPU Ray cluster: the same outputs as one
process for every engine, a worker killed mid-run, bad input."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agreement.scoring.executors import InProcessExecutor, RayExecutor
from agreement.scoring.executors.worker import GuardedWorker
from agreement.score_dir import Execution, ModelLoading, Reporting, score_to_dir
from conftest import ROOT, run_agree
from formats.items import write_items
from gguf_fixtures import smol_path
from hf_fixtures import build_tiny
from lm.corpus.prepare import load_corpus
from lm.kenlm.scorer import train_kn5
from lm.training.train import train_lm
from test_score_cli import PLUR, SING, corpus_dir, unigram
from test_train import TINY
from test_shards import MANY, outputs
from formats.run import RunContext

pytestmark = pytest.mark.slow
OPTS = {"execution": Execution(shard_size=2), "reporting": Reporting(surprisal=True),
        "loading": ModelLoading(threads=1)}


@pytest.fixture
def testset(tmp_path):
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", MANY)
    return str(tmp_path / "ext")


def same_as_in_process(tmp_path, testset, models, options=OPTS, executor=None) -> dict:
    """Score in this process and on Ray; assert equal outputs; the Ray run's manifest."""
    score_to_dir(RunContext("score", out=tmp_path / "one"), [testset], models, **options, executor=InProcessExecutor(threads=1))
    score_to_dir(RunContext("score", out=tmp_path / "ray"), [testset], models, **options,
                 executor=executor or RayExecutor(workers=2, threads=1))
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "one")
    return json.loads((tmp_path / "ray" / "manifest.json").read_text())


def test_two_workers_write_what_one_process_writes(ray_cluster, tmp_path, testset):
    models = [str(unigram(tmp_path / "u1", SING)), str(unigram(tmp_path / "u2", PLUR))]
    manifest = same_as_in_process(tmp_path, testset, models)
    assert manifest["execution"] == {"executor": "ray", "workers": 2, "threads_per_worker": 1,
                                     "gpus_per_worker": 0, "shards": 10, "shard_size": 2}
    assert not (tmp_path / "ray.partial").exists()


@pytest.mark.parametrize("kind", ["gpt2", "bert"])
def test_hugging_face_directories(ray_cluster, tmp_path, testset, kind):
    same_as_in_process(tmp_path, testset, [str(build_tiny(kind, tmp_path / kind))])


@pytest.mark.parametrize("engine", ["llama.cpp", "transformers"])
def test_gguf_with_either_engine(ray_cluster, tmp_path, engine):
    (tmp_path / "four").mkdir()
    write_items(tmp_path / "four" / "items.tsv", MANY[:4])           # SmolLM2 at one thread: few items
    options = {"execution": Execution(shard_size=2), "loading": ModelLoading(threads=1, engine=engine)}
    workers = 2 if engine == "llama.cpp" else 1      # transformers dequantises the file: slow to load
    same_as_in_process(tmp_path, str(tmp_path / "four"), [f"gguf:{smol_path()}"], options,
                       executor=RayExecutor(workers=workers, threads=1))


def test_our_lstm_and_kenlm(ray_cluster, tmp_path, testset):
    corpus = corpus_dir(tmp_path / "corpus", SING * 3 + PLUR * 3)
    train_lm([corpus], tmp_path / "lstm", arch="lstm", max_steps=5, **TINY)
    train_kn5(load_corpus(corpus), tmp_path / "kn", order=2)
    same_as_in_process(tmp_path, testset, [str(tmp_path / "lstm"), str(tmp_path / "kn")])


class DiesOnce(GuardedWorker):
    """A worker that SIGKILLs its own process on the second shard it is handed, once in
    the whole run: the first to rename the file ``marker`` (a class attribute: a subclass
    per test, sent to the workers with the class) dies. Dying inside a shard (not killed
    from outside after some shard finished) is what makes the test deterministic: that
    shard is always in flight when it dies, and the worker's first shard has always come
    back before it."""

    marker = ""

    def __init__(self, job, cwd=None):
        super().__init__(job, cwd)
        self.calls = 0

    def score(self, task):
        self.calls += 1
        if self.calls == 2:
            try:
                os.rename(self.marker, self.marker + ".taken")
            except FileNotFoundError:        # another worker (or this one, before a restart) died
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return super().score(task)


# the Ray workers cannot import this test module: send DiesOnce to them by value
try:
    from ray import cloudpickle          # Ray's own copy (the tests without Ray still run)
except ImportError:
    pass
else:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])


class KillOne(RayExecutor):
    """Ray executor whose workers are :class:`DiesOnce`; ``died()`` once one did."""

    def __init__(self, marker: Path, **kw):
        super().__init__(**kw)
        self.marker = marker
        marker.write_text("")
        self.worker_class = type("DiesOnceHere", (DiesOnce,), {"marker": str(marker)})

    def died(self) -> bool:
        return not self.marker.exists() and Path(f"{self.marker}.taken").exists()


def test_a_killed_worker_is_restarted_and_the_run_completes(ray_cluster, tmp_path, testset):
    models = [str(unigram(tmp_path / "u1", SING))]
    executor = KillOne(tmp_path / "marker", workers=2, threads=1)
    same_as_in_process(tmp_path, testset, models, executor=executor)
    assert executor.died()


def test_a_worker_that_dies_for_good_leaves_shards_to_resume(ray_cluster, tmp_path, testset, capsys):
    from agreement.errors import AgreeError

    models = [str(unigram(tmp_path / "u1", SING))]
    score_to_dir(RunContext("score", out=tmp_path / "one"), [testset], models, **OPTS)
    executor = KillOne(tmp_path / "marker", workers=2, threads=1, max_restarts=0)
    with pytest.raises(AgreeError, match=r"a Ray worker for model died 1 times .* run the same command again"):
        score_to_dir(RunContext("score", out=tmp_path / "o"), [testset], models, **OPTS, executor=executor)
    assert executor.died()
    assert not (tmp_path / "o").exists()
    kept = len(list((tmp_path / "o.partial").glob("*/[!v]*.npz")))
    assert 1 <= kept < 5
    capsys.readouterr()
    score_to_dir(RunContext("score", out=tmp_path / "o"), [testset], models, **OPTS, executor=RayExecutor(workers=2, threads=1))
    assert f"model: {kept} of 5 shards finished earlier (kept), {5 - kept} to score" in capsys.readouterr().err
    assert outputs(tmp_path / "o") == outputs(tmp_path / "one")


def test_a_model_a_worker_cannot_read(ray_cluster, tmp_path, testset):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text('{"model_type": "gpt2"}')
    (tmp_path / "m" / "tokenizer.json").write_text("{}")
    (tmp_path / "m" / "model.safetensors").write_bytes(b"not safetensors")
    r = run_agree("score", testset, "--model", tmp_path / "m", "--executor", "ray", "--out", tmp_path / "o", "-q")
    assert r.exit_code == 1 and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith(f"Error: {tmp_path / 'm'}: cannot load the Hugging Face model (")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ext", "m"]     # nothing half-written


def test_workers_zero(tmp_path, testset):
    r = run_agree("score", testset, "--model", "x", "--executor", "ray", "--workers", "0", "--out", tmp_path / "o")
    # out of range: a usage error like every numeric option's (exit 2, one Error: line)
    errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert r.exit_code == 2 and errors == [
        "Error: Invalid value for '--workers': 0 is not in the range 1 <= x <= 100000 (Ray actors per model)"]
    assert not (tmp_path / "o").exists()


def test_an_unreachable_ray_address_fails_within_seconds(tmp_path, testset):
    pytest.importorskip("ray", reason="Ray (agree-bench[cluster]) is not installed")
    with socket.socket() as s:                 # a port on this machine that nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    m = unigram(tmp_path / "u", SING)
    env = {**os.environ, "RAY_ADDRESS": f"127.0.0.1:{port}"}
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "agreement.cli", "score", testset, "--model", str(m),
                        "--executor", "ray", "--out", str(tmp_path / "o"), "-q"],
                       capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert time.monotonic() - start < 60
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"Error: cannot reach the Ray cluster at 127.0.0.1:{port} (RAY_ADDRESS): "
                        "Connection refused\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ext", "u"]
