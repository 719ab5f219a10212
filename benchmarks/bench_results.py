"""Benchmark: building and summarising 200,000 scored rows, the one column table against
a row-object baseline.

Rows are simulated: 4 models x 50,000 items (original and nonce variants, 0-3 attractors,
6 constructions in both directions), log-probabilities drawn so that models differ; a few
ties. Timed, for the column table (:class:`formats.scored.ScoredTable`):

- build: the rows of every model from the test items and the (n, 2) score arrays a scorer
  returns (:meth:`ScoredTable.of_items`, :meth:`ScoredTable.concat`), as ``agree score`` does;
- summarise: :func:`agreement.reporting.results.build_results` without a generator (per-model
  counts in every breakdown with their Wilson intervals, the models, the exact McNemar
  test of every pair of models in every condition: what summary.json holds besides the
  bootstrap intervals, whose cost is the resampling, not the rows' form);
- write and read back the scored items.tsv (:func:`write_scored`, :func:`read_scored`).

Naive baseline, in this script: one Python object per row (a frozen dataclass, as the
scored rows were before the column table) and the same summary by looping over the rows
with dicts (counts per cell, outcomes per model, paired tests over shared keys); its
counts are checked equal to the table's.

Usage: ``.venv/bin/python benchmarks/bench_results.py [--items 50000] [--models 4]``.
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agreement.reporting.results import build_results  # noqa: E402
from agreement.reporting.stats import mcnemar_exact  # noqa: E402
from formats.items import Item  # noqa: E402
from formats.scored import ScoredTable, read_scored, write_scored  # noqa: E402

CONSTRUCTIONS = ("NOUN VERB", "NOUN VERB VERB", "NOUN AUX VERB", "VERB CCONJ VERB", "NOUN ADP VERB", "ADJ VERB")


def simulate(n_items: int, n_models: int, seed: int = 0) -> tuple[list[Item], list[tuple[str, np.ndarray]]]:
    """Test items (half originals, half nonce) and per model an (n, 2) natural-log score array."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n_items):
        variant = i % 2
        items.append(Item(f"t:s{i // 2}", variant, CONSTRUCTIONS[i % 6], "LR"[i % 7 == 0], ("the", "dog", "runs"),
                          ("DET", "NOUN", "VERB"), ("_",) * 3, "runs", "run", "run", "Sing", 1, 2,
                          int(rng.integers(0, 4)), False, "nonce" if variant else "original"))
    scores = []
    for m in range(n_models):
        lc = rng.normal(-5.0 + 0.5 * m, 1.0, n_items).round(2)   # rounded: some ties
        lw = rng.normal(-5.5, 1.0, n_items).round(2)
        scores.append((f"m{m}", np.stack([lc, lw], axis=1)))
    return items, scores


def build_table(items, scores) -> ScoredTable:
    return ScoredTable.concat([ScoredTable.of_items(items, model=name, group=f"g{k % 2}", kind="lstm",
                                                    logp_correct=lp[:, 0], logp_wrong=lp[:, 1], testset="t")
                               for k, (name, lp) in enumerate(scores)])


# --------------------------------------------------------------------------- naive baseline

@dataclass(frozen=True)
class Row:
    """One scored row as an object (the baseline's form)."""
    item: Item
    model: str
    group: str
    kind: str
    logp_correct: float
    logp_wrong: float
    testset: str = ""

    @property
    def correct(self) -> bool:
        return self.logp_correct > self.logp_wrong

    @property
    def undecidable(self) -> bool:
        return self.logp_correct == self.logp_wrong or math.isnan(self.logp_correct) or math.isnan(self.logp_wrong)


def build_rows(items, scores) -> list[Row]:
    return [Row(it, name, f"g{k % 2}", "lstm", float(lp[j, 0]), float(lp[j, 1]), "t")
            for k, (name, lp) in enumerate(scores) for j, it in enumerate(items)]


def _condition(it: Item) -> str:
    return ("original" if it.variant == 0 else "nonce") if it.perturbation in ("", "original") else it.perturbation


def naive_summary(rows: list[Row]) -> tuple[dict, list]:
    """Counts per (model, condition, by, value) and the McNemar test of every pair of models
    per condition, by looping over the row objects."""
    counts: dict = defaultdict(lambda: [0, 0, 0])
    outcome: dict = defaultdict(dict)
    for s in rows:
        it, cond = s.item, _condition(s.item)
        cells = [("all", None), ("construction", f"{it.direction} {it.construction}"),
                 ("attractors", it.attractors), ("testset", s.testset)]
        cells += [("attracted", None)] if it.attractors else []
        for by, value in cells:
            c = counts[(s.model, cond, by, value)]
            if s.undecidable:
                c[2] += 1
            else:
                c[0] += int(s.correct)
                c[1] += 1
        if not s.undecidable:
            outcome[(s.model, cond)][(s.testset, it.item_id, it.variant, it.perturbation)] = s.correct
    models = list(dict.fromkeys(s.model for s in rows))
    tests = []
    for cond in dict.fromkeys(_condition(s.item) for s in rows):
        for a, b in combinations(models, 2):
            oa, ob = outcome[(a, cond)], outcome[(b, cond)]
            shared = [k for k in oa if k in ob]
            only_a = sum(1 for k in shared if oa[k] and not ob[k])
            only_b = sum(1 for k in shared if ob[k] and not oa[k])
            tests.append((a, b, cond, len(shared), only_a, only_b, mcnemar_exact(only_a, only_b)))
    return {k: tuple(v) for k, v in counts.items()}, tests


def _timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=50_000)
    ap.add_argument("--models", type=int, default=4)
    args = ap.parse_args()
    items, scores = simulate(args.items, args.models)
    table, t_build = _timed(build_table, items, scores)
    results, t_sum = _timed(build_results, table)
    rows, n_build = _timed(build_rows, items, scores)
    (counts, tests), n_sum = _timed(naive_summary, rows)
    # the same figures both ways
    assert {k: (c.right, c.n, c.ties) for k, c in results.counts.items()} == counts
    assert [(t.model_a, t.model_b, t.condition, t.rows, t.only_a, t.only_b, t.mcnemar_p)
            for t in results.paired_tests] == [t for t in tests if t[3]]
    with tempfile.TemporaryDirectory() as tmp:
        _, t_write = _timed(write_scored, Path(tmp) / "items.tsv", table)
        back, t_read = _timed(read_scored, Path(tmp) / "items.tsv")
        assert len(back) == len(table)
    n = len(table)
    fast, slow = t_build + t_sum, n_build + n_sum
    print(f"rows: {n} ({args.models} models x {args.items} items), cells: {len(counts)}, "
          f"paired tests: {len(results.paired_tests)}")
    print(f"column table: build {t_build:.2f} s, summarise {t_sum:.2f} s; "
          f"row objects (naive): build {n_build:.2f} s, summarise {n_sum:.2f} s")
    print(f"items.tsv: write {t_write:.2f} s, read back {t_read:.2f} s ({n / t_read:.0f} rows/s)")
    print(f"bench_results: {n / fast:.0f} rows/s built+summarised, {slow / fast:.1f}x naive row objects")


if __name__ == "__main__":
    main()
