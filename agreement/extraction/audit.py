"""The audit sheet: a seeded sample of a release's pairs for a person to judge, and
the valid-rate table of their verdicts.

**Drawing** (:func:`draw_sheet`). Per language, ``n_orig`` originals and ``n_nonce``
nonce variants, stratified by relation x feature: the strata of a language are
visited in a seeded order, one pair from each in turn, until the quota is met or
every stratum is spent, so a language with three strata and a quota of 15 gets five
of each where it can. Each stratum is sampled by reservoir (Algorithm R) while the
release streams past, so memory holds a few rows per stratum, never the release.
One seed, one sheet: the same release and seed give the same bytes.

**The sheet** (:data:`SHEET_COLUMNS`, ``sheet.tsv``; ``sheet.md`` renders it for
reading). Each row is one pair: the good and the bad sentence side by side, the cue
in ``[brackets]`` and the target in ``{braces}``, the contrasted feature with the
good and the wrong value, and where the wrong form came from (the release's
``wrong_source``: a treebank file, ``unimorph``, ``paradigms`` for nonce pairs).
The reader fills ``verdict`` (``valid``, ``questionable`` or ``invalid``; ``v``,
``q``, ``i`` for short) and, when useful, ``note``.

**Reading** (:func:`read_sheet`, :func:`valid_rates`). A row with an empty verdict
is not judged and counts nowhere; questionable counts as not valid. A verdict
outside the four spellings, or a sheet without the columns the table needs, is one
:class:`AgreeError` naming the file (and line).
"""
from __future__ import annotations

import csv
import logging
import os
import random
from collections import defaultdict
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Iterable, Sequence

from formats.errors import AgreeError
from formats.files import MANIFEST, as_given, atomic_write_text
from formats.items import Item
from formats.release import read_release, release_files
from formats.spacing import render
from formats.tsv import checked_rows, header_of, one_line
from treebanks.progress import progress

SHEET_FILE = "sheet.tsv"
SHEET_MD = "sheet.md"
RATES_FILE = "valid_rates.tsv"
RATES_MD = "valid_rates.md"
VERDICTS = ("valid", "questionable", "invalid")
_SHORT = {"v": "valid", "q": "questionable", "i": "invalid"}
KINDS = ("original", "nonce")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SheetRow:
    """One pair to judge (the sheet's columns, in order)."""
    id: str              #: ``de-o-03``: language, o(riginal) or n(once), number
    language: str
    kind: str            #: ``original`` or ``nonce``
    relation: str
    feature: str
    value: str           #: the target's value (correct form)
    wrong_value: str     #: the wrong form's value
    cue: str
    good: str            #: the target's correct form
    bad: str             #: its wrong form
    wrong_source: str    #: where the wrong form came from (the release's field)
    sentence_good: str   #: cue in [brackets], target in {braces}
    sentence_bad: str
    item_id: str
    variant: int
    verdict: str = ""
    note: str = ""


SHEET_COLUMNS = tuple(f.name for f in fields(SheetRow))
#: what :func:`read_sheet` needs of a sheet
REQUIRED = ("id", "language", "kind", "verdict")


@dataclass(frozen=True)
class RateRow:
    """Verdicts of one language (``all``: every language) and kind."""
    language: str
    kind: str
    judged: int
    valid: int
    questionable: int
    invalid: int

    @property
    def rate(self) -> float:
        return self.valid / self.judged if self.judged else 0.0


# --------------------------------------------------------------------------- drawing

def draw_sheet(release: str | os.PathLike, n_orig: int = 15, n_nonce: int = 5, seed: int = 1,
               languages: Sequence[str] = (), progress=None) -> list[SheetRow]:
    """The sample of the module docstring, languages in code order, originals first.
    ``languages``: only these (empty: all). ``progress``: called with each pairs
    file once it is read."""
    rng = random.Random(seed)
    files = release_files(release)
    if not files:
        raise AgreeError(f"{release}: no pairs.jsonl in it or in its language directories")
    wanted = set(languages)
    quota = {"original": n_orig, "nonce": n_nonce}
    reservoirs: dict[tuple, list] = {}
    seen: dict[tuple, int] = defaultdict(int)
    for f in files:
        # a release's language directories are named by their codes: the others are not read
        if not wanted or len(files) == 1 or f.parent.name in wanted:
            _sample(read_release(f), wanted, quota, reservoirs, seen, rng)
        if progress is not None:
            progress(f)
    return _allocate(reservoirs, quota, rng)


def _sample(items: Iterable[Item], wanted: set, quota: dict, reservoirs: dict, seen: dict,
            rng: random.Random) -> None:
    """Algorithm R over ``items``, one reservoir per (language, kind, relation, feature)."""
    for item in items:
        lang = item.extra["language"]
        if wanted and lang not in wanted:
            continue
        kind = "original" if item.variant == 0 else "nonce"
        k = quota[kind]
        if not k:
            continue
        key = (lang, kind, item.relation, item.feature)
        seen[key] += 1
        box = reservoirs.setdefault(key, [])
        if len(box) < k:
            box.append(item)
        else:
            j = rng.randrange(seen[key])
            if j < k:
                box[j] = item


