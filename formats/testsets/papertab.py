"""The paper's tab-separated evaluation files (the ``paper-tab`` test-set format).

Gulordava et al. release, per language, ``generated.tab`` (the test set, two rows per
sentence: the correct and the wrong candidate form) and evaluation outputs with the
same columns plus one column per model (natural-log probability of that candidate
after the prefix) and, for Italian, ``mturk_count`` (raters who chose the candidate).
See ``../shared/data/colorlessgreen/README-evaluation_output.md``.

The files were written with CSV quoting (a field holding ``"`` is quoted and the
quote doubled), so they are read with the csv module's default quoting.

The other test-set formats, and telling them apart: :mod:`formats.testsets`.
"""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from formats.errors import AgreeError
from formats.items import Item
from formats.scored import ScoredTable, empty
from formats.tsv import checked_rows, header_of
from formats.testsets.registry import TestSet, TestSetFormat, register
from formats.testsets.sniff import first_line

#: Columns of the paper's .tab files that are not model outputs.
STANDARD_COLUMNS = ("pattern", "constr_id", "sent_id", "correct_number", "form", "class", "type",
                    "prefix", "n_attr", "punct", "freq", "len_context", "len_prefix", "sent",
                    "full_id", "mturk_count")
_REQUIRED = ("pattern", "constr_id", "sent_id", "form", "class", "type", "prefix")
#: Name of the pseudo-model made from the ``freq`` column (the paper's unigram baseline).
FREQ_MODEL = "unigram[freq]"


@dataclass(frozen=True)
class PaperTable:
    """A paper .tab file, one :class:`Item` per correct/wrong row pair.

    path           the file
    columns        all column names, in file order
    model_columns  the columns holding model outputs (not in :data:`STANDARD_COLUMNS`)
    items          the items, in file order of their first row
    values         column -> per item (value for the correct form, value for the wrong
                   form), for ``freq``, ``mturk_count`` and every model column present
    """
    path: Path
    columns: tuple[str, ...]
    model_columns: tuple[str, ...]
    items: tuple[Item, ...]
    values: dict = field(default_factory=dict)


def _item_from_rows(correct: dict, wrong: dict, where: str) -> Item:
    pattern = correct["pattern"]
    direction, sep, rest = pattern.partition("__")
    if not sep:
        direction, rest = "", pattern
    prefix = tuple(correct["prefix"].split()) if correct["prefix"].strip() else ()
    sent = [w for w in (correct.get("sent") or "").split() if w != "<eos>"]
    # The `sent` column holds the stimulus before the target was swapped in (the README
    # says to ignore it); only its words after the target are kept, to complete the
    # sentence. Scoring looks at the prefix alone. `len_context` counts the cue too
    # (target index - cue index: 4 for "il sofisticato e perfetto | faro").
    tokens = prefix + (correct["form"],) + tuple(sent[len(prefix) + 1:])
    try:
        variant = int(correct["sent_id"])
        attractors = int(correct.get("n_attr") or 0)
        context = int(correct["len_context"]) if correct.get("len_context") else 0
    except ValueError as e:
        raise AgreeError(f"{where}: malformed row ({e})") from None
    number = (correct.get("correct_number") or "").capitalize() or "_"
    return Item(
        item_id=f"{pattern}:{correct['constr_id']}", variant=variant,
        construction=" ".join(rest.split("_")), direction=direction, tokens=tokens,
        pos=("_",) * len(tokens), feats=("_",) * len(tokens), correct=correct["form"],
        wrong=wrong["form"], lemma="_", number=number,
        cue_index=max(len(prefix) - context, 0), target_index=len(prefix),
        attractors=attractors, punct=correct.get("punct") == "True",
        perturbation="original" if correct["type"] == "original" else "nonce",
        extra={"full_id": correct.get("full_id", "")})


