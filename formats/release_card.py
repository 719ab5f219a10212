"""The top of an ``agree extract-all`` output: ``index.tsv`` (one row per language) and
the datasheet ``README.md`` (a dataset card: YAML front matter that ``datasets`` and the
Hugging Face hub read, then the languages, counts, fields, method and the licence of
every source treebank, NonCommercial ones flagged). Both are written from records, in
a fixed order and without a date, so that a seed gives the same bytes.

``index.tsv`` columns (tab-separated, header first):

=================== ===============================================================
language            UD language code
name                the language's name (TREEBANKS.md or the UD_ folder), or empty
treebanks           its treebanks, comma-separated (``it_isdt,it_partut``)
sentences           sentences read
items               original items (treebank sentences)
items_with_nonce    items that got nonce variants
nonce_variants      nonce variants in all
<relation>_<feature> items per relation and feature (``subj_verb_number`` ...;
                    layered features such as ``Number[subj]`` count as their feature)
scored_by_sentence  items whose target precedes its cue (compare whole sentences)
<count>             :data:`COUNT_COLUMNS`, each summed over the language's relations and
                    features (relations.tsv has them per relation x feature): the
                    filters' drops (``low_agreement_rate`` ... ``ambiguous_cue``,
                    docs/relations.md), ``wrong_generated`` (items whose wrong form the
                    reinflection model generated) and ``correct_more_frequent`` (items
                    whose correct form is the more frequent in the treebanks)
license             the treebanks' licences (``it_isdt: CC BY-NC-SA 3.0; ...``)
noncommercial       ``yes`` when a treebank's licence is NonCommercial, else ``no``
reason              for a language without items, why (one line); for a language that
                    failed, ``failed:`` and the error
notes               what a reader should know (treebanks spelling a paradigm cell
                    differently), else empty
=================== ===============================================================
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from formats.errors import AgreeError, names_undecodable
from formats.release import FIELD_DOCS, PAIRS_FILE, PARQUET_FILE
from formats.tsv import checked_rows, header_of, one_line

INDEX_FILE = "index.tsv"
DATASHEET_FILE = "README.md"
FAILED = "failed: "
#: per-language counts written after ``scored_by_sentence`` (module docstring)
COUNT_COLUMNS = ("low_agreement_rate", "noncontrolling_case", "same_spelling", "spelling_variant", "elision",
                 "other_feature_difference", "syncretism", "ambiguous_cue", "wrong_generated",
                 "correct_more_frequent")


def cell_column(relation: str, feature: str) -> str:
    """``("subj-verb", "Number")`` -> ``subj_verb_number``."""
    return f"{relation}_{feature}".replace("-", "_").lower()


@dataclass(frozen=True)
class IndexRow:
    """One language of the run (the columns of ``index.tsv``; ``cells``: items per
    (relation, feature), in the run's cell order)."""
    language: str
    name: str
    treebanks: tuple[str, ...]
    sentences: int = 0
    items: int = 0
    items_with_nonce: int = 0
    nonce_variants: int = 0
    cells: dict = field(default_factory=dict)
    scored_by_sentence: int = 0
    counts: dict = field(default_factory=dict)  #: :data:`COUNT_COLUMNS` -> count
    license: str = ""
    noncommercial: bool = False
    reason: str = ""
    notes: str = ""

    @property
    def failed(self) -> bool:
        return self.reason.startswith(FAILED)


def index_columns(cells: Sequence[tuple[str, str]]) -> list[str]:
    return (["language", "name", "treebanks", "sentences", "items", "items_with_nonce", "nonce_variants"]
            + [cell_column(r, f) for r, f in cells]
            + ["scored_by_sentence", *COUNT_COLUMNS, "license", "noncommercial", "reason", "notes"])


def write_index(path: str | os.PathLike, rows: Sequence[IndexRow], cells: Sequence[tuple[str, str]]) -> int:
    """Write ``index.tsv`` (module docstring), rows in the order given; returns the rows."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(index_columns(cells)) + "\n")
        for r in rows:
            values = [r.language, r.name, ",".join(r.treebanks), r.sentences, r.items, r.items_with_nonce,
                      r.nonce_variants, *[r.cells.get(c, 0) for c in cells], r.scored_by_sentence,
                      *[r.counts.get(k, 0) for k in COUNT_COLUMNS], r.license,
                      "yes" if r.noncommercial else "no", r.reason, r.notes]
            fh.write("\t".join(one_line(v) for v in values) + "\n")
    return len(rows)


@names_undecodable   # the CLI's own line would name the release, not the file
def read_index(path: str | os.PathLike) -> list[dict[str, str]]:
    """``index.tsv`` as one dict per language (column -> text)."""
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = header_of(reader, path)
        if not header or header[0] != "language":
            raise AgreeError(f"{path}: not an agree extract-all index.tsv (its first column is not language)")
        return [dict(row) for row in checked_rows(reader, path)]


# --------------------------------------------------------------------------- the datasheet

@dataclass(frozen=True)
class TreebankCard:
    """A source treebank as the datasheet lists it."""
    name: str
    language: str
    language_name: str
    repository: str
    commit: str
    license: str
    noncommercial: bool
    files: tuple[str, ...]


@dataclass(frozen=True)
class ReleaseCard:
    """What the datasheet says: the source folder (as named), the rows of index.tsv,
    the treebanks, the (relation, feature) cells, the run's parameters (``seed``,
    ``n``...), the command that makes it again, agree's version, whether Parquet files
    were written."""
    source: str
    rows: tuple[IndexRow, ...]
    treebanks: tuple[TreebankCard, ...]
    cells: tuple[tuple[str, str], ...]
    parameters: dict
    command: str
    version: str
    parquet: bool


def write_datasheet(path: str | os.PathLike, card: ReleaseCard) -> None:
    """Write the datasheet ``README.md`` of a release."""
    Path(path).write_text(datasheet(card), encoding="utf-8", newline="")


#: the datasheet's last sections (the same for every release)
ENDING = """## Limitations

