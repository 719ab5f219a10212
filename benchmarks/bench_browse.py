"""Benchmark: ``agree browse``'s page in headless Chromium, load and filter times, with
the page's size on disk.

The page is opened from ``file://`` in Debian's chromium (headless, driven over the
DevTools pipe: :mod:`agreement.reporting.browse.headless`), fresh for each repeat:

- **load**: from the navigation to the page being usable (columns decoded, filters
  built, the first screen of rows and the summary drawn), as the page's own clock
  says (``performance.now()`` at ready, from the navigation's start); then the time
  until the first screen's words have loaded too;
- **filter**: each of a few filters (one model wrong, the models disagreeing, one
  language, attractors >= 1, a distance range, all of them at once) applied through
  the page's API, timed in the page: filtering every row, the summary's counts over
  the rows kept, and drawing the rows on screen;
- **sort**: the rows kept sorted by a model's margin.

Naive baseline, in the same process and browser: the same page with ``?naive=1``,
which renders every filtered row into the DOM (a plain table: what a page without
virtual scrolling does), timed the same way; a run that does not finish within
``--naive-timeout`` seconds is reported as at least that.

Usage: ``.venv/bin/python benchmarks/bench_browse.py PAGE_DIR [--repeats 3]``
(PAGE_DIR: an ``agree browse`` output). Last line:
``browse: X s load, Yx BASELINE``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.reporting.browse.headless import Chromium, find_chromium  # noqa: E402


def size_of(page: Path) -> dict[str, int]:
    """Bytes on disk: all, the columns, the words chunks."""
    files = [f for f in page.rglob("*") if f.is_file()]
    return {"all": sum(f.stat().st_size for f in files), "files": len(files),
            "columns": (page / "data" / "columns.js").stat().st_size,
            "words": sum(f.stat().st_size for f in (page / "data" / "text").glob("*.js"))}


def load(browser: Chromium, page: Path, query: str = "", timeout: float = 120.0) -> tuple[float, float]:
    """(seconds to usable, seconds until the first screen's words are there too), from
    the navigation's start by the page's clock (the naive page loads no words: wall)."""
    start = time.monotonic()
    browser.open(page / "index.html", query)
    browser.wait_for("window.agreeBrowse && agreeBrowse.ready", timeout=timeout)
    ready = browser.evaluate("agreeBrowse.loadMs") / 1000
    browser.wait_for("!agreeBrowse.pending()", timeout=timeout)
    words = browser.evaluate("agreeBrowse.wordsMs()") / 1000
    return ready, words or time.monotonic() - start


def filters(browser: Chromium) -> dict[str, list[tuple[str, str]]]:
    """The filters timed, as (key, value) pairs the page's setFilter takes."""
    meta = browser.evaluate("AGREE_META")
    out = {"model 0 wrong": [("m0", "0")], "attractors >= 1": [("attractors", "ge1")],
           "distance 4-10": [("dmin", "4"), ("dmax", "10")]}
    if len(meta["models"]) > 1:
        out["models disagree"] = [("disagree", "1")]
    languages = meta["dicts"].get("language") or []
    if len(languages) > 1:
        out["one language"] = [("language", str(languages.index(sorted(languages)[len(languages) // 2])))]
    out["all at once"] = [kv for f in out.values() for kv in f]
    return out


def time_filters(browser: Chromium, timeout: float) -> dict[str, tuple[float, int]]:
    """Per filter: (seconds in the page, rows kept); the filters are cleared between."""
    out = {}
    for name, pairs in filters(browser).items():
        browser.evaluate("(() => { for (const k of Object.keys(agreeBrowse.filters())) agreeBrowse.setFilter(k, ''); })()",
                         timeout=timeout)
        ms = 0.0
        for key, value in pairs:
            ms = browser.evaluate(f"agreeBrowse.setFilter({key!r}, {value!r})", timeout=timeout)
        # the time of the last setFilter is the filter's: every row tested against all of them
        out[name] = (ms / 1000, browser.evaluate("agreeBrowse.rows().length"))
    browser.evaluate("(() => { for (const k of Object.keys(agreeBrowse.filters())) agreeBrowse.setFilter(k, ''); })()",
                     timeout=timeout)
    return out


def screenshot(browser: Chromium, page: Path, path: Path, timeout: float) -> None:
    """The docs' pictures: PATH_summary (the page as it opens), then PATH: the first model
    wrong on items with attractors, sorted by its margin, the first row's detail open."""
    load(browser, page, timeout=timeout)
    time.sleep(0.5)   # the plots
    summary = path.with_name(path.stem + "_summary" + path.suffix)
    browser.screenshot(summary)   # first the summary of every row, with the runs' plots
    print(f"screenshot: {summary}")
    browser.evaluate("agreeBrowse.setFilter('m0', '0')")
    browser.evaluate("agreeBrowse.setFilter('attractors', 'ge1')")
    browser.evaluate("agreeBrowse.setSort('margin0', true)")
    browser.evaluate("document.querySelector('#rows .row').click()")
    browser.wait_for("!!document.querySelector('#detail .pair') && !agreeBrowse.pending()", timeout=timeout)
    browser.evaluate("document.getElementById('summary-box').open = false")
    time.sleep(0.5)   # the plots and the layout settle
    browser.screenshot(path)
    print(f"screenshot: {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("page", type=Path, help="an agree browse output directory")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--naive-timeout", type=float, default=300.0)
    ap.add_argument("--no-naive", action="store_true", help="skip the baseline")
    ap.add_argument("--screenshot", type=Path, help="also write a PNG of the page (the docs' picture)")
    args = ap.parse_args()
    if find_chromium() is None:
        sys.exit("bench_browse: no chromium here (apt-get install chromium)")
    size = size_of(args.page)
    print(f"page {args.page}: {size['all'] / 1e6:.1f} MB in {size['files']} files "
          f"(columns {size['columns'] / 1e6:.1f} MB, words {size['words'] / 1e6:.1f} MB)")
    with Chromium(width=1400, height=900, timeout=args.naive_timeout) as browser:
        loads, words, timed = [], [], []
        for _ in range(args.repeats):
            ready, shown = load(browser, args.page)
            loads.append(ready)
            words.append(shown)
            timed.append(time_filters(browser, args.naive_timeout))
        rows = browser.evaluate("AGREE_META.rows")
        models = [m["name"] for m in browser.evaluate("AGREE_META.models")]
        t = time.monotonic()
        sort_ms = browser.evaluate("agreeBrowse.setSort('margin0', true)")
        print(f"{rows:,} rows, models {', '.join(models)}; chromium {browser.executable}")
        print(f"load: {statistics.median(loads):.2f} s to usable (runs: {', '.join(f'{x:.2f}' for x in loads)}), "
              f"{statistics.median(words):.2f} s with the first screen's words")
        for name in timed[0]:
            secs = [r[name][0] for r in timed]
            print(f"filter {name}: {statistics.median(secs) * 1000:.0f} ms, {timed[0][name][1]:,} rows kept")
        print(f"sort by margin of {models[0]}: {sort_ms:.0f} ms ({time.monotonic() - t:.2f} s wall)")
        if args.screenshot:
            screenshot(browser, args.page, args.screenshot, args.naive_timeout)
        naive, bound = None, ""
        if not args.no_naive:
            try:
                naive, _ = load(browser, args.page, "?naive=1", timeout=args.naive_timeout)
                print(f"naive (every row in the DOM): {naive:.2f} s to usable")
            except TimeoutError:
                print(f"naive (every row in the DOM): not usable after {args.naive_timeout:.0f} s")
                naive, bound = args.naive_timeout, ">="
    load_s = statistics.median(loads)
    ratio = f"{bound}{naive / load_s:.1f}x" if naive else "n/a"
    print(f"browse: {load_s:.2f} s load, {ratio} BASELINE")


if __name__ == "__main__":
    main()
