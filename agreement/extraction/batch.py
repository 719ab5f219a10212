"""One run over a folder of UD treebanks (``agree extract-all``): every language mined
by relation (:mod:`agreement.extraction.relations`), its nonce variants made, and the
whole written as a release people can load.

``OUT`` holds one directory per language and, at its top, ``index.tsv`` and the
datasheet ``README.md`` (:mod:`formats.release_card`) and ``manifest.json``. A
language's directory: ``items.tsv`` (its original items, as ``agree extract --mode
relations`` writes them), ``relations.tsv``, ``paradigms.tsv``, ``pairs.jsonl`` (and
``pairs.parquet`` with pyarrow; :mod:`formats.release`: the items and their nonce
variants as minimal pairs) and ``manifest.json``.

* **Per language, a pure function** (:func:`run_language`) of its files, the extract
  options, the run's seed and the number of variants, so it runs in this process, in a
  worker process or as a Ray task (:func:`agreement.parallel.run_tasks`). The nonce
  seed of a language is :func:`language_seed` (the run's seed and its code alone): a
  language's output does not depend on the others in the run, and
  ``agree extract DIR --mode relations`` then ``agree nonce --seed`` with that seed
  gives the same items.
* **Nothing half-written, and resumable**: the languages are written into
  ``OUT.partial`` (:mod:`agreement.extraction.partial_dir`; each atomically:
  :func:`formats.files.atomic_output_dir`), which becomes ``OUT`` when every language
  is done (``OUT`` is replaced whole, under the ``--out`` policy). A language whose directory (in ``OUT.partial``, or in an earlier
  ``OUT``) has a manifest that says it is complete, for the same inputs (by checksum),
  options and agree version, with its files unchanged, is kept, not mined again.
* **A language's faults are its own**: a treebank the reader refuses (a truncated
  ``.gz``, a malformed line) fails that language only; it is reported, listed in
  ``index.tsv`` with the error, and the run goes on (:attr:`BatchResult.failed`).
  A language without items says why (``reason``), as ``agree extract`` does.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from tqdm import tqdm

from agreement.errors import DomainError
from agreement.extraction.config import ExtractConfig, ExtractResult
from agreement.extraction.extract import check_config, extract_items
from agreement.extraction.itemtools import file_stem
from agreement.extraction.languages import Language, find_languages
from agreement.extraction.partial_dir import finish_work_dir, leave_work_dir, open_work_dir
from agreement.extraction.relation_arcs import RELATION_FEATURES, RELATIONS
from agreement.extraction.relations import RELATIONS_FILE, reason_text, write_relations
from agreement.parallel import check_executor, run_tasks
from formats.files import atomic_output_dir, claim_output, commit_dir
from formats.items import ITEMS_FILE, write_items
from formats.manifest import AGREE_VERSION, changed_outputs, describe_outputs, read_manifest, write_manifest
from formats.release import PAIRS_FILE, PARQUET_FILE, Source, parquet_available, release_row, write_pairs
from formats.release_card import COUNT_COLUMNS, FAILED, IndexRow, ReleaseCard, TreebankCard, write_datasheet, write_index
from formats.release_card import DATASHEET_FILE, INDEX_FILE
from formats.run import PACKAGES, RunContext
from nonce.budget import check_nonce_size
from nonce.generate import NonceConfig, make_nonce
from nonce.result import NonceResult
from nonce.frames import frames_of
from treebanks.cache import file_sha256
from treebanks.paradigms import PARADIGMS_FILE
from treebanks.ud_release import os_reason, unreadable_file

log = logging.getLogger(__name__)

COMMAND = "extract-all"
#: the (relation, feature) cells counted per language (index.tsv's columns)
CELLS = tuple((r, f) for r in RELATIONS for f in ("Number", "Person", "Gender") if f in RELATION_FEATURES[r])


def language_seed(seed: int, code: str) -> int:
    """The nonce seed of language ``code`` in a run seeded ``seed`` (32 bits of a SHA-256)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{code}".encode()).digest()[:4], "big")


