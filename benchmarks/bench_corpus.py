"""Benchmark: ``agree corpus`` against WikiExtractor 3.x on the same Wikipedia dump.

The dump is the shared English fragment's 206 pages repeated ``--copies`` times with
new titles and ids (20 copies: about 8 million words of article text), written as a
multistream dump with its index (``*-multistream.xml.bz2`` and
``*-multistream-index.txt.bz2``, 100 pages a stream, as Wikipedia publishes them), or
with ``--plain`` as one bz2 stream (read in order, in blocks).

Both tools run as the commands a user types, alternated, ``--rounds`` times, at 1 and
2 workers (``agree corpus --workers N`` against ``wikiextractor --processes N``):
wall time, CPU seconds (the process and all its children), and peak memory (the
largest sum of the resident memory of the process tree, sampled every 200 ms).
WikiExtractor only extracts article text; agree also splits sentences, tokenises as
UD does, counts the vocabulary, filters and shuffles, and splits 8:1:1. Words per
second are the words of WikiExtractor's text (whitespace-separated, ``<doc>`` lines
left out) over each tool's time, so that both figures count the same words; agree's
own token count is printed beside.

Every agree run's outputs (train/valid/test/vocab sha256) must be the same whatever
the worker count (checked). ``--workers-memory`` runs agree once more at each of
those worker counts for the peak memory. Needs the peers extra (WikiExtractor):
``pip install -c constraints.txt -e '.[peers]'``.

    .venv/bin/python benchmarks/bench_corpus.py                 # 20 copies, 2 rounds
    .venv/bin/python benchmarks/bench_corpus.py --copies 2 --rounds 1   # a smoke run
    .venv/bin/python benchmarks/bench_corpus.py --external 1,2,4     # the external shuffle's memory and cost

The last line: ``corpus: N words/s, Rx wikiextractor`` (agree's words per second at 2
workers, and WikiExtractor's wall time over agree's, best of the rounds).
"""
from __future__ import annotations

import argparse
import bz2
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared/data/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
AGREE = [str(ROOT / ".venv/bin/agree")]
#: agree with the external shuffle forced (lm.corpus.shuffle's limit set to 0 sentences)
AGREE_EXTERNAL = [str(ROOT / ".venv/bin/python"), "-c",
                  "import sys; from lm.corpus import shuffle; shuffle.IN_MEMORY_SENTENCES = 0; "
                  "from agreement.cli import main; sys.argv[0] = 'agree'; main()"]
WIKIEXTRACTOR = [sys.executable, "-m", "wikiextractor.WikiExtractor"]


def make_dump(source: Path, copies: int, out_dir: Path, plain: bool = False) -> Path:
    """``source``'s pages ``copies`` times (new titles and ids) as a multistream dump
    with its index, or one bz2 stream with ``plain``; returns the dump's path."""
    xml = bz2.open(source, "rt", encoding="utf-8").read()
    head, rest = xml.split("  <page>", 1)
    pages = re.findall(r"  <page>.*?</page>\n", "  <page>" + rest, re.DOTALL)
    streams, pid = [], 0
    for c in range(copies):
        for page in pages:
            pid += 1
            title = re.search(r"<title>(.*?)</title>", page).group(1) + (f" ({c})" if c else "")
            page = re.sub(r"<title>.*?</title>", f"<title>{title}</title>", page, count=1)
            page = re.sub(r"<id>\d+</id>", f"<id>{pid}</id>", page, count=1)
            if not streams or len(streams[-1]) == 100:
                streams.append([])
            streams[-1].append((pid, title, page))
    name = f"enwiki-x{copies}-pages-articles" + ("" if plain else "-multistream") + ".xml.bz2"
    dump = out_dir / name
    if plain:
        text = head + "".join(p for s in streams for _, _, p in s) + "</mediawiki>\n"
        dump.write_bytes(bz2.compress(text.encode("utf-8")))
        return dump
    index = out_dir / name.replace(".xml.bz2", "-index.txt.bz2")
    with open(dump, "wb") as fh, bz2.open(index, "wt", encoding="utf-8") as ix:
        fh.write(bz2.compress(head.encode("utf-8")))
        for stream in streams:
            offset = fh.tell()
            ix.write("".join(f"{offset}:{p}:{t}\n" for p, t, _ in stream))
            fh.write(bz2.compress("".join(p for _, _, p in stream).encode("utf-8")))
        fh.write(bz2.compress(b"</mediawiki>\n"))
    return dump


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, ()))
    return total


