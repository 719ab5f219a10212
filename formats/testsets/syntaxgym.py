"""SyntaxGym test suites (Hu et al. 2020; cpllab/syntactic-generalization, syntaxgym-core)
as published: one JSON document per suite with ``meta`` (``name``, ``metric``),
``region_meta`` (region number -> name), ``predictions`` (formulas over region
surprisals, :mod:`.sgformula`) and ``items``, each with its ``conditions``, each a list
of ``regions`` (``region_number``, ``content``).

Read into a :class:`Suite` (regions and conditions kept; the predictions parsed and
checked against the suite's regions and conditions), which ``agree score`` evaluates
item by item as SyntaxGym does (:mod:`agreement.scoring.syntaxgym`), and into whole-sentence
minimal pairs beside them: every comparison of one region across two conditions in a
prediction, ``(6;%match_sing%) < (6;%mismatch_sing%)``, pairs the condition expected
less surprising (grammatical) with the other, item by item. A pair's construction is
the suite's name, its id ``suite:item:good>bad``, its number ``Sing``/``Plur`` when the
grammatical condition's name says ``sing``/``plur``. A sentence is its regions'
contents joined by spaces, as SyntaxGym joins them (empty regions left out).

Errors name FILE:LINE: the line of the prediction or item in the JSON text.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from formats.errors import AgreeError
from formats.items import Item
from formats.testsets.blimp import PairSkips, pair_item
from formats.testsets.registry import TestSet, TestSetFormat, files_in, must_exist, register
from formats.testsets.sgformula import FormulaError, Node, comparisons, parse_formula, references
from formats.testsets.sniff import describe

METRICS = ("sum", "mean")


@dataclass(frozen=True)
class Prediction:
    index: int
    formula: str
    node: Node
    line: int


@dataclass(frozen=True)
class SuiteItem:
    """One item: condition -> ((region number, content), ...) in region order."""
    number: int
    conditions: dict


@dataclass(frozen=True)
class Suite:
    name: str
    path: Path
    metric: str
    regions: dict          # region number -> name
    items: tuple[SuiteItem, ...]
    predictions: tuple[Prediction, ...]


def _line_of(text: str, needle: str, start: int = 0) -> int:
    pos = text.find(needle, start)
    return text.count("\n", 0, pos) + 1 if pos >= 0 else 1


def _item(raw, path: Path, text: str, k: int) -> SuiteItem:
    number = raw.get("item_number", k + 1) if isinstance(raw, dict) else None
    line = _line_of(text, f'"item_number": {number}') if number is not None else 1
    where = f"{path}:{line}: item {number if number is not None else k + 1}"
    if not isinstance(raw, dict) or not isinstance(raw.get("conditions"), list):
        raise AgreeError(f"{where}: not a SyntaxGym item (it needs a list of conditions)")
    conditions = {}
    for c in raw["conditions"]:
        regions = c.get("regions") if isinstance(c, dict) else None
        if not isinstance(regions, list) or not isinstance(c.get("condition_name"), str):
            raise AgreeError(f"{where}: a condition without condition_name or regions")
        try:
            conditions[c["condition_name"]] = tuple(sorted((int(r["region_number"]), str(r["content"]))
                                                           for r in regions))
        except (KeyError, TypeError, ValueError):
            raise AgreeError(f"{where}, condition {c['condition_name']!r}: a region without "
                             "region_number or content") from None
    return SuiteItem(int(number), conditions)


def read_suite(path: Path) -> Suite:
    """One suite file (module docstring); :class:`AgreeError` naming FILE:LINE."""
    text = path.read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise AgreeError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        raise AgreeError(f"{path}:1: not a SyntaxGym suite (no list of items; the file is {describe(path)})")
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
    metric = str(meta.get("metric", "sum"))
    if metric not in METRICS:
        line = _line_of(text, '"metric"')
        raise AgreeError(f"{path}:{line}: metric {metric!r} is not one of {', '.join(METRICS)}")
    items = tuple(_item(raw, path, text, k) for k, raw in enumerate(doc["items"]))
    regions = {int(k): str(v) for k, v in (doc.get("region_meta") or {}).items()}
    regions = regions or {n: str(n) for it in items for c in it.conditions.values() for n, _ in c}
    conditions = {c for it in items for c in it.conditions}
    predictions = tuple(_prediction(p, k, path, text, regions, conditions, items)
                        for k, p in enumerate(doc.get("predictions") or []))
    return Suite(str(meta.get("name") or path.stem), path, metric, regions, items, predictions)


def _prediction(raw, k: int, path: Path, text: str, regions: dict, conditions: set, items) -> Prediction:
    formula = raw.get("formula") if isinstance(raw, dict) else None
    line = _line_of(text, json.dumps(formula)[1:-1]) if isinstance(formula, str) else 1
    where = f"{path}:{line}: prediction {k + 1}"
    if not isinstance(formula, str) or raw.get("type", "formula") != "formula":
        raise AgreeError(f"{where}: not a formula prediction ({raw!r:.60})")
    try:
        node = parse_formula(formula)
    except FormulaError as e:
        raise AgreeError(f"{where}: {formula!r}: {e}") from None
    for ref in references(node):
        if ref.condition not in conditions:
            raise AgreeError(f"{where}: {formula!r} names condition {ref.condition!r}, which the suite "
                             f"does not have (conditions: {', '.join(sorted(conditions))})")
        if ref.region is not None and ref.region not in regions:
            raise AgreeError(f"{where}: {formula!r} names region {ref.region}, which the suite does not "
                             f"have (regions: {', '.join(map(str, sorted(regions)))})")
        for it in items:
            if ref.condition not in it.conditions:
                raise AgreeError(f"{where}: item {it.number} has no condition {ref.condition!r}")
    return Prediction(k + 1, formula, node, line)


def sentence(regions) -> str:
    """A condition's sentence: its non-empty regions joined by spaces."""
    return " ".join(c for _, c in regions if c.strip())


