"""The page's data: one row per scored pair (an item or one of its nonce variants), in
columns, and the words of each row apart in chunks.

The columns are what the table filters, sorts and counts on every keystroke, so they
ship as typed arrays (base64 of little-endian bytes: a 1.3-million-row run is a few
tens of MB the browser decodes in a fraction of a second, where JSON objects per row
would take seconds to parse). Strings become codes into small dictionaries. The
words (tokens, cue, target, attractors, surprisal) are needed only for the rows on
screen and the one item opened, so they go into chunk files loaded on demand.

Rows are grouped by item: an original and its nonce variants are adjacent, so the
detail view finds an item's variants as one run of rows (``group``).
"""
from __future__ import annotations

import base64
import logging
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from agreement.errors import AgreeError
from agreement.reporting.browse.runs import ScoreDir
from agreement.reporting.humans import HumanIndex
from agreement.scoring.score import sentence_pair
from formats.items import Item
from formats.scored import ScoredTable, condition
from formats.testsets import TestSet
from treebanks.features import parse_feats

log = logging.getLogger(__name__)

#: outcome codes of the per-model column (``o<k>``)
WRONG, RIGHT, UNDECIDABLE, UNSCORED = 0, 1, 2, 3
#: the number column attractors and distance are clipped to (the filters' last bucket)
_CLIP = 255


@dataclass
class PageData:
    """What the page ships: ``meta`` (JSON: dictionaries, models, counts), ``columns``
    (name -> typed array) and ``text`` (per row, the words and marks of the detail)."""
    meta: dict
    columns: dict[str, np.ndarray]
    text: list[list] = field(repr=False)

    def encoded(self) -> dict[str, dict]:
        """Each column as {dtype, base64 of its little-endian bytes}."""
        return {name: {"dtype": a.dtype.newbyteorder("<").str.lstrip("<|"),
                       "b64": base64.b64encode(a.astype(a.dtype.newbyteorder("<")).tobytes()).decode("ascii")}
                for name, a in self.columns.items()}


def model_names(runs: Sequence[ScoreDir]) -> list[tuple[int, str, str]]:
    """(run index, model as the run names it, name on the page) for every model; a model
    name in more than one run is prefixed with its run's directory name (``dir:model``)."""
    owners: dict[str, int] = {}
    for r in runs:
        for m in r.table.models():
            owners[m] = owners.get(m, 0) + 1
    return [(k, m, m if owners[m] == 1 else f"{r.name}:{m}")
            for k, r in enumerate(runs) for m in r.table.models()]


def build_page_data(runs: Sequence[ScoreDir], testsets: Sequence[TestSet],
                    humans: HumanIndex | None = None) -> PageData:
    """The page's rows: every (test set, item, variant, perturbation) a run scored,
    grouped by item; per model its outcome and both log-probabilities."""
    items = {(ts.label, it.item_id, it.variant, it.perturbation): it for ts in testsets for it in ts.items}
    keys = _row_keys(runs)
    missing = [k for k in keys if k not in items]
    if missing:
        t, i, v, _ = missing[0]
        raise _missing_error(runs[0], len(missing), t, i, v)
    row_items = [items[k] for k in keys]
    index = {k: n for n, k in enumerate(keys)}
    models = model_names(runs)
    columns, dicts = _item_columns(keys, row_items)
    if humans is not None:
        share = [humans.lookup(it) for it in row_items]
        columns["human"] = np.array([np.nan if j is None else j.share_correct for j in share], dtype=np.float32)
    for n, (k, name, _) in enumerate(models):
        columns.update(_model_columns(runs[k].table, name, index, len(keys), n))
    meta = {"rows": len(keys), "dicts": dicts,
            "models": [{"name": shown, "run": k, "group": _first(runs[k].table, name, "group"),
                        "kind": _first(runs[k].table, name, "kind")} for k, name, shown in models],
            "groups": int(columns["group"].max()) + 1 if len(keys) else 0,
            "humans": humans is not None}
    text = [_row_text(it, runs, models, k) for it, k in zip(row_items, keys)]
    return PageData(meta, columns, text)


def _missing_error(run: ScoreDir, n: int, testset: str, item_id: str, variant: int) -> AgreeError:
    return AgreeError(f"{run.path}: {n} scored rows name items its test set no longer has "
                      f"(first: {item_id} variant {variant} of {testset}); the test set changed since it was scored")


def _row_keys(runs: Sequence[ScoreDir]) -> list[tuple[str, str, int, str]]:
    """Every scored (testset, item_id, variant, perturbation), in order of first
    appearance, the rows of one item (testset, item_id) together."""
    seen: dict[tuple, None] = {}
    for r in runs:
        seen.update(dict.fromkeys(r.table.keys()))
    order: dict[tuple[str, str], list] = {}
    for k in seen:
        order.setdefault(k[:2], []).append(k)
    return [k for group in order.values() for k in group]