@dataclass(frozen=True)
class LanguageTask:
    """One language's work (picklable: it travels to worker processes and Ray tasks)."""
    language: Language
    config: ExtractConfig   #: checked, relations mode, ``lang`` the language's code
    seed: int               #: the run's seed
    n: int                  #: nonce variants per item
    out: Path               #: its directory (in OUT.partial)
    parquet: bool           #: write pairs.parquet too
    argv: tuple[str, ...] = ()

    def parameters(self) -> dict:
        """What the language's manifest records, and what a kept one must match."""
        return {**self.config.parameters(), "n": self.n, "seed": self.seed,
                "nonce_seed": language_seed(self.seed, self.language.code), "parquet": self.parquet}


@dataclass(frozen=True)
class LanguageOutcome:
    """A language's row of index.tsv, and how it went: ``kept`` (finished by an
    earlier run), ``seconds`` (this run's), ``error`` (why it failed)."""
    row: IndexRow
    kept: bool = False
    seconds: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class BatchResult:
    """What :func:`extract_languages` did: the outcome of every language (by code), the
    languages of the folder it left out, the files it could give no language."""
    out: Path
    outcomes: tuple[LanguageOutcome, ...]
    excluded: tuple[str, ...] = ()
    skipped_files: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()    #: folders of UD_DIR that could not be listed (their treebanks are missing)

    @property
    def failed(self) -> tuple[LanguageOutcome, ...]:
        return tuple(o for o in self.outcomes if o.error)

    @property
    def kept(self) -> int:
        return sum(o.kept for o in self.outcomes)

    @property
    def items(self) -> int:
        return sum(o.row.items for o in self.outcomes)

    @property
    def variants(self) -> int:
        return sum(o.row.nonce_variants for o in self.outcomes)


# --------------------------------------------------------------------------- one language

def run_language(task: LanguageTask) -> LanguageOutcome:
    """Mine one language into ``task.out``, or keep it when an earlier run finished it
    (module docstring). A domain error (a treebank the reader refuses) is the
    language's outcome, not raised."""
    start = time.perf_counter()
    # a dangling link, a link loop, a file without read permission: an OS error later,
    # which would stop the whole run; found here, it fails this language only
    unread = [why for why in map(unreadable_file, task.language.files) if why]
    if unread:
        return _failed(task, "; ".join(unread), start)
    with _library_quiet():
        kept = kept_row(task)
        if kept is not None:
            return LanguageOutcome(kept, kept=True, seconds=time.perf_counter() - start)
        try:
            with atomic_output_dir(task.out, COMMAND) as tmp:
                row = _mine_into(task, tmp)
        except DomainError as e:
            return _failed(task, str(e), start)
        except OSError as e:   # a treebank file that stops reading half-way; any other fault stops the run
            if e.filename is None or Path(e.filename) not in set(task.language.files):
                raise
            return _failed(task, f"{e.filename}: cannot be read ({os_reason(e)})", start)
    return LanguageOutcome(row, seconds=time.perf_counter() - start)


def _failed(task: LanguageTask, error: str, start: float) -> LanguageOutcome:
    lang = task.language
    row = IndexRow(lang.code, lang.name, tuple(t.name for t in lang.treebanks), license=_licences(lang),
                   noncommercial=lang.noncommercial, reason=f"{FAILED}{' '.join(error.split())}")
    return LanguageOutcome(row, seconds=time.perf_counter() - start, error=error)


def mine_language(files: Sequence[Path], config: ExtractConfig, seed: int, n: int,
                  out: Path | None = None) -> tuple[ExtractResult, NonceResult]:
    """One language's items (relation mining, wrong forms pooled over ``files``) and
    their ``n`` nonce variants seeded ``seed``, as ``agree extract --mode relations``
    and ``agree nonce --seed SEED`` make them. ``out``: where they will be written (the
    variants that cannot fit its disk, or the memory, are refused before they are made)."""
    result = extract_items(files, config)
    if out is not None:
        check_nonce_size(len(result.items), n, out / ITEMS_FILE, out)
    nonce_config = NonceConfig(n=n, lang=config.lang, features=config.features, alternative_mode=config.alt,
                               values=config.values)
    frames = frames_of(result.columns, result.items, file_stem, lang=config.lang)   # the columns extraction read
    result = dataclasses.replace(result, columns=None)   # not held through the variants
    return result, make_nonce(result.items, result.paradigms, nonce_config, random.Random(seed), frames=frames)


