"""Benchmark: SmolLM2 and Gemma 3 on a release sample through llama.cpp -- speed,
batch invariance, and the ratio to llama-cpp-python's own one-sequence scoring.

Data: a seeded sample of ``--pairs`` items of a release (``agree extract-all UD --out
DIR``; default /tmp/h44/release), each item's two whole sentences (the sentence method,
as :func:`agreement.scoring.score.sentence_pair` builds them). Models: the packaged
files ``gguf:smollm2-135m`` (Q4_1) and ``gguf:gemma3-270m`` (Q4_K_M), :mod:`lm.gguf.packaged`.

Per model, in one process, at ``--threads`` threads, timed on the same sentences:

* ``batched``: :class:`lm.gguf.llamacpp.LlamaCppScorer` as ``agree score`` runs it by
  default (64 sequences per decode, prefix tree, a pair's two sentences grouped, each
  distinct sentence decoded once);
* ``one-seq``: the same scorer with ``batch_size=1, share_prefix=False``: one sentence
  per ``llama_decode``, so its scores depend on nothing else in the run (batch invariant);
* ``llama-cpp-python``: the library's own API, ``Llama(logits_all=True)``, one
  ``eval`` per sentence (BOS + the same token ids), the log-softmax of its scores in
  numpy: the baseline of the ratio.

Reported: pairs/s and tokens/s (the tokens read: BOS and every piece), the share of the
machine's fp32 matmul peak (work: 2 x non-embedding weights per token read + 2 x hidden
x vocabulary per scored position; peak: bench_peers' 512x576 @ 576x1536 torch product at
the same threads; llama.cpp computes on quantized weights, so this is a yardstick, not a ceiling),
the sentences the items share (asked vs decoded), and batch drift: the largest and
median |batched - one-seq| per sentence, and the share of items whose choice (correct
sentence more probable) differs. The last line: ``bench_release_gguf: FIGURE pairs/s,
RATIOx llama-cpp-python one-sequence`` (the first model's batched path).

    .venv/bin/python benchmarks/bench_release_gguf.py --pairs 200 --threads 1
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from agreement.scoring.score import sentence_pair  # noqa: E402
from bench_peers import matmul_peak  # noqa: E402
from formats.testsets import load_testset  # noqa: E402
from lm.gguf.llamacpp import load_llamacpp  # noqa: E402
from lm.gguf.packaged import PACKAGED, installed, packaged_path  # noqa: E402


def sample(release: Path, n: int, seed: int):
    """A seeded sample of ``n`` of the release's items (sorted by key first: the same
    sample whatever the reading order)."""
    items = sorted(load_testset(release).items, key=lambda it: (it.item_id, it.variant, it.perturbation))
    items = [it for it in items if it.variant == 0]          # originals: what the long run scores
    return random.Random(seed).sample(items, min(n, len(items)))


def sentence_scores(scorer, sentences) -> np.ndarray:
    return np.array([float(np.sum(w)) for w in scorer.word_logprobs(sentences)])


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def llama_cpp_python(path: Path, threads: int, encs) -> np.ndarray:
    """llama-cpp-python's own one-sequence scoring of each encoded sentence."""
    from llama_cpp import Llama  # lazy: the optional engine

    llm = Llama(model_path=str(path), n_ctx=512, n_batch=512, logits_all=True, n_threads=threads,
                n_threads_batch=threads, verbose=False, flash_attn=False)
    out = []
    for ids in encs:
        if len(ids) > 512:   # over the context: the scorer skips it too (NaN)
            out.append(float("nan"))
            continue
        llm.reset()
        llm.eval(list(ids))
        logits = np.asarray(llm.scores[:len(ids) - 1], dtype=np.float32)
        m = logits.max(axis=1)
        lse = m + np.log(np.exp(logits - m[:, None]).sum(axis=1))
        out.append(float(np.sum(logits[np.arange(len(ids) - 1), ids[1:]] - lse)))
    llm.close()
    return np.array(out)


def work(info, n_vocab: int, tokens: int, scored: int) -> float:
    """Multiply-adds x 2 of reading ``tokens`` and scoring ``scored`` positions."""
    hidden = int(info.metadata[f"{info.architecture}.embedding_length"])
    body = info.parameters - hidden * n_vocab   # tied embeddings: the output layer is the embedding
    return 2.0 * body * tokens + 2.0 * hidden * n_vocab * scored


