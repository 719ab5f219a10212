"""The multilingual release of ``agree extract-all``: minimal pairs as JSON Lines
(``pairs.jsonl``, one file per language) and, where ``pyarrow`` is installed, the same
rows as Parquet (``pairs.parquet``). This module owns both (writer and reader); the
datasheet and ``index.tsv`` beside them are :mod:`formats.release_card`'s.

One row per (item, variant), the original (variant 0) first, then its nonce
variants; keys sorted, UTF-8 as written (``ensure_ascii=False``), so that a seed gives
the same bytes. The fields (:data:`FIELD_DOCS` says what each holds; the datasheet
lists them) are BLiMP's and MultiBLiMP's where they have one (``sentence_good``,
``sentence_bad``, ``one_prefix_prefix``, ``one_prefix_word_good``/``_bad``,
``one_prefix_method``), and the language, treebank, sentence id, relation, feature,
distance, attractors and variant of each pair.

:func:`read_release` turns rows back into :class:`formats.items.Item` records (what
``agree score`` reads): the construction is ``<language> <relation> <feature>``, so
that every table breaks down by language.
"""
from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from formats.errors import AgreeError
from formats.item_checks import item_problem
from formats.items import Item
from formats.jsonl import json_lines
from formats.spacing import render, spacing_of

PAIRS_FILE = "pairs.jsonl"
PARQUET_FILE = "pairs.parquet"
#: what each field holds (the datasheet's table)
FIELD_DOCS = {
    "sentence_good": "the grammatical sentence, as the treebank writes it (a nonce variant: its words replaced)",
    "sentence_bad": "the same sentence with the target in its wrong form",
    "one_prefix_prefix": "the text before the target (BLiMP's name)",
    "one_prefix_word_good": "the target, in its correct form",
    "one_prefix_word_bad": "the target's wrong form",
    "one_prefix_method": "true when the prefix decides the pair (its cue precedes the target); false: compare "
                         "the whole sentences",
    "scoring": "`target` or `sentence`: the same choice in agree's words",
    "language": "UD language code (`it`)",
    "treebank": "the source treebank (`it_isdt`)",
    "split": "the treebank file's split (`test`, `dev`, `train`)",
    "sentence_id": "the treebank's `sent_id`",
    "item_id": "agree's id of the pair, unique in the release: `<file>:<sent_id>:<cue>-<target>:<feature>`",
    "variant": "0 = the treebank sentence, 1..n = nonce variants",
    "perturbation": "`original` or `nonce`",
    "relation": "`subj-verb`, `subj-pred`, `det-noun` or `adj-noun`",
    "feature": "`Number`, `Person`, `Gender`, or a verb's subject layer (`Number[subj]`)",
    "value": "the target's value of the feature (`Sing`)",
    "wrong_value": "the wrong form's value (`Plur`)",
    "distance": "words from cue to target (1: adjacent)",
    "target_side": "`after` or `before`: where the target stands beside its cue",
    "attractors": "words between cue and target with the cue's part of speech and another value",
    "tokens": "the sentence's words (UD tokens, multiword tokens merged); the indices count them",
    "target_index": "the target's position in `tokens` (0-based)",
    "cue_index": "the cue's position in `tokens`",
    "cue": "the cue word (the subject, or the noun)",
    "lemma": "the target's lemma (a nonce variant's: its replacement pair's)",
    "wrong_source": "where the wrong form was found: a treebank file, `unimorph`, or `paradigms` (nonce pairs)",
    "license": "the source treebank's licence (NonCommercial ones say NC)",
}
#: every row's fields (sorted, as written) and their types
FIELDS = {
    "attractors": int, "cue": str, "cue_index": int, "distance": int, "feature": str, "item_id": str,
    "language": str, "lemma": str, "license": str, "one_prefix_method": bool, "one_prefix_prefix": str,
    "one_prefix_word_bad": str, "one_prefix_word_good": str, "perturbation": str, "relation": str,
    "scoring": str, "sentence_bad": str, "sentence_good": str, "sentence_id": str, "split": str,
    "target_index": int, "target_side": str, "tokens": list, "treebank": str, "value": str,
    "variant": int, "wrong_source": str, "wrong_value": str,
}


