"""Benchmark: a learning curve of 10 snapshots, one ``agree score --curve`` run against 10
separate ``agree score`` runs (the loop a user would otherwise write).

Set-up (not timed): the shared English dump made into a corpus, and a small LSTM (2 x 64
units, 10k words) trained 100 steps with ``--snapshot-every 10``: 10 snapshots. Timed,
each as a subprocess as a user would run it: ``agree score TESTSET --model RUN --curve``
once, then ``agree score TESTSET --model RUN/snapshots/step-N`` for each of the 10. The
curve run reads and prepares the test set once and starts Python and torch once; the
separate runs do so ten times. Both score the same items with the same models (checked:
each snapshot's rows of items.tsv are identical).

Usage: ``.venv/bin/python benchmarks/bench_curve.py [--testset PATH] [--keep DIR]``
(default test set: the paper's English ``generated.*``, 410 items; needs ../shared/data).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
AGREE = [sys.executable, "-m", "agreement.cli"]
DUMP = DATA / "wiki" / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
SNAPSHOTS = 10


def agree(*args) -> float:
    """Run ``agree ARGS`` quietly; its wall time in seconds."""
    t0 = time.perf_counter()
    subprocess.run([*AGREE, *map(str, args), "-q"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - t0


def rows_of(items_tsv: Path, model: str) -> list[str]:
    lines = items_tsv.read_text(encoding="utf-8").splitlines()
    col = lines[0].split("\t").index("model")
    return [x for x in lines[1:] if x.split("\t")[col] == model]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--testset", default=str(DATA / "colorlessgreen" / "English" / "generated"))
    ap.add_argument("--keep", help="work in this directory (kept) instead of a temporary one")
    args = ap.parse_args()
    if not DUMP.is_file() or not Path(args.testset + ".text").exists() and not Path(args.testset).exists():
        sys.exit(f"Error: the shared data is absent ({DUMP}, {args.testset})")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep or tmp)
        run = work / "run"
        if not run.is_dir():
            agree("corpus", DUMP, "--lang", "en", "--out", work / "corpus")
            agree("train-lm", work / "corpus", "--size", "small", "--emb", 64, "--hidden", 64,
                  "--max-steps", 10 * SNAPSHOTS, "--snapshot-every", 10, "--threads", 1, "--out", run)
        snaps = sorted(p.name for p in (run / "snapshots").iterdir())
        assert len(snaps) == SNAPSHOTS, snaps
        t_curve = agree("score", args.testset, "--model", run, "--curve", "--force", "--out", work / "curve")
        t_apart = 0.0
        for name in snaps:
            t_apart += agree("score", args.testset, "--model", run / "snapshots" / name, "--force",
                             "--out", work / "apart" / name)
        same = all(rows_of(work / "curve" / "items.tsv", n) == rows_of(work / "apart" / n / "items.tsv", n)
                   for n in snaps)
        items = len(rows_of(work / "curve" / "items.tsv", snaps[0]))
    print(f"test set: {args.testset}, {items} items; {SNAPSHOTS} snapshots; load "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"one agree score --curve: {t_curve:.1f} s; {SNAPSHOTS} separate agree score runs: {t_apart:.1f} s "
          f"({t_apart / SNAPSHOTS:.1f} s each); rows identical: {same}")
    print(f"bench_curve: {SNAPSHOTS * items / t_curve:.0f} item-snapshots/s, "
          f"{t_apart / t_curve:.2f}x {SNAPSHOTS} separate agree score runs")


if __name__ == "__main__":
    main()