def _mine_into(task: LanguageTask, tmp: Path) -> IndexRow:
    lang = task.language
    result, nonce = mine_language(lang.files, task.config, language_seed(task.seed, lang.code), task.n, tmp)
    write_items(tmp / ITEMS_FILE, result.items)
    write_relations(tmp / RELATIONS_FILE, result)
    result.paradigms.save(tmp / PARADIGMS_FILE)
    source = Source(lang.code, {t.name: t.licence for t in lang.treebanks})
    write_pairs(tmp / PAIRS_FILE, (release_row(it, source) for it in nonce.items),
                tmp / PARQUET_FILE if task.parquet else None)
    cells = Counter((it.relation, it.feature.split("[")[0]) for it in result.items)
    row = IndexRow(lang.code, lang.name, tuple(t.name for t in lang.treebanks), result.sentences, len(result.items),
                   nonce.with_variants, nonce.variants, {c: cells[c] for c in CELLS},
                   sum(it.scoring == "sentence" for it in result.items),
                   {k: result.filters.get(k, 0) for k in COUNT_COLUMNS}, _licences(lang), lang.noncommercial,
                   reason_text(result.reason), "; ".join(result.notes))
    write_manifest(tmp, COMMAND, lang.files, task.parameters(), argv=task.argv, complete=True,
                   index=_row_json(row), counts={"sentences": result.sentences, "tokens": result.tokens,
                                                 "items": len(result.items), "nonce": nonce.counts()},
                   filters=result.filters, excluded_values=result.report.excluded_values,
                   relations=[{"relation": r, "feature": f, **c} for (r, f), c in result.report.counts.items()],
                   treebanks=[_treebank_json(t) for t in lang.treebanks], files=describe_outputs(tmp))
    return row


def kept_row(task: LanguageTask) -> IndexRow | None:
    """The index row of a finished language at ``task.out`` that this task would write
    again (same inputs by checksum, options and agree version; files unchanged), else None."""
    try:
        manifest = read_manifest(task.out)
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("command") != COMMAND or manifest.get("complete") is not True:
        return None
    if manifest.get("parameters") != json.loads(json.dumps(task.parameters())) \
            or (manifest.get("versions") or {}).get("agree") != AGREE_VERSION:
        return None
    try:
        inputs = [(Path(i["path"]).name, i["sha256"]) for i in manifest["inputs"]]
        listed = [f["path"] for f in manifest["files"]]
        row = _row_of(manifest["index"])
    except (KeyError, TypeError, ValueError):
        return None
    if inputs != [(f.name, file_sha256(f)) for f in task.language.files]:
        return None
    if not all((task.out / name).is_file() for name in listed) or changed_outputs(task.out):
        return None
    return row


def _licences(lang: Language) -> str:
    if len(lang.treebanks) == 1:
        return lang.treebanks[0].licence
    return "; ".join(f"{t.name}: {t.licence}" for t in lang.treebanks)


def _row_json(row: IndexRow) -> dict:
    d = dataclasses.asdict(row)
    d["cells"] = [[r, f, n] for (r, f), n in row.cells.items()]
    return d


def _row_of(d: dict) -> IndexRow:
    cells = {(r, f): n for r, f, n in d["cells"]}
    return IndexRow(**{**d, "cells": cells, "treebanks": tuple(d["treebanks"])})


def _treebank_json(t) -> dict:
    return {"name": t.name, "repository": t.repository, "commit": t.commit, "licence": t.licence,
            "noncommercial": t.noncommercial, "files": [f.name for f in t.files]}


@contextlib.contextmanager
def _library_quiet():
    """The library's info lines and progress bars off while a language is mined (its
    warnings stay): the run shows one line, or one bar, for all languages."""
    loggers = [logging.getLogger(name) for name in PACKAGES]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(max(lg.getEffectiveLevel(), logging.WARNING))
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


# --------------------------------------------------------------------------- the run

