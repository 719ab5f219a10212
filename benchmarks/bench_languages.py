"""Benchmark: ``agree extract-all`` over every language of ../shared/data/ud (64
languages, 65 treebanks): relation mining, nonce variants and the release written for
all languages, run as a user runs it (a subprocess), with 1 and 2 workers, on a cold
parse cache (empty: every treebank parsed) and a warm one. For each run: wall time,
CPU time (user + system of the whole process tree), peak memory (the summed RSS of
the process tree, and the largest single process, sampled every 0.2 s),
and the load average of the machine meanwhile.

Baseline (the naive way, same machine, same cache): the per-language loop a user
would write with the CLI: for each language, ``agree extract DIRS --lang xx --mode
relations`` then ``agree nonce --seed S`` with the language's seed, one language
after the other (the same items and variants: tests/test_extract_all.py checks it).

The machine is shared with other work: the load average is printed beside each
figure, and the target (the whole run under 10 minutes with 2 workers on 2 cores) is
judged on CPU time too: on two cores of its own, a run takes about its CPU seconds
/ 2 (the languages are independent; the longest, Italian, bounds it from below).
The release of every run is checked byte-identical to the first's (manifests less
their command line), and the index's totals are printed against issue 34's targets.

    .venv/bin/python benchmarks/bench_languages.py                  # every run, ~40 min loaded
    .venv/bin/python benchmarks/bench_languages.py --only it,cs,mt --runs warm1,warm2,baseline
    .venv/bin/python benchmarks/bench_languages.py --ud /path/to/ud-treebanks-v2.16
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.extraction.batch import language_seed  # noqa: E402
from agreement.extraction.languages import find_languages  # noqa: E402
from formats.release_card import read_index  # noqa: E402

UD = ROOT.parent / "shared" / "data" / "ud"   # --ud another
AGREE = [sys.executable, "-m", "agreement.cli"]
RUNS = ("cold1", "warm1", "cold2", "warm2", "baseline")
SEED = 1111


def tree_rss(pid: int) -> tuple[int, int]:
    """Bytes resident in process ``pid`` and its descendants now, and in the largest of
    them ((0, 0) when it is gone)."""
    try:
        import psutil  # lazy: a benchmark's helper, not a dependency of agree
    except ImportError:
        return 0, 0
    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.Error:
        return 0, 0
    sizes = []
    for q in procs:
        try:
            sizes.append(q.memory_info().rss)
        except psutil.Error:
            pass
    return sum(sizes), max(sizes, default=0)


def timed(commands: list[list[str]], env: dict) -> dict:
    """Run ``commands`` one after the other; wall and CPU seconds, peak tree RSS, load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    peak = largest = 0
    start = time.perf_counter()
    for cmd in commands:
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        done = threading.Event()

        def sample():
            nonlocal peak, largest
            while not done.wait(0.2):
                tree, one = tree_rss(proc.pid)
                peak, largest = max(peak, tree), max(largest, one)
        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        _, err = proc.communicate()
        done.set()
        watcher.join()
        if proc.returncode != 0:
            raise SystemExit(f"bench_languages: {' '.join(cmd[2:5])}... failed ({proc.returncode}): {err[-2000:]}")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "peak_tree_mib": peak / 2 ** 20, "max_process_mib": largest / 2 ** 20,
            "load": (load0 + os.getloadavg()[0]) / 2}


def batch_command(ud: Path, out: Path, workers: int, only: list[str]) -> list[str]:
    return [*AGREE, "extract-all", str(ud), "--out", str(out), "--workers", str(workers), "--seed", str(SEED), "-q",
            *(["--only", ",".join(only)] if only else [])]


def baseline_commands(ud: Path, out: Path, only: list[str]) -> list[list[str]]:
    cmds = []
    for lang in find_languages(ud, only).languages:
        dirs = sorted({str(t.directory) for t in lang.treebanks})
        ext, non = out / f"{lang.code}-extract", out / f"{lang.code}-nonce"
        cmds.append([*AGREE, "extract", *dirs, "--lang", lang.code, "--mode", "relations", "--out", str(ext), "-q"])
        cmds.append([*AGREE, "nonce", str(ext), "--seed", str(language_seed(SEED, lang.code)), "--out", str(non), "-q"])
    return cmds