@dataclass(frozen=True)
class Source:
    """Where a language's items come from: the language code and, per treebank
    (``it_isdt``), its licence."""
    language: str
    licences: Mapping[str, str]


def split_item_id(item_id: str) -> tuple[str, str, str]:
    """(treebank, split, sentence id) of a relation item's id
    ``<file stem>:<sent_id>:<cue>-<target>:<feature>``; a stem not named as UD names
    files (``xx_tb-ud-test``) is the treebank, with no split."""
    stem, _, rest = item_id.partition(":")
    sent_id = rest.rsplit(":", 2)[0] if rest.count(":") >= 2 else rest
    treebank, sep, split = stem.partition("-ud-")
    return treebank, split if sep else "", sent_id


def release_row(item: Item, source: Source) -> dict:
    """One item (original or variant) as a release row (module docstring)."""
    tokens, spacing, t = item.tokens, item.spacing, item.target_index
    prefix = render(tokens[:t], spacing[:t])       # the two sentences differ at the target only
    before = prefix + (" " if t and spacing[t - 1] else "")
    after = (" " if t < len(tokens) - 1 and spacing[t] else "") + render(tokens[t + 1:], spacing[t + 1:])
    treebank, split, sent_id = split_item_id(item.item_id)
    return {
        "attractors": item.attractors, "cue": item.tokens[item.cue_index], "cue_index": item.cue_index,
        "distance": item.distance, "feature": item.feature, "item_id": item.item_id, "language": source.language,
        "lemma": item.lemma, "license": source.licences.get(treebank, "unknown"),
        "one_prefix_method": item.scoring != "sentence",
        "one_prefix_prefix": prefix, "one_prefix_word_bad": item.wrong,
        "one_prefix_word_good": item.correct, "perturbation": item.perturbation, "relation": item.relation,
        "scoring": item.scoring or "target", "sentence_bad": before + item.wrong + after,
        "sentence_good": before + item.correct + after,
        "sentence_id": sent_id, "split": split, "target_index": t, "target_side": item.target_side,
        "tokens": list(tokens), "treebank": treebank, "value": item.number, "variant": item.variant,
        "wrong_source": item.wrong_source, "wrong_value": item.wrong_value,
    }


def write_pairs(path: str | os.PathLike, rows: Iterable[dict], parquet: str | os.PathLike | None = None) -> int:
    """Write rows as JSON Lines (sorted keys, UTF-8) to ``path`` and, when ``parquet``
    is given, the same rows as Parquet there (:func:`write_parquet`). Rows are
    streamed: a language's rows are never all in memory. Returns the rows written."""
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
    if parquet is not None:
        write_parquet(path, parquet)
    return n


#: bytes of JSON Lines read per Parquet row group (fixed: the same rows give the same file)
PARQUET_BLOCK = 1 << 22


def parquet_available() -> bool:
    """Whether pyarrow is installed (Parquet files are written only then). Found, not
    imported: a run forks its worker processes after asking, and pyarrow starts threads."""
    return importlib.util.find_spec("pyarrow") is not None