def extract_languages(run: RunContext, ud_dir: str | os.PathLike, config: ExtractConfig | None = None, *,
                      n: int = 9, only: Sequence[str] = (), exclude: Sequence[str] = (),
                      workers: int = 1, executor: str = "local", address: str | None = None,
                      parquet: bool | None = None, recipe: str = "") -> BatchResult:
    """Mine every language of ``ud_dir`` (``only`` those codes, less ``exclude``) into
    ``run.out`` (module docstring). ``config``: the extract options (relations mode);
    ``workers`` languages at once on ``executor`` (``local`` or ``ray``, ``address`` its
    cluster); ``parquet``: also write Parquet (None: when pyarrow is installed);
    ``recipe``: the command line the datasheet gives to make the release again."""
    seed = run.seed
    config = check_config(dataclasses.replace(config or ExtractConfig(mode="relations"), mode="relations",
                                              workers=1, explain=()))
    check_executor(executor, workers, address)
    selection = find_languages(run.path(ud_dir), only, exclude)
    parquet = parquet_available() if parquet is None else parquet
    with claim_output(run.path(run.out), COMMAND, [run.path(ud_dir)], run.force) as target:
        codes = [lang.code for lang in selection.languages]
        work = target.with_name(target.name + ".partial")
        try:
            work = open_work_dir(target, codes, COMMAND)
            tasks = [LanguageTask(lang, dataclasses.replace(config, lang=lang.code), seed, n, work / lang.code,
                                  parquet, run.argv) for lang in sorted(selection.languages, key=lambda lg: -lg.size)]
            done = {task.language.code: outcome for task, outcome in
                    _progress(run_tasks(run_language, tasks, executor=executor, workers=workers, address=address),
                              len(tasks))}
            result = BatchResult(target, tuple(done[c] for c in codes), selection.excluded,
                                 selection.skipped_files, selection.unreadable)
            _write_top(run, work, ud_dir, selection.languages, result, config, seed, n, parquet, recipe)
        except BaseException:
            leave_work_dir(work, COMMAND)
            raise
        finish_work_dir(work, codes, COMMAND)
        commit_dir(work, target, COMMAND, run.force)
    return result


def _progress(results: Iterator, total: int) -> Iterator:
    """Pass ``(task, outcome)`` through, telling people: a bar on a terminal, else one
    line per language; a failure is a warning (seen with --quiet too)."""
    bar = tqdm(total=total, desc="languages", unit="lang", file=sys.stderr,
               disable=not (log.isEnabledFor(logging.INFO) and sys.stderr.isatty()))
    try:
        for k, (task, outcome) in enumerate(results, start=1):
            row = outcome.row
            if outcome.error:
                log.warning(f"Warning: {row.language} failed, skipped: {outcome.error}")
            elif bar.disable:
                what = "kept (finished by an earlier run)" if outcome.kept else f"{outcome.seconds:.1f} s"
                log.info(f"[{k}/{total}] {row.language}: {row.items} items, {row.nonce_variants} nonce variants, "
                         f"{what}" + (f"; no items: {row.reason}" if not row.items else ""))
            if row.notes and not outcome.kept:
                log.info(f"Note: {row.language}: {row.notes}")
            bar.set_postfix_str(f"{row.language} {row.items} items", refresh=False)
            bar.update()
            yield task, outcome
    finally:
        bar.close()


def _write_top(run: RunContext, work: Path, ud_dir, languages: Sequence[Language], result: BatchResult,
               config: ExtractConfig, seed: int, n: int, parquet: bool, recipe: str) -> None:
    rows = tuple(o.row for o in result.outcomes)
    write_index(work / INDEX_FILE, rows, CELLS)
    params = {**config.parameters(), "seed": seed, "n": n, "parquet": parquet}
    del params["lang"]
    treebanks = [t for lang in languages for t in lang.treebanks]
    cards = tuple(TreebankCard(t.name, t.language, t.language_name, t.repository, t.commit, t.licence,
                               t.noncommercial, tuple(f.name for f in t.files)) for t in treebanks)
    write_datasheet(work / DATASHEET_FILE, ReleaseCard(str(ud_dir), rows, cards, CELLS, params,
                                                       recipe or f"agree {COMMAND} {ud_dir} --seed {seed} --n {n}",
                                                       AGREE_VERSION, parquet))
    readable = [f for lang in languages for f in lang.files if unreadable_file(f) is None]   # failed ones: said
    run.write_manifest(work, [run.given(f) for f in readable], params,
                       counts={"languages": len(rows), "with_items": sum(r.items > 0 for r in rows),
                               "items": result.items, "nonce_variants": result.variants,
                               "failed": len(result.failed)},
                       languages=[_row_json(r) for r in rows], excluded=list(result.excluded),
                       skipped_files=list(result.skipped_files), unreadable=list(result.unreadable),
                       files=describe_outputs(work))