def timed(cmd: list[str]) -> dict:
    """Run ``cmd``: wall seconds, CPU seconds of it and its children, peak tree RSS."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]

    def sample():
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    after = os.times()
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err.decode()[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall": wall, "cpu": cpu, "peak_mb": peak[0] / 2**20}


def extracted_words(out_dir: Path) -> int:
    n = 0
    for path in out_dir.rglob("wiki_*"):
        with open(path, encoding="utf-8") as fh:
            n += sum(len(line.split()) for line in fh if not line.startswith(("<doc ", "</doc>")))
    return n


def agree_run(dump: Path, work: Path, workers: int, tag: str, *extra: str, agree: list[str] = AGREE) -> dict:
    out = work / f"agree-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    r = timed(agree + ["corpus", str(dump), "--lang", "en", "--workers", str(workers), "--out", str(out), "--quiet",
                       *extra])
    manifest = json.loads((out / "manifest.json").read_text())
    r["sha256"], r["tokens"] = manifest["sha256"], manifest["stats"]["tokens_read"]
    r["runs"] = manifest["stats"].get("shuffle_runs")
    shutil.rmtree(out)
    return r


def external_runs(dump: Path, work: Path, workers: list[int]) -> None:
    """The external shuffle forced against the in-memory one, alternated at each worker
    count: wall, CPU, peak memory; the external runs' outputs must agree among themselves."""
    digests = set()
    for n in workers:
        a = agree_run(dump, work, n, f"in-memory-{n}")
        e = agree_run(dump, work, n, f"external-{n}", agree=AGREE_EXTERNAL)
        digests.add(e["sha256"])
        print(f"--workers {n}: in-memory shuffle {a['wall']:.1f} s wall, {a['cpu']:.1f} s CPU, "
              f"peak {a['peak_mb']:.0f} MB; external ({e['runs']} run(s)) {e['wall']:.1f} s wall, "
              f"{e['cpu']:.1f} s CPU, peak {e['peak_mb']:.0f} MB", flush=True)
    if len(digests) != 1:
        raise SystemExit(f"the external shuffle's outputs differ between worker counts: {sorted(digests)}")
    print(f"external shuffle: outputs identical at {len(workers)} worker counts (sha256 {digests.pop()[:12]})")
    shuffle_cost(dump, work)


def shuffle_cost(dump: Path, work: Path) -> None:
    """The filter, shuffle and split in memory and external on the same sentences: the
    corpus of ``dump`` given back as a text file (read without tokenising, so that the
    shuffle weighs more), once and repeated 4 times; CPU seconds and peak memory of
    prepare_corpus (its reading and counting are the same in both)."""
    out = work / "cost-corpus"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(AGREE + ["corpus", str(dump), "--lang", "en", "--workers", "2", "--out", str(out), "-q"], check=True)
    sentences = b"".join((out / f"{split}.txt").read_bytes() for split in ("train", "valid", "test"))
    shutil.rmtree(out)
    code = ("import sys; from pathlib import Path; from lm.corpus import shuffle; "
            "from lm.corpus.prepare import prepare_corpus\n"
            "if sys.argv[1] == 'external': shuffle.IN_MEMORY_SENTENCES = 0\n"
            "prepare_corpus([Path(sys.argv[2])], Path(sys.argv[3]), 'en')")
    for copies in (1, 4):
        text = work / "cost.txt"
        text.write_bytes(sentences * copies)
        lines = sentences.count(b"\n") * copies
        r = {}
        for mode in ("in-memory", "external"):
            shutil.rmtree(work / "cost-out", ignore_errors=True)
            r[mode] = timed([str(ROOT / ".venv/bin/python"), "-c", code, mode, str(text), str(work / "cost-out")])
        shutil.rmtree(work / "cost-out", ignore_errors=True)
        extra = r["external"]["cpu"] - r["in-memory"]["cpu"]
        print(f"{lines:,} sentences ({text.stat().st_size / 2**20:.0f} MB) given as text: in memory "
              f"{r['in-memory']['cpu']:.1f} s CPU, peak {r['in-memory']['peak_mb']:.0f} MB; external "
              f"{r['external']['cpu']:.1f} s CPU, peak {r['external']['peak_mb']:.0f} MB "
              f"({extra:+.1f} s, {1e6 * extra / lines:+.1f} us a sentence)", flush=True)


