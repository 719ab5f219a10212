"""The score runs a results page shows: each ``agree score`` output directory read back
(its scored rows by :func:`formats.scored.read_scored`, the one reader, and its
manifest), the test sets it scored read again (the rows name items, the page shows
their words), its plots, and ``tokens.tsv`` where the run saved per-word surprisal.

Several runs go on one page only when they scored the same test sets: the manifests'
checksums of the test-set files must agree (a run over another test set would pair
rows that are not the same items). Every fault is one :class:`AgreeError` naming the
directory, raised before anything is written.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from agreement.errors import AgreeError
from treebanks.errors import literal
from agreement.scoring.surprisal import TOKENS_FILE, SurprisalKey, read_surprisal
from formats.digests import sha256_of
from formats.manifest import AGREE_VERSION, MANIFEST, read_manifest
from formats.scored import ScoredTable, read_scored
from formats.testsets import TestSet, load_testset, testset_inputs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScoreDir:
    """One ``agree score`` output as the page reads it.

    path       the directory as given
    table      its scored rows
    manifest   its manifest.json
    testsets   the TESTSET labels it scored, in order
    digests    test set label -> sorted (file name, sha256) of the files the run read
    plots      the PNG files it holds
    surprisal  (testset, item_id, variant, model, sentence) -> per-word surprisal, or None
    units      the surprisal's units (``nats``/``bits``)
    """
    path: Path
    table: ScoredTable
    manifest: Mapping
    testsets: tuple[str, ...]
    digests: Mapping[str, tuple[tuple[str, str], ...]]
    plots: tuple[Path, ...]
    surprisal: Mapping[SurprisalKey, list[float]] | None
    units: str = "nats"

    @property
    def name(self) -> str:
        return self.path.resolve().name


def read_score_dir(path: str | os.PathLike, *, with_surprisal: bool = True) -> ScoreDir:
    """One score directory; :class:`AgreeError` when it is not one this version reads."""
    path = Path(path)
    if not path.is_dir():
        raise AgreeError(f"{path}: not a directory (give the directory agree score wrote)")
    if not (path / "items.tsv").is_file():
        raise AgreeError(f"{path}: not an agree score output (no items.tsv)")
    manifest = _manifest(path)
    table = read_scored(path)
    params = manifest.get("parameters") or {}
    testsets = tuple(str(t) for t in params.get("testsets") or ())
    if not testsets:
        raise AgreeError(f"{path}: its manifest.json names no test sets (written by another version of agree?)")
    tokens = path / TOKENS_FILE
    surprisal = read_surprisal(tokens) if with_surprisal and tokens.is_file() else None
    return ScoreDir(path, table, manifest, testsets, _digests(manifest, testsets),
                    tuple(sorted(path.glob("*.png"))), surprisal, str(params.get("units") or "nats"))


def _manifest(path: Path) -> dict:
    """The run's manifest, checked: written by ``agree score`` (of a version whose
    columns :func:`read_scored` reads; a different version is told, not refused)."""
    if not (path / MANIFEST).is_file():
        raise AgreeError(f"{path}: not an agree score output (no manifest.json)")
    try:
        manifest = read_manifest(path)
    except (ValueError, UnicodeDecodeError) as e:
        raise AgreeError(f"{path}: not an agree score output (manifest.json unreadable: {e})") from None
    if not isinstance(manifest, dict) or manifest.get("command") != "score":
        cmd = manifest.get("command") if isinstance(manifest, dict) else None
        raise AgreeError(f"{path}: not an agree score output (manifest.json written by {cmd!r})")
    version = (manifest.get("versions") or {}).get("agree")
    if version != AGREE_VERSION:
        log.info(f"{path}: scored by agree {version}, read by {AGREE_VERSION}")
    return manifest


def _digests(manifest: Mapping, testsets: Sequence[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per test set label, the (path inside it, sha256) of the input files under it."""
    out = {}
    for label in testsets:
        base = label.rstrip("/")
        rows = []
        for entry in manifest.get("inputs") or ():
            p = str(entry.get("path", ""))
            if p == base or p.startswith(base + "/"):
                rows.append((p[len(base):].lstrip("/"), str(entry.get("sha256"))))
        out[label] = tuple(sorted(rows))
    return out


def check_same_testsets(runs: Sequence[ScoreDir]) -> None:
    """Runs shown together scored the same test sets (by the files' checksums)."""
    first = runs[0]
    for other in runs[1:]:
        if sorted(first.digests.values()) != sorted(other.digests.values()):
            raise AgreeError(f"{other.path}: scored other test sets than {first.path} "
                             f"({', '.join(other.testsets)} vs {', '.join(first.testsets)}, by their files' "
                             "sha256 in manifest.json); a page shows runs over the same items")


def locate_testset(run: ScoreDir, label: str, given: Mapping[str, str]) -> Path:
    """Where the test set ``label`` of ``run`` is now: ``given[label]`` (``--testset``),
    else the label as a path from here or from the score directory's parent (agree
    demo's layout), the first that holds the files the run read (same sha256): a
    folder of the same name that is something else (the checkout's ``nonce/`` package
    beside a demo's ``nonce`` test set) is passed over."""
    tries = [Path(given[label])] if label in given else [Path(label), run.path.parent / label]
    faults = []
    for candidate in (c for c in tries if c.exists()):
        try:
            _check_digests(run, label, candidate)
            return candidate
        except AgreeError as e:
            faults.append(str(e))
    if faults:   # there, but not what the run read: the first place's reason
        raise AgreeError(faults[0])
    raise AgreeError(f"{literal(run.path)}: its test set {literal(label)} is not here (looked at "
                     f"{literal(', '.join(map(str, tries)))}); say where it is with "
                     f"{{testsets}} {literal(label)}=PATH", fields=True)


def _check_digests(run: ScoreDir, label: str, where: Path) -> None:
    """An :class:`AgreeError` unless ``where`` is a test set holding the files ``run``
    read as ``label`` with the sha256 its manifest recorded."""
    recorded = dict(run.digests.get(label) or ())
    files = [f for p in testset_inputs(where) for f in ([p] if p.is_file() else sorted(p.rglob("*")))]
    if not recorded:
        return
    held = {f.relative_to(where).as_posix() if where.is_dir() else "": f for f in files if f.is_file()}
    if not held.keys() & recorded.keys():
        raise AgreeError(f"{where}: not the test set {run.path} scored as {label} (none of its files)")
    for inside, f in held.items():
        if inside in recorded and sha256_of(f) != recorded[inside]:
            raise AgreeError(f"{f}: changed since {run.path} scored it (sha256 differs from its manifest.json)")


def load_items(run: ScoreDir, given: Mapping[str, str]) -> list[TestSet]:
    """The test sets ``run`` scored, read again with the run's format and language."""
    params = run.manifest.get("parameters") or {}
    sets = []
    for label in run.testsets:
        where = locate_testset(run, label, given)
        log.info(f"reading the test set {label} ({where})")
        sets.append(load_testset(where, str(params.get("format") or "auto"), label=label,
                                 lang=params.get("lang")))
    return sets


def describe(runs: Sequence[ScoreDir]) -> list[dict]:
    """What the page says about each run (its directory, test sets, models, method)."""
    return [{"dir": str(r.path), "name": r.name, "testsets": list(r.testsets), "models": r.table.models(),
             "method": (r.manifest.get("parameters") or {}).get("method"),
             "agree": (r.manifest.get("versions") or {}).get("agree")} for r in runs]


def dumps_compact(value) -> str:
    """JSON without spaces, non-ASCII kept (the page's data files)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
