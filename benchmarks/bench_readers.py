"""Benchmark: reading the published benchmarks whole, through ``formats.testsets``:
all 157,346 CLAMS English pairs (22 suites, attractors inferred) and all 158,084 Marvin &
Linzen tuples (168,908 pairs: the NPI triples give two each), each in under 5 s.

Timed: :func:`formats.testsets.load_testset` on ``../shared/data/clams/en_evalset`` and
``../shared/data/lm_syneval/templates`` (detection, reading, Items, notes), best of
``--repeat`` runs.

Wall and CPU time are printed: when other jobs share the cores the wall time grows and
the CPU time much less (quote the load with the figures).

Naive baseline, in this process: what a first reader writes -- each CLAMS file read
whole and its lines taken two by two, each M&L pickle loaded with ``pickle.load``
(unrestricted), every pair made an Item by the same ``pair_item``, Python's cyclic
garbage collector running as usual; no attractor inference, no validation. The ratio
is the naive time over ours, per pair.

Usage: ``.venv/bin/python benchmarks/bench_readers.py [--repeat 3]``.
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from formats.testsets import load_testset  # noqa: E402
from formats.testsets.blimp import pair_item  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
CLAMS = SHARED / "clams" / "en_evalset"
SYNEVAL = SHARED / "lm_syneval" / "templates"
LIMIT_S = 5.0


def naive_clams(path: Path) -> int:
    n = 0
    for f in sorted(path.glob("*.txt")):
        lines = [line.rstrip("\n").split("\t", 1) for line in open(f, encoding="utf-8").readlines()]
        for i in range(0, len(lines) - 1, 2):
            n += pair_item(f"{f.stem}:{i}", f.stem, lines[i][1], lines[i + 1][1]) is not None
    return n


def naive_syneval(path: Path) -> int:
    n = 0
    for f in sorted(path.glob("*.pickle")):
        with open(f, "rb") as fh:
            data = pickle.load(fh, encoding="latin1")  # the way the authors' code reads them (runs any code)
        for cond, tuples in data.items():
            for i, t in enumerate(tuples):
                for bad in t[1:]:
                    n += pair_item(f"{f.stem}:{cond}:{i}", f.stem, t[0], bad) is not None
    return n


def best(fn, repeat: int) -> tuple[float, float, object]:
    """(best wall time, its CPU time, the result) of ``repeat`` runs."""
    runs, out = [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    wall, cpu = min(runs)
    return wall, cpu, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per reader (the best is reported)")
    args = ap.parse_args()
    for p in (CLAMS, SYNEVAL):
        if not p.exists():
            sys.exit(f"bench_readers: {p} is absent (the shared data is needed)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    total_ours = total_naive = pairs = 0.0
    for name, path, naive in (("CLAMS en", CLAMS, naive_clams), ("Marvin & Linzen", SYNEVAL, naive_syneval)):
        t_ours, c_ours, ts = best(lambda: load_testset(path), args.repeat)
        t_naive, c_naive, n_naive = best(lambda: naive(path), args.repeat)
        n = len(ts.items)
        print(f"{name}: {n} pairs ({ts.kind}) in {t_ours:.2f} s, CPU {c_ours:.2f} s "
              f"({'under' if t_ours < LIMIT_S else 'OVER'} {LIMIT_S:.0f} s), {n / t_ours:.0f} pairs/s; "
              f"naive {n_naive} pairs in {t_naive:.2f} s, CPU {c_naive:.2f} s, {n_naive / t_naive:.0f} pairs/s")
        total_ours += t_ours
        total_naive += t_naive * n / n_naive
        pairs += n
    print(f"bench_readers: {pairs / total_ours:.0f} pairs/s, {total_naive / total_ours:.2f}x naive")


if __name__ == "__main__":
    main()
