"""Benchmark: ``agree extract`` on the whole English EWT treebank (16.6k sentences).

Measures sentences per second for the full job (reading with conllu, paradigm
table, mining, items) and, in the same process, for a naive baseline that does
the same job the straightforward way:

* conllu's full parse (every field parsed into dicts), tokens found by id with
  linear scans;
* per candidate arc, projectivity by walking every in-between word's head chain
  up to the root, and the context by scanning the whole sentence;
* then, per kept construction, a second full pass over the treebank (parsed
  again) to collect its items, each alternative form and attractor looked up by
  scanning the whole paradigm table.

Both must find the same constructions and items (checked). The last line is the
summary: ``extract: N sentences/s, Rx naive``.

    .venv/bin/python benchmarks/bench_extract.py            # the figure (about 30 s)
    .venv/bin/python benchmarks/bench_extract.py --quick    # dev file only: a smoke run

``--quick`` flatters the naive baseline: the dev file keeps no construction, so
its per-construction re-scans never run. Exit status 1 when the two paths
disagree.
"""
from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import conllu

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.extract import ExtractConfig, extract_items  # noqa: E402
from treebanks.reader import expand_paths, read_treebanks  # noqa: E402
from agreement.mining import ConstructionMiner  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "ud" / "en_ewt"


# --- the naive baseline ---------------------------------------------------------

def naive_sentences(files):
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for s in conllu.parse_incr(fh):
                yield [t for t in s if isinstance(t["id"], int)]  # MWT parts kept, as a first version would


def _tok(words, wid):
    for t in words:
        if t["id"] == wid:
            return t
    return None


def _number(t):
    return (t["feats"] or {}).get("Number")


def _dominated(words, k, h):
    t = _tok(words, k)
    while t is not None and t["head"]:
        if t["head"] == h:
            return True
        t = _tok(words, t["head"])
    return False


def naive_arcs(words):
    for t in words:
        if not t["head"]:
            continue
        i, h = t["id"], t["head"]
        lo, hi = min(i, h), max(i, h)
        if not 4 <= hi - lo <= 14:
            continue
        cue, target = _tok(words, lo), _tok(words, hi)
        if "PUNCT" in (cue["upos"], target["upos"]):
            continue
        if not all(_dominated(words, k, h) for k in range(lo + 1, hi)):
            continue
        cv, tv = _number(cue), _number(target)
        if cv is None or tv is None:
            continue
        ctx = [w["upos"] for w in words if lo < w["id"] < hi and w["head"] in (lo, hi)]
        yield ("L" if h == hi else "R", tuple([cue["upos"]] + ctx + [target["upos"]])), cue, target, cv, tv


def naive_extract(files):
    joint = defaultdict(Counter)
    table = Counter()
    n = 0
    for words in naive_sentences(files):
        n += 1
        for t in words:
            table[(t["form"], t["lemma"], t["upos"], conllu.serializer.serialize_field(t["feats"]))] += 1
        for key, _c, _t, cv, tv in naive_arcs(words):
            joint[key][(cv, tv)] += 1
    kept = []
    for key, pairs in joint.items():
        pairs = {p: c for p, c in pairs.items() if c > 1}
        total = sum(pairs.values())
        by_t = defaultdict(Counter)
        for (cv, tv), c in pairs.items():
            by_t[tv][cv] += c
        h = sum(sum(by_t[tv].values()) / total * -sum(c / sum(by_t[tv].values()) * math.log(c / sum(by_t[tv].values()))
                                                      for c in by_t[tv].values()) for tv in by_t) if total else 1
        cues = Counter()
        for (cv, _), c in pairs.items():
            cues[cv] += c
        if total and h < 0.001 and sum(1 for c in cues.values() if c >= 10) >= 2:
            kept.append(key)
    items = []
    for key in kept:  # a full re-scan of the treebank per kept construction
        for words in naive_sentences(files):
            for k, cue, target, cv, tv in naive_arcs(words):
                if k != key or cv != tv:
                    continue
                want = dict(target["feats"])
                want["Number"] = "Plur" if tv == "Sing" else "Sing"
                want = conllu.serializer.serialize_field(dict(sorted(want.items())))
                alts = [(c, f) for (f, lem, u, fe), c in table.items()
                        if lem == target["lemma"] and u == target["upos"] and fe == want]
                if not alts or max(alts)[1] == target["form"]:
                    continue
                attractors = 0
                for w in words:
                    if cue["id"] < w["id"] < target["id"]:
                        readings = [(c, u, dict(x.split("=") for x in fe.split("|")) if fe != "_" else {})
                                    for (f, _l, u, fe), c in table.items() if f == w["form"]]
                        top = max(c for c, _, _ in readings)
                        attractors += any(c >= 0.1 * top and u == cue["upos"] and fe.get("Number") not in (None, cv)
                                          for c, u, fe in readings)
                items.append((key, max(alts)[1], attractors))
    return n, kept, items


# --- main ---------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="both paths on the dev file only (2,001 sentences): a smoke run, not the figure")
    ap.add_argument("--repeat", type=int, default=3, help="fast runs; the best one counts")
    args = ap.parse_args(argv)
    if not DATA.exists():
        print(f"bench_extract: {DATA} is absent; nothing to measure")
        return 0
    files = expand_paths([DATA])
    if args.quick:
        files = [f for f in files if f.name.endswith("-dev.conllu")]

    best = math.inf
    for _ in range(args.repeat):
        t = time.perf_counter()
        result = extract_items(files, ExtractConfig())
        best = min(best, time.perf_counter() - t)
    n = result.sentences
    t = time.perf_counter()
    gc.disable()  # as extract_items does while it reads
    sentences = list(read_treebanks(files))
    gc.enable()
    t_read = time.perf_counter() - t
    t = time.perf_counter()
    miner = ConstructionMiner()
    for s in sentences:
        miner.add_sentence(s)
    t_mine = time.perf_counter() - t
    fast_rate = n / best
    print(f"fast : {n} sentences in {best:.2f} s = {fast_rate:.0f} sentences/s "
          f"(of which reading about {t_read:.2f} s, mining {t_mine:.2f} s); "
          f"{len(result.kept)} constructions, {len(result.items)} items")

    t = time.perf_counter()
    n_naive, kept, items = naive_extract(files)
    t_naive = time.perf_counter() - t
    naive_rate = n_naive / t_naive
    print(f"naive: {n_naive} sentences in {t_naive:.2f} s = {naive_rate:.0f} sentences/s; "
          f"{len(kept)} constructions, {len(items)} items")
    same = sorted(kept) == sorted((c.direction, c.pos) for c in result.kept) and len(items) == len(result.items)
    print(f"same constructions and item count as the fast path: {same}")
    print(f"extract: {fast_rate:.0f} sentences/s, {fast_rate / naive_rate:.1f}x naive")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