def bench_model(name: str, sentences, threads: int, peak: float, baseline: bool) -> dict:
    path = packaged_path(name)
    fast = load_llamacpp(path, threads=threads, batch_size=64)   # the batched path (a prefix tree)
    encs = [fast.encoded(s).ids for s in sentences]
    tokens, scored = sum(len(e) for e in encs), sum(len(e) - 1 for e in encs)
    fast_lp, t_fast = timed(sentence_scores, fast, sentences)
    asked, decoded = fast.sentences_asked, fast.sentences_decoded
    info, n_vocab = fast.info, fast.n_vocab
    fast.close()
    one = load_llamacpp(path, threads=threads, batch_size=1, share_prefix=False)
    one_lp, t_one = timed(sentence_scores, one, sentences)
    one.close()
    base_lp, t_base = timed(llama_cpp_python, path, threads, encs) if baseline else (None, float("nan"))
    n = len(sentences) // 2
    drift = np.abs(fast_lp - one_lp)
    drift = drift[np.isfinite(drift)]   # sentences over the context window are skipped (NaN)
    choice = lambda lp: lp[0::2] > lp[1::2]  # noqa: E731
    flips = int(np.sum(choice(fast_lp) != choice(one_lp)))
    margins = np.abs(one_lp[0::2] - one_lp[1::2])
    res = {"model": name, "pairs": n, "tokens": tokens, "sentences_asked": asked, "sentences_decoded": decoded,
           "batched_s": t_fast, "one_seq_s": t_one, "llama_cpp_python_s": t_base,
           "drift_max": float(drift.max()), "drift_median": float(np.median(drift)),
           "drift_p99": float(np.quantile(drift, 0.99)), "flips": flips,
           "margin_below_max_drift": int(np.sum(margins < drift.max())),
           "accuracy_batched": float(np.mean(choice(fast_lp))), "accuracy_one_seq": float(np.mean(choice(one_lp))),
           "peak_gflops": peak, "gflops_batched": work(info, n_vocab, tokens, scored) / t_fast / 1e9}
    if base_lp is not None:
        res["one_seq_vs_llama_cpp_python_max"] = float(np.nanmax(np.abs(one_lp - base_lp)))
    return res


def report(r: dict) -> None:
    """A model's figures (stdout, flushed: a long run shows each model as it ends)."""
    n = r["pairs"]
    print(f"{r['model']}: {n} pairs, {r['tokens']} tokens; sentences asked {r['sentences_asked']}, "
          f"decoded {r['sentences_decoded']}")
    for label, key in (("batched", "batched_s"), ("one-seq", "one_seq_s"), ("llama-cpp-python", "llama_cpp_python_s")):
        s = r[key]
        print(f"  {label:17s} {n / s:7.2f} pairs/s {r['tokens'] / s:8.0f} tokens/s ({s:.1f} s)")
    print(f"  batched: {r['gflops_batched']:.1f} GFLOP/s of a {r['peak_gflops']:.1f} GFLOP/s fp32 matmul peak "
          f"({100 * r['gflops_batched'] / r['peak_gflops']:.0f}%)")
    print(f"  drift batched vs one-seq: max {r['drift_max']:.3f} nats, p99 {r['drift_p99']:.3f}, median "
          f"{r['drift_median']:.2e}; choices that differ {r['flips']} / {n} ({100 * r['flips'] / n:.2f}%); "
          f"pairs whose margin is under the max drift {r['margin_below_max_drift']}")
    print(f"  accuracy batched {100 * r['accuracy_batched']:.1f}%, one-seq {100 * r['accuracy_one_seq']:.1f}%")
    if "one_seq_vs_llama_cpp_python_max" in r:
        print(f"  one-seq vs llama-cpp-python: max |delta| {r['one_seq_vs_llama_cpp_python_max']:.2e} nats")
    sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", type=Path, default=Path("/tmp/h44/release"))
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"], choices=sorted(PACKAGED))
    ap.add_argument("--no-baseline", action="store_true", help="skip llama-cpp-python's own scoring")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    if not args.release.is_dir():
        sys.exit(f"bench_release_gguf: {args.release} is absent: agree extract-all ../shared/data/ud --out DIR")
    models = [m for m in args.models if installed(m)]
    if not models:
        sys.exit("bench_release_gguf: none of the packaged models is installed")
    items = sample(args.release, args.pairs, args.seed)
    sentences = [s for it in items for s in sentence_pair(it)]
    load = os.getloadavg()
    print(f"{len(items)} release items (seed {args.seed}) from {args.release}; {args.threads} thread(s); "
          f"load average {load[0]:.2f} on {os.cpu_count()} CPUs")
    import torch  # the yardstick's threads

    torch.set_num_threads(args.threads)
    peak = matmul_peak()
    results = []
    for m in models:   # each model's lines as soon as it is done
        results.append(bench_model(m, sentences, args.threads, peak, not args.no_baseline))
        report(results[-1])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    r = results[0]
    ratio = r["llama_cpp_python_s"] / r["batched_s"]
    print(f"bench_release_gguf: {r['pairs'] / r['batched_s']:.2f} pairs/s, {ratio:.2f}x llama-cpp-python "
          f"one-sequence ({r['model']}, {args.threads} thread)")


if __name__ == "__main__":
    main()