- The pairs are as good as the treebanks' annotation: an agreement arc or a feature the
  annotators got wrong gives a wrong pair. `relations.tsv` counts the arcs whose ends
  disagree (annotation noise or real exceptions) for each language.
- A wrong form is a form the treebanks of the language attest for the same lemma
  and part of speech with the other value; small treebanks attest few forms, so many
  agreeing arcs give no pair (`no_alternative` in `relations.tsv`).
- Pairs whose target precedes its cue (`scoring` `sentence`) must be compared as whole
  sentences: the prefix before the target holds no cue.
- Nonce variants keep the grammar and drop the meaning: every content word is replaced by
  a treebank word with the same part of speech and features.

## Citation

Universal Dependencies (de Marneffe, Manning, Nivre and Zeman 2021, *Computational
Linguistics* 47(2)) and each treebank's own reference (its repository's README); the
relation method follows MultiBLiMP (Jumelet, Weissweiler and Bisazza 2025), the nonce
variants Gulordava et al. (2018, NAACL).
"""


def datasheet(card: ReleaseCard) -> str:
    with_items = [r for r in card.rows if r.items]
    items = sum(r.items for r in card.rows)
    variants = sum(r.nonce_variants for r in card.rows)
    nc = [t for t in card.treebanks if t.noncommercial]
    parts = [_front_matter(card, with_items), f"""# Agreement minimal pairs from Universal Dependencies

{len(with_items)} languages, {items:,} minimal pairs mined from the treebanks of `{card.source}`
({len(card.treebanks)} treebanks, {len(card.rows)} languages read) and {variants:,} "colorless green"
nonce variants of them: {items + variants:,} rows. Each pair is a treebank sentence and the same
sentence with one word in the wrong agreement form (subject-verb, subject-predicate,
determiner-noun, adjective-noun agreement in Number, Person and Gender). Made by agree
{card.version} with `{card.command}`.

{_nc_line(nc)}

## Loading

```python
from datasets import load_dataset
pairs = load_dataset("json", data_files="RELEASE/*/{PAIRS_FILE}", split="train")      # every language
italian = load_dataset("json", data_files="RELEASE/it/{PAIRS_FILE}", split="train")
```

`RELEASE` is this folder. Each language's folder holds `{PAIRS_FILE}`{f" and `{PARQUET_FILE}` (the same rows)" if card.parquet else ""},
its original items as agree writes them (`items.tsv`), the counts of what was mined and
left out (`relations.tsv`), its paradigm table (`paradigms.tsv`) and `manifest.json`.
`index.tsv` has one row per language; `agree score RELEASE --model MODEL` scores the
release (or one language's folder, or one `{PAIRS_FILE}`).

## Languages

{_language_table(card.rows)}

{_cell_totals(card)}

## What was left out, by filter

Each filter's drops per language (summed over relations and features; `relations.tsv`
has them per relation x feature), the share of pairs whose wrong form the reinflection
model generated (a rule class at least 95% right on held-out cells), and the share whose
correct form is the more frequent of the two in the language's treebanks. A relation x
feature under 90% agreement in the treebanks gives no pairs (`low_agreement_rate`); a
wrong form may differ from the correct one only in the contrasted feature, except
Gender and Animacy absent from one of them when Number is contrasted (the plural
neutralises gender).

{_filter_table(card.rows)}

## Fields

One row per pair, the treebank sentence (variant 0) first, then its nonce variants.

| field | |
|---|---|
{chr(10).join(f"| `{name}` | {doc} |" for name, doc in FIELD_DOCS.items())}

## How the pairs were made

{_method(card)}

## Source treebanks and their licences

Each pair's `license` field is its treebank's. NonCommercial (NC) licences allow research
use only: leave those rows out (`pairs.filter(lambda r: "NC" not in r["license"])`) for
any commercial use. Where the folder's sources disagree, every reading is given and the
stricter one counts.

| treebank | language | repository | commit | licence | NC | files |
|---|---|---|---|---|---|---|
{chr(10).join(_treebank_row(t) for t in card.treebanks)}