def _allocate(reservoirs: dict, quota: dict, rng: random.Random) -> list[SheetRow]:
    """Round-robin over each language's strata, in a seeded order (module docstring)."""
    by_group: dict[tuple, list] = defaultdict(list)
    for key in sorted(reservoirs):
        by_group[key[:2]].append(key)
    rows = []
    for lang, kind in sorted(by_group, key=lambda g: (g[0], KINDS.index(g[1]))):
        strata = by_group[lang, kind]
        rng.shuffle(strata)
        pools = [list(reservoirs[s]) for s in strata]
        for pool in pools:
            rng.shuffle(pool)
        picked: list[Item] = []
        while len(picked) < quota[kind] and any(pools):
            for pool in pools:
                if pool and len(picked) < quota[kind]:
                    picked.append(pool.pop())
        picked.sort(key=lambda it: (it.relation, it.feature, it.item_id, it.variant))
        rows += [sheet_row(it, f"{lang}-{kind[0]}-{k:02d}") for k, it in enumerate(picked, start=1)]
    return rows


def sheet_row(item: Item, row_id: str) -> SheetRow:
    """One release item as a sheet row (cue and target marked)."""
    return SheetRow(row_id, item.extra["language"], "original" if item.variant == 0 else "nonce", item.relation,
                    item.feature, item.number, item.wrong_value, item.tokens[item.cue_index], item.correct,
                    item.wrong, item.wrong_source, _marked(item, item.correct), _marked(item, item.wrong),
                    item.item_id, item.variant)


def _marked(item: Item, target: str) -> str:
    words = list(item.tokens)
    words[item.cue_index] = f"[{words[item.cue_index]}]"
    words[item.target_index] = "{" + target + "}"
    return render(words, item.spacing)


# --------------------------------------------------------------------------- the sheet

def write_sheet(rows: Iterable[SheetRow], directory: str | os.PathLike) -> int:
    """``sheet.tsv`` and ``sheet.md`` in ``directory``; returns the rows written."""
    rows = list(rows)
    lines = ["\t".join(SHEET_COLUMNS)]
    lines += ["\t".join(one_line(getattr(r, c)) for c in SHEET_COLUMNS) for r in rows]
    atomic_write_text(Path(directory) / SHEET_FILE, "\n".join(lines) + "\n")
    atomic_write_text(Path(directory) / SHEET_MD, sheet_markdown(rows))
    return len(rows)


def sheet_markdown(rows: Sequence[SheetRow]) -> str:
    """The sheet for reading: a section per language, a block per pair."""
    out = ["# Audit sheet", "",
           "Judge each pair: is the first sentence grammatical and the second not, for the marked reason "
           "alone? Write `valid`, `questionable` or `invalid` (v/q/i) in the `verdict` column of "
           f"`{SHEET_FILE}`, a `note` where useful. Cue in [brackets], target in {{braces}}.", ""]
    lang = None
    for r in rows:
        if r.language != lang:
            lang = r.language
            out += [f"## {lang}", ""]
        out += [f"**{r.id}** · {r.kind} · {r.relation} · {r.feature} {r.value} → {r.wrong_value} · "
                f"cue `{r.cue}` · `{r.good}` → `{r.bad}` (wrong form from `{r.wrong_source}`)", "",
                f"- good: {_md(r.sentence_good)}", f"- bad: {_md(r.sentence_bad)}", ""]
    return "\n".join(out)


def _md(text: str) -> str:
    # the marks shown bold; Markdown's own characters in a sentence stay literal
    escaped = "".join("\\" + ch if ch in "\\`*_<>|#" else ch for ch in text)
    return escaped.replace("{", "**{").replace("}", "}**")


def read_sheet(path: str | os.PathLike) -> list[SheetRow]:
    """A judged ``sheet.tsv`` (module docstring); verdicts normalised to their full
    spelling. Columns other than :data:`REQUIRED` may be missing (read as empty)."""
    path = Path(path)
    if path.is_dir():
        path = path / SHEET_FILE
    try:
        fh = open(path, encoding="utf-8", newline="")
    except OSError as e:
        raise AgreeError(f"{path}: cannot read the sheet ({e.strerror})") from None
    with fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = header_of(reader, path) or []
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise AgreeError(f"{path}: not an audit sheet: no {', '.join(missing)} column "
                             f"(a sheet has {', '.join(SHEET_COLUMNS)})")
        rows = []
        try:
            for lineno, rec in enumerate(checked_rows(reader, path), start=2):
                rows.append(_sheet_row(rec, path, lineno))
        except UnicodeDecodeError as e:
            raise AgreeError(f"{path}: not UTF-8 text ({e.reason})") from None
    return rows