def suite_pairs(suite: Suite, skips: PairSkips) -> list[Item]:
    """The whole-sentence minimal pairs the suite's predictions imply (module docstring)."""
    pairs = list(dict.fromkeys(c for p in suite.predictions for c in comparisons(p.node)))
    items = []
    for it in suite.items:
        for good, bad, region in pairs:
            m = re.search(r"sing|plur", good)
            number = {"sing": "Sing", "plur": "Plur"}[m.group(0)] if m else "_"
            item = pair_item(f"{suite.name}:{it.number}:{good}>{bad}", suite.name,
                             sentence(it.conditions[good]), sentence(it.conditions[bad]),
                             extra={"suite": suite.name, "item_number": it.number, "condition": good,
                                    "condition_bad": bad, "region": region},
                             agree={"agree_number": number})
            skips.keep(item, items)
    return items


def _files(path: Path) -> list[Path]:
    return files_in(path, (".json",))


def _recognise(path: Path) -> Path | None:
    """A ``.json`` file (or a directory of them) that starts like a suite."""
    files = _files(path) if path.exists() else []
    if not files or files[0].suffix != ".json" or not files[0].is_file():
        return None
    try:
        with open(files[0], encoding="utf-8") as fh:
            head = fh.read(4096)
    except (OSError, UnicodeDecodeError):
        return None
    return path if '"region_meta"' in head or ('"predictions"' in head and '"meta"' in head) else None


def _read(path: Path, label: str, **_options) -> TestSet:
    files = _files(path)
    if not files or files[0].suffix != ".json":
        raise AgreeError(f"{path}: no .json suite files")
    suites = tuple(read_suite(f) for f in files)
    skips, items = PairSkips(), []
    for s in suites:
        items += suite_pairs(s, skips)
    notes = [f"{label}: {n}" for n in skips.notes()]
    info = [f"{label}: SyntaxGym suite {s.name}: {len(s.items)} items, {len(s.predictions)} prediction(s) "
            f"(evaluated on region surprisals, metric {s.metric}) and "
            f"{sum(it.construction == s.name for it in items)} whole-sentence pairs" for s in suites]
    return TestSet(label, "syntaxgym", tuple(items), notes=tuple(notes), suites=suites, info=tuple(info))


FORMAT = register(TestSetFormat(
    "syntaxgym", "SyntaxGym suites: .json files with regions, conditions and predictions (a file "
    "or a directory)", _recognise, _read, resolve=must_exist,
    files=lambda p: _files(p) if p.exists() else [p], suffixes=(".json",)))
