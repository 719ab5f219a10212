"""Write a systematic sample of the shared benchmarks in their published formats, for
models too slow for the whole sets on a CPU (the README's SmolLM2 figures).

Every k-th pair of each CLAMS suite (True line and its False partner), every k-th tuple
of each condition of each Marvin & Linzen pickle (protocol 2, plain data), every k-th row
of each RuBLiMP CSV; k chosen per file so that about N pairs remain (all of a smaller
file). The files keep their names, so constructions and conditions stay those of the
whole sets.

Usage: ``python scripts/sample_testsets.py OUT [--per-file 100]`` (reads ../shared/data).
"""
from __future__ import annotations

import argparse
import csv
import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from formats.testsets.syneval import load_plain_pickle  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def every(seq: list, n: int) -> list:
    step = max(1, len(seq) // n)
    return seq[::step][:n]


def clams(src: Path, out: Path, n: int) -> int:
    out.mkdir(parents=True)
    total = 0
    for f in sorted(src.glob("*.txt")):
        lines = [line for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
        pairs = every([lines[i:i + 2] for i in range(0, len(lines) - 1, 2)], n)
        (out / f.name).write_text("".join(f"{a}\n{b}\n" for a, b in pairs), encoding="utf-8")
        total += len(pairs)
    return total


def syneval(src: Path, out: Path, n: int) -> int:
    out.mkdir(parents=True)
    total = 0
    for f in sorted(src.glob("*.pickle")):
        data = load_plain_pickle(f)  # plain data only: nothing in the file is run
        per = max(1, n // len(data))
        sample = {cond: every(tuples, per) for cond, tuples in data.items()}
        (out / f.name).write_bytes(pickle.dumps(sample, protocol=2))
        total += sum(map(len, sample.values()))
    return total


def rublimp(src: Path, out: Path, n: int) -> int:
    out.mkdir(parents=True)
    total = 0
    for f in sorted(src.glob("*.csv")):
        with open(f, encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
        sample = every(rows[1:], n)
        with open(out / f.name, "w", encoding="utf-8", newline="") as fh:
            csv.writer(fh, lineterminator="\n").writerows([rows[0], *sample])
        total += len(sample)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--per-file", type=int, default=100, help="pairs kept per suite file (about)")
    args = ap.parse_args()
    n = args.per_file
    counts = {
        "clams/en_evalset": clams(SHARED / "clams" / "en_evalset", args.out / "clams" / "en_evalset", n),
        "clams/de_evalset": clams(SHARED / "clams" / "de_evalset", args.out / "clams" / "de_evalset", n),
        "lm_syneval/templates": syneval(SHARED / "lm_syneval" / "templates", args.out / "lm_syneval" / "templates", n),
        "rublimp": rublimp(SHARED / "rublimp", args.out / "rublimp", n),
    }
    for name, c in counts.items():
        print(f"{name}: {c} pairs (tuples) sampled")


if __name__ == "__main__":
    main()
