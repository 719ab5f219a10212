"""Benchmark: `agree analyze` on ~50,000 scored rows (the demo's size), and its
item-clustered paired bootstrap against a naive loop.

Rows are simulated with the demo's shape: 3 models x 1,682 items x 10 variants
(original + 9 nonce), 0-3 attractors, 6 constructions, log-probabilities drawn so
that one model is ~97% right and two are near chance; plus rater votes (9 per
item) for the graded comparison and the noise ceiling. Timed: reading the
scored items.tsv, then every analysis (:func:`agreement.reporting.analysis.run.analyze`:
ceilings and correlations with 1,000 bootstrap replicates, the mixed model, the
paired comparisons with 2,000 replicates, the challenge subsets).

Naive baseline, in this script: the paired item bootstrap written as loops
(per replicate, draw items and sum their rows' differences in Python),
timed on 50 replicates and scaled per replicate against the vectorised one.

Usage: ``.venv/bin/python benchmarks/bench_analyze.py [--no-mixed]``.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agreement.reporting.paired import compare  # noqa: E402
from agreement.reporting.analysis.rows import scored_table  # noqa: E402
from agreement.reporting.analysis.run import analyze  # noqa: E402
from formats.humans import HumanJudgment  # noqa: E402

MODELS = {"lstm": 3.5, "kn5": 0.05, "unigram": 0.0}  # base log-odds of a correct choice


def simulate(directory: Path, n_items: int = 1682, variants: int = 10, seed: int = 0):
    """Write a scored items.tsv + manifest; return rater judgments."""
    rng = np.random.default_rng(seed)
    lines = ["item_id\tvariant\tperturbation\tconstruction\tattractors\tmodel\tlogp_correct\tlogp_wrong"
             "\tcorrect\toov\tgroup\ttestset"]
    judgments = []
    att = rng.integers(0, 4, n_items)
    cons = rng.integers(0, 6, n_items)
    item_eff = rng.normal(0, 0.5, n_items)
    for m, base in MODELS.items():
        slope = -0.3 if m == "kn5" else 0.0
        eta = base + item_eff[:, None] + slope * att[:, None] + rng.logistic(0, 1, (n_items, variants))
        for i in range(n_items):
            for v in range(variants):
                lw = -5.0 - float(rng.random())
                lc = lw + float(eta[i, v])
                lines.append(f"i{i}\t{v}\t{'original' if v == 0 else 'nonce'}\tC{cons[i]}\t{att[i]}\t{m}\t"
                             f"{lc!r}\t{lw!r}\t{int(lc > lw)}\t0\t{m}\tdemo")
    p = 1 / (1 + np.exp(-(2 + item_eff[:, None] - 0.3 * att[:, None] + rng.normal(0, 1, (n_items, variants)))))
    c = rng.binomial(9, p)
    judgments = [HumanJudgment(f"i{i}", v, float(c[i, v]), float(9 - c[i, v]))
                 for i in range(n_items) for v in range(variants)]
    (directory / "items.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (directory / "manifest.json").write_text('{"command": "score", "parameters": {}}')
    return judgments


def naive_paired(table, a: str, b: str, n_boot: int, seed: int = 0) -> float:
    """The same bootstrap of the accuracy difference, as plain Python loops."""
    ok = {}
    for k, m, c, item in zip(table.row_keys().tolist(), table.model.tolist(), table.correct.tolist(),
                             table.item_keys().tolist()):
        ok.setdefault(m, {})[k] = (c, item)
    by_item: dict[str, list[float]] = {}
    for k, (ca, item) in ok[a].items():
        if k in ok[b]:
            by_item.setdefault(item, []).append(float(ca) - float(ok[b][k][0]))
    items = list(by_item)
    rnd = random.Random(seed)
    diffs = []
    for _ in range(n_boot):
        tot = n = 0
        for _ in items:
            rows = by_item[items[rnd.randrange(len(items))]]
            tot += sum(rows)
            n += len(rows)
        diffs.append(tot / n)
    return float(np.quantile(diffs, 0.025))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-mixed", action="store_true", help="leave the mixed model out of the timing")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        judgments = simulate(Path(tmp))
        t0 = time.perf_counter()
        table = scored_table([tmp])
        t_read = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    result = analyze(table, np.random.default_rng(1), judgments=judgments, mixed=not args.no_mixed)
    t_all, c_all = time.perf_counter() - t1, time.process_time() - c1
    total = t_read + t_all
    print(f"rows: {len(table)}, models: {', '.join(table.models())}")
    print(f"read items.tsv: {t_read:.2f} s; analyses: {t_all:.1f} s (mixed model "
          f"{'included' if result.mixed else 'left out'}); total {total:.1f} s "
          f"({'under' if total < 60 else 'OVER'} one minute); CPU time of the analyses {c_all:.1f} s "
          "(wall time exceeds it when other jobs share the cores)")
    if result.mixed:
        eff = {c.term: f"{c.estimate:+.2f} [{c.lo:+.2f}, {c.hi:+.2f}]" for c in result.mixed.fixed}
        print("mixed model attractor slopes (simulated: lstm 0, kn5 -0.3, unigram 0): "
              + "; ".join(f"{k}: {v}" for k, v in eff.items() if k.startswith("attractors")))
    n_boot = 2000
    t2 = time.perf_counter()
    compare(table, "lstm", "kn5", np.random.default_rng(0), n_boot=n_boot)
    fast = (time.perf_counter() - t2) / n_boot
    naive_boot = 50
    t3 = time.perf_counter()
    naive_paired(table, "lstm", "kn5", naive_boot)
    slow = (time.perf_counter() - t3) / naive_boot
    print(f"paired item bootstrap: {1 / fast:.0f} replicates/s vectorised, {1 / slow:.1f} replicates/s naive loop")
    print(f"analyze: {len(table) / total:.0f} rows/s, {slow / fast:.1f}x naive-loop paired bootstrap")


if __name__ == "__main__":
    main()