def _codes(values: list[str], dtype=np.uint16) -> tuple[np.ndarray, list[str]]:
    """Values as codes into their dictionary (in order of first appearance)."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    kind = np.uint8 if len(index) <= 256 else dtype
    return codes.astype(kind), list(index)


def _item_columns(keys, row_items: Sequence[Item]) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """The per-row columns the filters read, and their dictionaries."""
    columns, dicts = {}, {}
    fields = {"language": [language(it) for it in row_items], "relation": [it.relation for it in row_items],
              "feature": [it.feature or ("Number" if not it.relation else "") for it in row_items],
              "construction": [it.construction for it in row_items],
              "condition": [condition(it) for it in row_items], "testset": [k[0] for k in keys]}
    for name, values in fields.items():
        columns[name], dicts[name] = _codes(values)
    columns["attractors"] = np.clip([it.attractors for it in row_items], 0, _CLIP).astype(np.uint8)
    columns["distance"] = np.clip([it.distance for it in row_items], 0, 65535).astype(np.uint16)
    columns["variant"] = np.clip([it.variant for it in row_items], 0, 65535).astype(np.uint16)
    group, _ = _codes([f"{k[0]}\x1f{k[1]}" for k in keys], np.uint32)
    columns["group"] = group.astype(np.uint32)
    return columns, dicts


def language(item: Item) -> str:
    """The item's language: a release row's own, else none known."""
    return str(item.extra.get("language") or "")


def _first(table: ScoredTable, model: str, column: str) -> str:
    i = int(np.flatnonzero(table.model == model)[0])
    return str(getattr(table, column)[i])


def _model_columns(table: ScoredTable, model: str, index: Mapping, n: int, k: int) -> dict[str, np.ndarray]:
    """One model's outcome (:data:`RIGHT` ...), log P(correct) and log P(wrong) per row
    (NaN and :data:`UNSCORED` where it scored none)."""
    rows = np.flatnonzero(table.model == model)
    keys = table.keys()
    at = np.fromiter((index[keys[i]] for i in rows), dtype=np.int64, count=len(rows))
    outcome = np.full(n, UNSCORED, dtype=np.uint8)
    outcome[at] = np.where(table.undecidable[rows], UNDECIDABLE, np.where(table.correct[rows], RIGHT, WRONG))
    lc, lw = np.full(n, np.nan, dtype=np.float32), np.full(n, np.nan, dtype=np.float32)
    lc[at], lw[at] = table.logp_correct[rows], table.logp_wrong[rows]
    return {f"o{k}": outcome, f"lc{k}": lc, f"lw{k}": lw}


def attractor_positions(item: Item) -> list[int]:
    """Words between cue and target with the cue's part of speech and another value of the
    contrasted feature, by the words' own annotation ([] when the item has none: a
    release row carries no POS); the item's ``attractors`` count also weighs a word's
    other analyses, so the marks can be fewer."""
    c, t = item.cue_index, item.target_index
    if not (0 <= c < len(item.pos)) or item.pos[c] in ("_", "") or item.feats[c] in ("_", ""):
        return []
    feature = item.feature or "Number"
    value = parse_feats(item.feats[c]).get(feature)
    if value is None:
        return []
    lo, hi = sorted((c, t))
    return [i for i in range(lo + 1, hi) if item.pos[i] == item.pos[c] and item.feats[i] not in ("_", "")
            and parse_feats(item.feats[i]).get(feature) not in (None, value)]


def _row_text(item: Item, runs: Sequence[ScoreDir], models, key) -> list:
    """One row's words for the detail: [item_id, words, spaces ("0"/"1" per word), cue,
    target, wrong form, attractor positions, the wrong sentence's words when it is not
    the correct one with the wrong form at the target (else 0), per-model surprisal
    {model number: [correct, wrong]} (else 0), lemma, value, wrong value]."""
    if "wrong_tokens" not in item.extra and len(item.tokens) > item.target_index:
        # sentence_pair's own rule for the common case, without its two Words per row
        words, spaces, bad = list(item.tokens), item.spacing, 0
        words[item.target_index] = item.correct
    else:
        good, wrong = sentence_pair(item)
        words = list(good)
        spaces = good.space_after if good.space_after is not None else [True] * len(words)
        plain = list(words)
        plain[item.target_index] = item.wrong
        bad = 0 if list(wrong) == plain else list(wrong)
    surprisal = {}
    for n, (k, name, _) in enumerate(models):
        table = runs[k].surprisal
        if table:
            pair = [table.get((key[0], key[1], key[2], name, s)) for s in ("correct", "wrong")]
            if pair[0] is not None:
                surprisal[n] = [[round(x, 2) if math.isfinite(x) else None for x in p] if p is not None else None
                                for p in pair]
    return [item.item_id, words, "".join("1" if s else "0" for s in spaces), item.cue_index,
            item.target_index, item.wrong, attractor_positions(item),
            bad, surprisal or 0, item.lemma,
            item.number, item.wrong_value]