def read_paper_tab(path: str | os.PathLike) -> PaperTable:
    """Read a paper .tab file; raises :class:`AgreeError` naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise AgreeError(f"{path}: no such file")
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        columns = tuple(header_of(reader, path) or ())
        missing = [c for c in _REQUIRED if c not in columns]
        if missing:
            raise AgreeError(f"{path}: not a colorlessgreen .tab file (missing columns: "
                             f"{', '.join(missing)})")
        numeric = [c for c in columns if c not in STANDARD_COLUMNS or c in ("freq", "mturk_count")]
        order: list[tuple] = []
        pairs: dict[tuple, dict[str, tuple[int, dict]]] = {}
        for row in checked_rows(reader, path):
            line = reader.line_num
            key = (row["pattern"], row["constr_id"], row["sent_id"])
            if key not in pairs:
                pairs[key] = {}
                order.append(key)
            cls = row["class"]
            if cls not in ("correct", "wrong") or cls in pairs[key]:
                raise AgreeError(f"{path}:{line}: expected one 'correct' and one 'wrong' row per "
                                 f"sentence, got class {cls!r} for {':'.join(key)}")
            pairs[key][cls] = (line, row)
    items, values = [], {c: [] for c in numeric}
    for key in order:
        pair = pairs[key]
        if len(pair) != 2:
            line = next(iter(pair.values()))[0]
            raise AgreeError(f"{path}:{line}: sentence {':'.join(key)} has no "
                             f"{'wrong' if 'correct' in pair else 'correct'} row")
        (lc, c), (lw, w) = pair["correct"], pair["wrong"]
        items.append(_item_from_rows(c, w, f"{path}:{lc}"))
        for col in numeric:
            values[col].append((_number(c[col], path, lc, col), _number(w[col], path, lw, col)))
    model_columns = tuple(c for c in columns if c not in STANDARD_COLUMNS)
    return PaperTable(path, columns, model_columns, tuple(items),
                      {c: tuple(v) for c, v in values.items()})


def _number(text: str | None, path: Path, line: int, column: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise AgreeError(f"{path}:{line}: column {column!r} holds {text!r}, not a number") from None
    if not math.isfinite(value):   # a log-probability or count of nan/inf would become nan accuracies
        raise AgreeError(f"{path}:{line}: column {column!r} holds {text!r}, not a finite number")
    return value


def scores_from_column(table: PaperTable, column: str, testset: str = ""):
    """The log-probabilities of a model column as scored rows (model = column).

    Raises :class:`AgreeError` listing the model columns when ``column`` is absent."""
    if column not in table.model_columns:
        available = ", ".join(table.model_columns) or "none"
        raise AgreeError(f"{table.path}: no model column {column!r} (model columns: {available})")
    values = table.values[column]
    return ScoredTable.of_items(table.items, model=column, group=column, kind="paper-output",
                                logp_correct=[c for c, _ in values], logp_wrong=[w for _, w in values],
                                testset=testset)


def freq_baseline(table: PaperTable, testset: str = ""):
    """The paper's unigram baseline from the ``freq`` column: the more frequent form
    wins, a tie is undecidable (reported apart). ``logp_*`` hold natural-log *counts* (unnormalised: the
    corpus size cancels in the comparison). Empty when the file has no ``freq``."""
    if "freq" not in table.values:
        return empty()
    log = lambda n: math.log(n) if n > 0 else float("-inf")
    values = table.values["freq"]
    return ScoredTable.of_items(table.items, model=FREQ_MODEL, group=FREQ_MODEL, kind="unigram",
                                logp_correct=[log(c) for c, _ in values], logp_wrong=[log(w) for _, w in values],
                                testset=testset)


# --------------------------------------------------------------------------- registry

def _recognise(path: Path) -> Path | None:
    """A file whose header starts with pattern, constr_id, sent_id."""
    if path.is_file() and first_line(path).rstrip("\r\n").split("\t")[:3] == ["pattern", "constr_id", "sent_id"]:
        return path
    return None


def _read(path: Path, label: str, **_options) -> TestSet:
    table = read_paper_tab(path)
    return TestSet(label, "paper-tab", table.items, table)


FORMAT = register(TestSetFormat(
    "paper-tab", "a paper .tab file (generated.tab or an evaluation output with model columns)",
    _recognise, _read, suffixes=(".tab",)))