def _sheet_row(rec: dict, path: Path, lineno: int) -> SheetRow:
    if None in rec:
        raise AgreeError(f"{path}:{lineno}: more fields than the header has columns")
    verdict = (rec.get("verdict") or "").strip().lower()
    verdict = _SHORT.get(verdict, verdict)
    if verdict and verdict not in VERDICTS:
        raise AgreeError(f"{path}:{lineno}: unknown verdict {rec['verdict']!r} (expected valid, questionable "
                         "or invalid, or v, q, i; empty: not judged)")
    kind = rec.get("kind") or ""
    if kind not in KINDS:
        raise AgreeError(f"{path}:{lineno}: unknown kind {kind!r} (expected original or nonce)")
    variant = (rec.get("variant") or "0").strip()
    values = {c: (rec.get(c) or "") for c in SHEET_COLUMNS}
    return SheetRow(**{**values, "variant": int(variant) if variant.isdigit() else 0, "verdict": verdict})


def valid_rates(rows: Iterable[SheetRow]) -> list[RateRow]:
    """Per language and kind, then ``all`` languages: judged rows and their verdicts."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        if not r.verdict:
            continue
        for lang in (r.language, "all"):
            counts[lang, r.kind][VERDICTS.index(r.verdict)] += 1
    order = sorted(counts, key=lambda k: (k[0] == "all", k[0], KINDS.index(k[1])))
    return [RateRow(lang, kind, sum(counts[lang, kind]), *counts[lang, kind]) for lang, kind in order]


RATE_COLUMNS = ("language", "kind", "judged", "valid", "questionable", "invalid", "valid_rate")


def rates_tsv(rates: Sequence[RateRow]) -> str:
    lines = ["\t".join(RATE_COLUMNS)]
    lines += [f"{r.language}\t{r.kind}\t{r.judged}\t{r.valid}\t{r.questionable}\t{r.invalid}\t{r.rate:.4f}"
              for r in rates]
    return "\n".join(lines) + "\n"


def rates_markdown(rates: Sequence[RateRow], unjudged: int) -> str:
    out = ["# Audit: valid rate per language", "",
           "Questionable counts as not valid." + (f" {unjudged} rows without a verdict are left out." if unjudged
                                                  else ""), "",
           "| language | kind | judged | valid | questionable | invalid | valid rate |",
           "|---|---|---:|---:|---:|---:|---:|"]
    out += [f"| {r.language} | {r.kind} | {r.judged} | {r.valid} | {r.questionable} | {r.invalid} | "
            f"{100 * r.rate:.1f}% |" for r in rates]
    return "\n".join(out) + "\n"


def write_rates(rates: Sequence[RateRow], unjudged: int, directory: str | os.PathLike) -> None:
    atomic_write_text(Path(directory) / RATES_FILE, rates_tsv(rates))
    atomic_write_text(Path(directory) / RATES_MD, rates_markdown(rates, unjudged))


# --------------------------------------------------------------------------- directories

def draw_to_dir(run, release: str | os.PathLike, n_orig: int, n_nonce: int,
                languages: Sequence[str] = ()) -> list[SheetRow]:
    """``agree audit draw``: the sheet of ``release`` (seeded by ``run.seed``) written
    to ``run.out`` with its manifest; returns its rows."""
    run.check_out([release])   # before the release is read: a refused --out costs nothing
    source = run.path(release)
    files = release_files(source)
    with progress(log, desc="audit draw", total=len(files), unit="file") as bar:
        rows = draw_sheet(source, n_orig, n_nonce, run.seed, languages, progress=lambda f: bar.update())
    if not rows:
        raise AgreeError(f"{release}: no pairs to draw" + (f" in {', '.join(languages)}" if languages else ""))
    with run.output_dir([release]) as tmp:
        write_sheet(rows, tmp)
        manifest = Path(source) / MANIFEST
        inputs = [as_given(f, run.root) for f in files + ([manifest] if manifest.is_file() else [])]
        run.write_manifest(tmp, inputs, {"n_orig": n_orig, "n_nonce": n_nonce, "seed": run.seed,
                                         "languages": list(languages)},
                           counts={k: sum(r.kind == k for r in rows) for k in KINDS},
                           languages=sorted({r.language for r in rows}))
    return rows


def read_to_dir(run, sheet: str | os.PathLike) -> tuple[list[RateRow], int]:
    """``agree audit read``: the valid-rate table of a judged sheet written to
    ``run.out``; returns the table and the number of rows without a verdict."""
    run.check_out([sheet])
    rows = read_sheet(run.path(sheet))
    rates = valid_rates(rows)
    unjudged = sum(not r.verdict for r in rows)
    if not rates:
        raise AgreeError(f"{sheet}: no row has a verdict yet (write valid, questionable or invalid "
                         "in the verdict column)")
    with run.output_dir([sheet]) as tmp:
        write_rates(rates, unjudged, tmp)
        run.write_manifest(tmp, [sheet], {}, judged=sum(r.judged for r in rates if r.language != "all"),
                           unjudged=unjudged)
    return rates, unjudged