def digest(out: Path) -> str:
    """One checksum of a release's files (manifests less their command line)."""
    h = hashlib.sha256()
    for f in sorted(out.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.name == "manifest.json":
                m = json.loads(data)
                m.pop("argv", None)
                data = json.dumps(m, sort_keys=True).encode()
            h.update(str(f.relative_to(out)).encode() + b"\0" + data)
    return h.hexdigest()


def totals(out: Path) -> str:
    rows = read_index(out / "index.tsv")
    items = [int(r["items"]) for r in rows]
    with_nonce = sum(int(r["items_with_nonce"]) for r in rows)
    sv = sum(int(r["subj_verb_number"]) for r in rows)
    reasons = sum(1 for r in rows if int(r["items"]) == 0 and r["reason"])
    return (f"{len(rows)} languages: >= 100 items {sum(n >= 100 for n in items)} (target 44), >= 30 "
            f"{sum(n >= 30 for n in items)} (target 48), none {items.count(0)} (each with its reason: {reasons}); "
            f"items {sum(items)} (target 100,000); subj-verb Number {sv} (target 15,000); with nonce variants "
            f"{with_nonce} ({with_nonce / max(sum(items), 1):.1%}; target 90%); nonce variants "
            f"{sum(int(r['nonce_variants']) for r in rows)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="language codes, comma-separated (default: all)")
    ap.add_argument("--runs", default=",".join(RUNS), help=f"which runs, in order (of {', '.join(RUNS)})")
    ap.add_argument("--ud", type=Path, default=UD, help=f"the folder of treebanks (default {UD})")
    args = ap.parse_args(argv)
    ud = args.ud.resolve()
    if not ud.exists():
        print(f"bench_languages: {ud} is absent", file=sys.stderr)
        return 1
    only = [c for c in args.only.split(",") if c]
    runs = [r for r in args.runs.split(",") if r]
    scratch = Path(tempfile.mkdtemp(prefix="agree-bench-languages-"))
    warm_cache = scratch / "cache-warm"
    results, digests = {}, {}
    try:
        for name in runs:
            cold = name.startswith("cold")
            cache = scratch / f"cache-{name}" if cold else warm_cache
            if not cold and not warm_cache.exists():   # fill the warm cache first (not timed)
                subprocess.run(batch_command(ud, scratch / "fill", 2, only), env=_env(warm_cache), check=True, cwd=ROOT)
                shutil.rmtree(scratch / "fill")
            out = scratch / f"out-{name}"
            if name == "baseline":
                out.mkdir()
                results[name] = timed(baseline_commands(ud, out, only), _env(cache))
            else:
                results[name] = timed([batch_command(ud, out, int(name[-1]), only)], _env(cache))
                digests[name] = digest(out)
                if len(digests) == 1:
                    print(totals(out))
            r = results[name]
            print(f"{name:9s} wall {r['wall']:7.1f} s  cpu {r['cpu']:7.1f} s  peak rss (tree) {r['peak_tree_mib']:6.0f} MiB"
                  f"  largest process {r['max_process_mib']:5.0f} MiB  load {r['load']:.1f}", flush=True)
            shutil.rmtree(out, ignore_errors=True)
            if cold:
                shutil.rmtree(cache, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    same = len(set(digests.values())) <= 1
    print(f"releases byte-identical across runs ({', '.join(digests)}): {'yes' if same else 'NO'}")
    return report(results) if same else 1


def _env(cache: Path) -> dict:
    return {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(ROOT)}


def report(results: dict) -> int:
    for name in ("warm2", "cold2"):
        if name in results:
            r = results[name]
            print(f"{name}: {r['wall'] / 60:.1f} min wall (target 10), {r['cpu'] / 2 / 60:.1f} min on two idle cores "
                  f"(CPU / 2), load {r['load']:.1f}")
    best = next((n for n in ("warm2", "warm1", "cold2", "cold1") if n in results), None)
    if best is None:
        return 0
    r = results[best]
    if "baseline" in results:
        b = results["baseline"]
        print(f"bench_languages: {r['wall']:.0f} s wall for the whole run ({best}), "
              f"{b['wall'] / r['wall']:.1f}x per-language CLI loop (CPU {b['cpu'] / r['cpu']:.1f}x)")
    else:
        print(f"bench_languages: {r['wall']:.0f} s wall for the whole run ({best}), no baseline run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