def wikiextractor_run(dump: Path, work: Path, workers: int, tag: str) -> tuple[dict, int]:
    out = work / f"we-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    r = timed(WIKIEXTRACTOR + [str(dump), "--processes", str(workers), "-o", str(out), "-q"])
    words = extracted_words(out)
    shutil.rmtree(out)
    return r, words


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int, default=20, help="times the shared dump's pages are repeated")
    ap.add_argument("--rounds", type=int, default=2, help="alternated rounds of each run")
    ap.add_argument("--plain", action="store_true", help="one bz2 stream instead of a multistream dump")
    ap.add_argument("--workers-memory", default="1,2,4", help="worker counts of agree's peak-memory runs ('' for none)")
    ap.add_argument("--dump", type=Path, help="an existing dump instead of building one")
    ap.add_argument("--workers", default="1,2", help="the worker counts compared (comma list)")
    ap.add_argument("--ray", action="store_true", help="also a run with --executor ray (a local cluster)")
    ap.add_argument("--external", default="", help="only agree, with the external shuffle forced against the "
                    "in-memory one, at these worker counts (comma list), and the shuffle's cost")
    args = ap.parse_args()
    if args.external:
        with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
            dump = args.dump or make_dump(SOURCE, args.copies, Path(tmp), plain=args.plain)
            print(f"dump: {dump.name}, {dump.stat().st_size / 2**20:.1f} MB compressed")
            external_runs(dump, Path(tmp), [int(x) for x in args.external.split(",")])
        return
    try:
        import wikiextractor  # noqa: F401  (the peer: only checked for here)
    except ImportError:
        raise SystemExit("WikiExtractor is not installed: pip install -c constraints.txt -e '.[peers]'")
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        work = Path(tmp)
        dump = args.dump or make_dump(SOURCE, args.copies, work, plain=args.plain)
        print(f"dump: {dump.name}, {dump.stat().st_size / 2**20:.1f} MB compressed")
        runs: dict[str, list[dict]] = {}
        words = None
        for rnd in range(args.rounds):
            for workers in [int(x) for x in args.workers.split(",")]:
                a = agree_run(dump, work, workers, f"{workers}-{rnd}")
                w, words = wikiextractor_run(dump, work, workers, f"{workers}-{rnd}")
                runs.setdefault(f"agree-{workers}", []).append(a)
                runs.setdefault(f"we-{workers}", []).append(w)
                print(f"round {rnd + 1}, {workers} worker(s): agree {a['wall']:.1f} s wall, {a['cpu']:.1f} s CPU, "
                      f"{a['peak_mb']:.0f} MB; wikiextractor {w['wall']:.1f} s wall, {w['cpu']:.1f} s CPU, "
                      f"{w['peak_mb']:.0f} MB", flush=True)
        for n in [int(x) for x in args.workers_memory.split(",") if x.strip()]:
            a = agree_run(dump, work, n, f"mem-{n}")
            runs.setdefault(f"agree-{n}", []).append(a)
            print(f"agree --workers {n}: {a['wall']:.1f} s wall, {a['cpu']:.1f} s CPU, peak {a['peak_mb']:.0f} MB")
        if args.ray:
            a = agree_run(dump, work, 2, "ray", "--executor", "ray")
            runs.setdefault("agree-ray", []).append(a)
            print(f"agree --executor ray --workers 2: {a['wall']:.1f} s wall, {a['cpu']:.1f} s CPU (this process's "
                  f"children; Ray's own workers are not), sha256 {a['sha256'][:12]}")
        digests = {r["sha256"] for k, rs in runs.items() if k.startswith("agree") for r in rs}
        if len(digests) != 1:
            raise SystemExit(f"agree's outputs differ between runs: {sorted(digests)}")
        print(f"\n{words:,} words of article text (WikiExtractor's output); agree: "
              f"{next(iter(runs.values()))[0]['tokens']:,} tokens; outputs identical in all "
              f"{sum(len(rs) for k, rs in runs.items() if k.startswith('agree'))} agree runs (sha256 {digests.pop()[:12]})")
        summary(runs, words)


def summary(runs: dict, words: int) -> None:
    def best(key, field):
        return min(r[field] for r in runs[key])

    def spread(key, field):
        values = [r[field] for r in runs[key]]
        return f"{min(values):.1f}-{max(values):.1f}" if len(values) > 1 else f"{values[0]:.1f}"

    print(f"{'run':<26}{'wall s':>13}{'CPU s':>13}{'words/s':>11}{'peak MB':>9}")
    for key, label in (("agree-1", "agree --workers 1"), ("we-1", "wikiextractor --processes 1"),
                       ("agree-2", "agree --workers 2"), ("we-2", "wikiextractor --processes 2"),
                       ("agree-4", "agree --workers 4")):
        if key in runs:
            print(f"{label:<26}{spread(key, 'wall'):>13}{spread(key, 'cpu'):>13}"
                  f"{words / best(key, 'wall'):>11,.0f}{max(r['peak_mb'] for r in runs[key]):>9.0f}")
    for n in (1, 2):
        if f"we-{n}" not in runs:
            continue
        wall = best(f"we-{n}", "wall") / best(f"agree-{n}", "wall")
        cpu = best(f"we-{n}", "cpu") / best(f"agree-{n}", "cpu")
        ratios = [w["wall"] / a["wall"] for a, w in zip(runs[f"agree-{n}"], runs[f"we-{n}"])]
        print(f"{n} worker(s): wall {wall:.2f}x wikiextractor (per round {', '.join(f'{r:.2f}' for r in ratios)}), "
              f"CPU {cpu:.2f}x")
    n = 2 if "we-2" in runs else 1
    rate = words / best(f"agree-{n}", "wall")
    print(f"corpus: {rate:,.0f} words/s, {best(f'we-{n}', 'wall') / best(f'agree-{n}', 'wall'):.2f}x wikiextractor"
          + ("" if n == 2 else " (1 worker)"))


if __name__ == "__main__":
    main()