## Languages without pairs

{_without(card.rows)}

{ENDING}"""]
    return "".join(parts)


def _front_matter(card: ReleaseCard, with_items: list[IndexRow]) -> str:
    configs = [("all", f"*/{PAIRS_FILE}")] + [(r.language, f"{r.language}/{PAIRS_FILE}") for r in with_items]
    lines = ["---", "pretty_name: Agreement minimal pairs from Universal Dependencies", "license: other",
             "multilinguality: multilingual", "language:"]
    # quoted: YAML 1.1 (PyYAML, as datasets reads the card) takes a bare `no` (Norwegian) for false
    lines += [f'- "{r.language}"' for r in with_items]
    lines += ["tags:", "- minimal-pairs", "- agreement", "- universal-dependencies", "configs:"]
    for name, files in configs:
        lines += [f'- config_name: "{name}"', f'  data_files: "{files}"'] + (["  default: true"] if name == "all" else [])
    return "\n".join(lines) + "\n---\n\n"


def _nc_line(nc: list[TreebankCard]) -> str:
    if not nc:
        return "No source treebank has a NonCommercial licence."
    return (f"**NonCommercial**: {len(nc)} source treebanks have a NonCommercial licence "
            f"({', '.join(t.name for t in nc)}); their rows say so in `license`.")


def _language_table(rows: Sequence[IndexRow]) -> str:
    out = ["| code | language | treebanks | sentences | pairs | with nonce | nonce variants | NC |",
           "|---|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        nonce = f"{r.items_with_nonce / r.items:.0%}" if r.items else "-"
        out.append(f"| {r.language} | {r.name} | {', '.join(r.treebanks)} | {r.sentences:,} | {r.items:,} | "
                   f"{nonce} | {r.nonce_variants:,} | {'NC' if r.noncommercial else ''} |")
    return "\n".join(out)


def _cell_totals(card: ReleaseCard) -> str:
    totals = {c: sum(r.cells.get(c, 0) for r in card.rows) for c in card.cells}
    langs = {c: sum(1 for r in card.rows if r.cells.get(c, 0)) for c in card.cells}
    out = ["Pairs by relation and feature (and the languages that have any):", "",
           "| relation | feature | pairs | languages |", "|---|---|---:|---:|"]
    out += [f"| {r} | {f} | {totals[(r, f)]:,} | {langs[(r, f)]} |" for r, f in card.cells]
    return "\n".join(out)


def _filter_table(rows: Sequence[IndexRow]) -> str:
    """Per language: what each filter dropped, the generated wrong forms' share, the
    share of pairs whose correct form is the more frequent."""
    names = COUNT_COLUMNS[:-2]
    out = ["| code | " + " | ".join(names) + " | generated | correct more frequent |",
           "|---|" + "---:|" * (len(names) + 2)]
    for r in rows:
        if not r.items:
            continue
        c = r.counts
        out.append(f"| {r.language} | " + " | ".join(f"{c.get(k, 0):,}" for k in names)
                   + f" | {c.get('wrong_generated', 0) / r.items:.1%} | {c.get('correct_more_frequent', 0) / r.items:.1%} |")
    return "\n".join(out)


def _method(card: ReleaseCard) -> str:
    p = card.parameters
    distance = f"{p.get('min_distance', 1)}..{p.get('max_distance') or 'any'}"
    return f"""The treebanks of each language are read together (their paradigm tables pooled). An
item is one agreement arc and one feature, read from the annotation as MultiBLiMP does:
`nsubj` to a finite verb or auxiliary (`subj-verb`) or to a predicative adjective or
participle (`subj-pred`), a noun to its `det` determiner (`det-noun`) or `amod` adjective
(`adj-noun`); relations {", ".join(p.get("relations", []))}, features {p.get("features", "")},
distances {distance}. Both ends must carry the feature with the same two-way value
(Sing/Plur; 1/2/3; Masc/Fem/Neut/Com); coordinated, relative, expletive, quantified
subjects and fixed expressions are left out and counted. The wrong form is the target's
lemma with another value of the feature, from the target's own treebank, else the
language's pooled treebanks; its other features must be the target's (agreement
features that co-vary excepted). Nonce variants ({p.get("n")} per pair, seed {p.get("seed")};
each language seeded from it and its code alone) replace every content word of the
sentence by a treebank word with the same part of speech and features, and the target
by another lemma's pair that contrasts the same feature. The method in full:
agree's documentation, relation mining."""


def _treebank_row(t: TreebankCard) -> str:
    name = f"{t.language_name} ({t.language})" if t.language_name else t.language
    return (f"| {t.name} | {name} | {t.repository} | {t.commit} | {t.license} | "
            f"{'**NC**' if t.noncommercial else ''} | {', '.join(t.files)} |")


def _without(rows: Sequence[IndexRow]) -> str:
    lines = [f"- `{r.language}`{f' ({r.name})' if r.name else ''}: {r.reason}" for r in rows if not r.items]
    return "\n".join(lines) if lines else "Every language read gave pairs."
