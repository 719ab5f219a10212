"""``agree browse`` as a library verb: score directories -> a static results page that
opens from ``file://`` with no server and no network.

The page (``index.html``, ``browse.js``, ``browse.css``: plain JS and CSS shipped in
this package's ``assets``) reads its data from script files beside it, since Chromium
refuses ``fetch`` from ``file://``: ``data/meta.js`` (dictionaries, models, runs),
``data/columns.js`` (the typed columns of :mod:`agreement.reporting.browse.columns`) and
``data/text/tNNNNN.js`` (the words of :data:`CHUNK_ROWS` rows each, loaded when a row of
theirs is on screen). The score runs' PNG plots are copied into ``plots/``. Written
atomically under the ``--out`` policy, with its manifest.
"""
from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from agreement.reporting.browse.columns import PageData, build_page_data
from agreement.reporting.browse.runs import (ScoreDir, check_same_testsets, describe, dumps_compact, load_items,
                                             locate_testset, read_score_dir)
from agreement.reporting.humans import HumanIndex
from agreement.scoring.surprisal import TOKENS_FILE
from formats.humans import read_humans
from formats.run import RunContext

log = logging.getLogger(__name__)

ASSETS = Path(__file__).parent / "assets"
#: the page's own files, copied from :data:`ASSETS`
ASSET_FILES = ("index.html", "browse.js", "browse.css")
#: rows per words chunk: small enough that the chunk of the rows on screen loads at once
CHUNK_ROWS = 2000


@dataclass(frozen=True)
class BrowsePage:
    """What ``agree browse`` wrote: rows (scored pairs), models, the page's files and
    their bytes on disk."""
    out: Path
    rows: int
    models: tuple[str, ...]
    files: int
    bytes: int


def browse_to_dir(run: RunContext, score_dirs: Sequence[str | os.PathLike], *,
                  testsets: Mapping[str, str] | None = None, humans: str | None = None) -> BrowsePage:
    """Write the results page of ``score_dirs`` (``agree score`` outputs over the same
    test sets) into ``run.out``. ``testsets``: label -> path, where a test set is no
    longer at the path its run recorded; ``humans``: judgments (default: the file the
    first run named, when it is here)."""
    given = {k: str(run.path(v)) for k, v in (testsets or {}).items()}
    run.check_out([*score_dirs, humans, *given.values()])   # before the runs and test sets are read
    runs = [read_score_dir(run.path(d)) for d in score_dirs]
    check_same_testsets(runs)
    sets = load_items(runs[0], given)
    humans_path = humans if humans is not None else _scored_humans(runs[0])
    index = HumanIndex(read_humans(run.path(humans_path))) if humans_path else None
    data = build_page_data(runs, sets, index)
    sources = [str(locate_testset(runs[0], label, given)) for label in runs[0].testsets]
    with run.output_dir([*score_dirs, humans_path]) as tmp:
        files = write_site(tmp, data, runs, title=_title(runs))
        run.write_manifest(tmp, _inputs(score_dirs, runs) + sources + ([humans_path] if humans_path else []),
                           {"score_dirs": [str(d) for d in score_dirs], "testsets": dict(testsets or {}),
                            "humans": humans_path, "chunk_rows": CHUNK_ROWS},
                           counts={"rows": data.meta["rows"], "models": [m["name"] for m in data.meta["models"]],
                                   "files": files})
    out = Path(run.path(run.out))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return BrowsePage(out, data.meta["rows"], tuple(m["name"] for m in data.meta["models"]), files, size)


def _scored_humans(run: ScoreDir) -> str | None:
    """The judgments file the score run named, when it is here (from here, or beside
    the score directory: agree demo's layout)."""
    path = (run.manifest.get("parameters") or {}).get("humans")
    if not path:
        return None
    for candidate in (Path(path), run.path.parent / path):
        if candidate.is_file():
            return str(candidate)
    log.info(f"{run.path}: its human judgments ({path}) are not here; name them with --humans")
    return None


def _title(runs: Sequence[ScoreDir]) -> str:
    return ", ".join(r.name for r in runs)


def _inputs(score_dirs, runs: Sequence[ScoreDir]) -> list[str]:
    """The files of the score directories the page was made from."""
    out = []
    for d, r in zip(score_dirs, runs):
        out += [f"{d}/{f}" for f in ("items.tsv", "manifest.json", TOKENS_FILE) if (r.path / f).is_file()]
    return out


def write_site(directory: str | os.PathLike, data: PageData, runs: Sequence[ScoreDir], *, title: str) -> int:
    """The page's files in ``directory``; returns how many."""
    directory = Path(directory)
    for name in ASSET_FILES:
        shutil.copyfile(ASSETS / name, directory / name)
    plots = _copy_plots(directory / "plots", runs)
    chunks = _write_chunks(directory / "data" / "text", data.text)
    units = sorted({r.units for r in runs if r.surprisal})
    meta = {**data.meta, "title": title, "runs": describe(runs), "plots": plots, "chunkRows": CHUNK_ROWS,
            "chunks": chunks, "surprisal": any(r.surprisal for r in runs), "units": ", ".join(units) or "nats"}
    _script(directory / "data" / "meta.js", "AGREE_META", meta)
    _script(directory / "data" / "columns.js", "AGREE_COLUMNS", data.encoded())
    return len(ASSET_FILES) + len(plots) + chunks + 2


def _script(path: Path, name: str, value) -> None:
    """A data file the page loads with a script tag: ``window.NAME = <json>;``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"window.{name} = {dumps_compact(value)};\n")


def _write_chunks(directory: Path, text: Sequence[list]) -> int:
    """``tNNNNN.js`` files of :data:`CHUNK_ROWS` rows, each calling ``AGREE_CHUNK(n, rows)``."""
    directory.mkdir(parents=True, exist_ok=True)
    n = 0
    for n, start in enumerate(range(0, len(text), CHUNK_ROWS)):
        with open(directory / f"t{n:05d}.js", "w", encoding="utf-8") as fh:
            fh.write(f"AGREE_CHUNK({n},{dumps_compact(text[start:start + CHUNK_ROWS])});\n")
    return (n + 1) if text else 0


def _copy_plots(directory: Path, runs: Sequence[ScoreDir]) -> list[dict]:
    """Each run's PNGs as ``plots/<run number>-<name>.png``, listed for the page."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for k, r in enumerate(runs):
        for png in r.plots:
            name = f"{k}-{png.name}"
            shutil.copyfile(png, directory / name)
            out.append({"run": k, "file": f"plots/{name}", "title": f"{r.name}: {png.stem.replace('_', ' ')}"})
    return out