def write_parquet(jsonl: str | os.PathLike, path: str | os.PathLike) -> None:
    """The rows of the JSON Lines file ``jsonl`` as one Parquet file (:data:`FIELDS`'
    types, zstd), converted by pyarrow's own reader a block at a time (no Python
    object per row, and no pandas). Needs pyarrow (:func:`parquet_available`)."""
    import pyarrow as pa  # lazy: optional and heavy
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    kinds = {int: pa.int64(), str: pa.string(), bool: pa.bool_(), list: pa.list_(pa.string())}
    schema = pa.schema([(name, kinds[kind]) for name, kind in FIELDS.items()])
    if os.path.getsize(jsonl) == 0:       # a language without items: pyarrow reads no empty stream
        pq.write_table(schema.empty_table(), path, compression="zstd")
        return
    reader = pj.open_json(jsonl, read_options=pj.ReadOptions(block_size=PARQUET_BLOCK, use_threads=False),
                          parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"))
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for batch in reader:
            writer.write_batch(batch)


# --------------------------------------------------------------------------- reading

def release_files(path: str | os.PathLike) -> list[Path]:
    """The pairs files a path names: a ``.jsonl``/``.parquet`` file itself; a language
    directory's ``pairs.jsonl``; a release's (its languages' ``*/pairs.jsonl``, sorted)."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    if (path / PAIRS_FILE).is_file():
        return [path / PAIRS_FILE]
    return sorted(p / PAIRS_FILE for p in path.iterdir() if p.is_dir() and (p / PAIRS_FILE).is_file())


def read_release(path: str | os.PathLike) -> Iterator[Item]:
    """Items of a release, a language directory or one pairs file (JSON Lines, or
    Parquet when pyarrow is installed). A row that is not one is an
    :class:`AgreeError` naming FILE:LINE (Parquet: FILE:row N)."""
    files = release_files(path)
    if not files:
        raise AgreeError(f"{path}: no {PAIRS_FILE} in it or in its language directories")
    for f in files:
        seen: dict[tuple[str, int], str] = {}   # per file: an id starts with its treebank's language code
        rows = _parquet_rows(f) if f.suffix == ".parquet" else _json_rows(f)
        for where, row in rows:
            item = row_item(row, where)
            key = (item.item_id, item.variant)
            if key in seen:   # a pair scored twice would count twice in every table
                raise AgreeError(f"{where}: item {item.item_id} variant {item.variant} again (first at "
                                 f"{seen[key]}); an item id is unique in a release")
            seen[key] = where
            yield item


def _json_rows(path: Path) -> Iterator[tuple[str, dict]]:
    for lineno, row in json_lines(path):
        yield f"{path}:{lineno}", row


def _parquet_rows(path: Path) -> Iterator[tuple[str, dict]]:
    try:
        import pyarrow.parquet as pq  # lazy: optional
    except ImportError:
        raise AgreeError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow), "
                         f"or read {PAIRS_FILE} beside it") from None
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as e:   # pyarrow's ArrowInvalid is a ValueError
        raise AgreeError(f"{path}: not a readable Parquet file ({e})") from None
    for k, row in enumerate(table.to_pylist(), start=1):
        yield f"{path}:row {k}", row


def row_item(row: object, where: str) -> Item:
    """One release row as an Item (the module docstring); an error naming ``where``
    for a row that is not one."""
    if not isinstance(row, dict):
        raise AgreeError(f"{where}: not a JSON object")
    wrong = [f for f, kind in FIELDS.items() if not isinstance(row.get(f), kind)
             or (kind is int and isinstance(row.get(f), bool))]
    if wrong:
        raise AgreeError(f"{where}: not a release row ({', '.join(wrong[:4])}: missing or not "
                         f"{', '.join(FIELDS[f].__name__ for f in wrong[:4])})")
    tokens = tuple(str(w) for w in row["tokens"])
    space_after = spacing_of(row["sentence_good"], tokens)
    if space_after is None:
        raise AgreeError(f"{where}: sentence_good does not spell the tokens in order")
    n = len(tokens)
    item = Item(
        item_id=row["item_id"], variant=row["variant"],
        construction=f"{row['language']} {row['relation']} {row['feature']}", direction="_", tokens=tokens,
        pos=("_",) * n, feats=("_",) * n, correct=row["one_prefix_word_good"], wrong=row["one_prefix_word_bad"],
        lemma=row["lemma"], number=row["value"], cue_index=row["cue_index"], target_index=row["target_index"],
        attractors=row["attractors"], punct=False, perturbation=row["perturbation"], space_after=space_after,
        relation=row["relation"], feature=row["feature"], wrong_value=row["wrong_value"], scoring=row["scoring"],
        wrong_source=row["wrong_source"],
        extra={"language": row["language"], "treebank": row["treebank"], "license": row["license"]})
    if (problem := item_problem(item)) is not None:
        raise AgreeError(f"{where}: not a usable item: {problem}")
    return item
