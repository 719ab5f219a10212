"""Benchmark: nonce generation for every item of the shared English treebank.

Fast path: :class:`nonce.pool.CandidatePool` (one pass over the paradigm table)
plus :func:`nonce.generate.make_nonce`; both are timed together, best of
``--repeats`` runs, since the naive path has no build step.

Naive baseline (the released code's approach, written here from its description):
for every content word of every nonce sentence, scan the whole paradigm table for
words with the same POS, features, capitalisation and initial class, then pick
one; for the target, scan the table for other lemmas with the same POS and
features and, for random ones, scan it again for the same lemma's other-number
form until one is spelled differently. It is timed on the first ``--naive-items``
items only (9 variants each) and extrapolated per sentence.

The extraction (``agree extract`` in-process) is not timed.

    .venv/bin/python benchmarks/bench_nonce.py [--quick]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.extraction.extract import ExtractConfig, extract_items  # noqa: E402
from nonce.generate import NonceConfig, make_nonce  # noqa: E402
from nonce.pool import CandidatePool  # noqa: E402
from nonce.vowels import case_class, initial_class  # noqa: E402
from treebanks.features import parse_feats  # noqa: E402

TREEBANK = ROOT.parent / "shared" / "data" / "ud" / "en_ewt"


def naive_nonce(items, table, config: NonceConfig, rng: random.Random) -> list:
    """Scan the paradigm table for every replaced word (no index)."""
    rows = list(table.counts.items())
    total, pos_count = defaultdict(int), defaultdict(int)
    for a, n in rows:
        total[a.form] += n
        pos_count[a.form, a.upos] += n
    ok = lambda a: (total[a.form] >= config.min_count  # noqa: E731
                    and total[a.form] - pos_count[a.form, a.upos] <= config.ambiguity * total[a.form])
    lang = config.lang
    out = []
    for item in items:
        t = item.target_index
        for _ in range(config.n):
            tokens = list(item.tokens)
            for i, (w, upos, feats) in enumerate(zip(item.tokens, item.pos, item.feats)):
                if i == t or upos not in config.content_pos:
                    continue
                cands = sorted({a.form for a, _ in rows if a.upos == upos and a.feats == feats and a.form != w
                                and case_class(a.form) == case_class(w)
                                and initial_class(a.form, lang) == initial_class(w, lang) and ok(a)})
                if cands:
                    tokens[i] = rng.choice(cands)
            targets = sorted({(a.form, a.lemma) for a, _ in rows if a.upos == item.pos[t]
                              and a.feats == item.feats[t] and a.lemma != item.lemma and ok(a)})
            rng.shuffle(targets)
            own = parse_feats(item.feats[t])
            for form, lemma in targets:
                alt = [a.form for a, _ in rows if a.lemma == lemma and a.upos == item.pos[t]
                       and parse_feats(a.feats).get("Number") not in (None, own.get("Number"))]
                if alt and alt[0] != form:
                    tokens[t] = form
                    break
            out.append(tokens)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="time the naive baseline on 1 item only")
    ap.add_argument("--naive-items", type=int, default=3, help="items the naive baseline is timed on")
    ap.add_argument("--repeats", type=int, default=5, help="runs of the fast path (best is reported)")
    args = ap.parse_args(argv)
    if not TREEBANK.exists():
        sys.exit(f"{TREEBANK} is absent: the benchmark needs the shared English treebank")

    t0 = time.perf_counter()
    ex = extract_items([TREEBANK], ExtractConfig(lang="en"))
    print(f"extract (not timed): {len(ex.items)} items, {len(ex.paradigms)} analyses, "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    config = NonceConfig(lang="en", n=9)

    best_total = best_gen = float("inf")
    for r in range(args.repeats):
        t0 = time.perf_counter()
        pool = CandidatePool(ex.paradigms, config.pool_options())
        t1 = time.perf_counter()
        result = make_nonce(ex.items, ex.paradigms, config, random.Random(r), pool=pool)
        t2 = time.perf_counter()
        best_total, best_gen = min(best_total, t2 - t0), min(best_gen, t2 - t1)
    sentences = result.variants
    fast = sentences / best_total
    print(f"fast: {sentences} nonce sentences ({len(ex.items)} items x 9) in {best_total * 1000:.0f} ms "
          f"(index build + generation; generation alone {best_gen * 1000:.0f} ms, "
          f"{sentences / best_gen:.0f} sentences/s)")

    k = 1 if args.quick else max(1, args.naive_items)
    subset = ex.items[:k]
    t0 = time.perf_counter()
    naive_out = naive_nonce(subset, ex.paradigms, config, random.Random(0))
    naive_s = time.perf_counter() - t0
    naive = len(naive_out) / naive_s
    print(f"naive: {len(naive_out)} sentences (first {k} items x 9) in {naive_s:.1f} s = {naive:.2f} sentences/s; "
          f"extrapolated to all {sentences}: {sentences / naive:.0f} s")
    print(f"nonce: {fast:.0f} sentences/s, {fast / naive:.1f}x naive")


if __name__ == "__main__":
    main()
