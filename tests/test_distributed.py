"""`torchrun --nproc_per_node 2 -m agreement.cli train-lm`: DistributedDataParallel on 2 CPU
processes (gloo) trains the same model as one process reading both processes' rows."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from lm.load import load_model
from lm.training.train import train_lm
from test_train import make_corpus

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_two_cpu_processes_train_like_one_with_twice_the_batch(tmp_path):
    pytest.importorskip("torch.distributed")
    if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    corpus = make_corpus(tmp_path / "corpus")
    common = ["--size", "small", "--emb", "16", "--hidden", "16", "--bptt", "8", "--lr", "5",
              "--dropout", "0", "--max-steps", "12", "--seed", "3"]
    out = tmp_path / "ddp"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "agreement.cli", "train-lm", str(corpus), "--arch", "lstm", *common,
           "--batch-size", "4", "--device", "cpu", "--quiet", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]

    config = json.loads((out / "config.json").read_text())
    assert config["metrics"]["world_size"] == 2 and config["metrics"]["steps"] == 12
    manifest = json.loads((out / "manifest.json").read_text())      # written once, by rank 0
    assert manifest["command"] == "train-lm"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "corpus.txt", "ddp"]
    assert load_model(out).logprob([["the", "dog"]], [["runs", "run"]]).shape == (1, 2)

    # One process over the same 8 rows: DDP's averaged gradient is the same mean loss's.
    single = tmp_path / "single"
    train_lm([corpus], single, arch="lstm", size="small", seed=3, max_steps=12, emb_size=16,
             hidden_size=16, bptt=8, lr=5.0, dropout=0.0, batch_size=8, device="cpu",
             threads=1)
    a = torch.load(out / "model.pt", weights_only=True)["state_dict"]
    b = torch.load(single / "model.pt", weights_only=True)["state_dict"]
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)
