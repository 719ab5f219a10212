"""What ``agree extract`` writes, as one library verb (the CLI command and the demo call it).

An extract directory: items.tsv, constructions.tsv, paradigms.tsv, manifest.json,
and with ``fmt="colorlessgreen"`` the paper's generated.text/.gold/.eval/.tab. In
relations mode: items.tsv, relations.tsv (:func:`agreement.extraction.relations.write_relations`),
paradigms.tsv (pooled over every treebank of the run, plus the cells a lexicon
filled), manifest.json (with the relation counts, the values left out of the
contrast, and, with no items, the reason).
"""
from __future__ import annotations

import os
from typing import Sequence

from agreement.errors import AgreeError
from agreement.extraction.constructions import CONSTRUCTIONS_FILE, write_constructions
from agreement.extraction.extract import ExtractConfig, ExtractResult, extract_items
from agreement.extraction.relations import RELATIONS_FILE, reason_text, write_relations
from formats.testsets.colorlessgreen import write_colorlessgreen
from formats.items import ITEMS_FILE, write_items
from formats.run import RunContext
from treebanks.paradigms import PARADIGMS_FILE

FORMATS = ("tsv", "colorlessgreen")


def extract_to_dir(run: RunContext, treebanks: Sequence[str | os.PathLike], config: ExtractConfig,
                   *, vocab: str | os.PathLike | None = None, fmt: str = "tsv",
                   paradigms: Sequence[str | os.PathLike] = (), lexicon: str | os.PathLike | None = None) -> ExtractResult:
    """Mine ``treebanks`` with ``config`` and write the extract directory ``run.out``
    (atomically, under the --out policy). ``vocab``: the vocabulary path behind
    ``config.vocab``, recorded in the manifest; ``paradigms``, ``lexicon``: the
    relation miner's extra paradigm sources. Paths are read from ``run.root`` and
    recorded as given."""
    if config.mode == "relations":
        if fmt != "tsv":
            raise AgreeError("{format} colorlessgreen writes the paper's construction items; relation "
                             "items are written as items.tsv only", fields=True)
        return _relations_to_dir(run, treebanks, config, vocab, paradigms, lexicon)
    at = [run.path(t) for t in treebanks]
    with run.output_dir([*treebanks, vocab]) as tmp:
        result = extract_items(at, config, paradigms=paradigms, lexicon=lexicon)
        write_items(tmp / ITEMS_FILE, result.items)
        write_constructions(tmp / CONSTRUCTIONS_FILE, result, config.features)
        result.paradigms.save(tmp / PARADIGMS_FILE)
        if fmt == "colorlessgreen":
            write_colorlessgreen(result.items, tmp, features=config.features,
                                 frequencies=result.paradigms.form_counts())
        files = [run.given(f) for f in result.files]
        run.write_manifest(tmp, files + ([vocab] if vocab else []),
                           {**config.parameters(), "vocab": None if vocab is None else str(vocab), "format": fmt},
                           counts={"sentences": result.sentences, "tokens": result.tokens,
                                   "constructions": len(result.report.kept), "items": len(result.items)},
                           constructions=[c.name for c in result.report.kept], filters=result.filters)
    return result


def _relations_to_dir(run: RunContext, treebanks, config: ExtractConfig, vocab, paradigms, lexicon) -> ExtractResult:
    with run.output_dir([*treebanks, *paradigms, lexicon, vocab]) as tmp:
        result = extract_items([run.path(t) for t in treebanks], config,
                               paradigms=[run.path(p) for p in paradigms],
                               lexicon=None if lexicon is None else run.path(lexicon))
        write_items(tmp / ITEMS_FILE, result.items)
        write_relations(tmp / RELATIONS_FILE, result)
        result.paradigms.save(tmp / PARADIGMS_FILE)
        files = [run.given(f) for f in result.files] + list(paradigms) + ([lexicon] if lexicon else [])
        counts = {"sentences": result.sentences, "tokens": result.tokens, "items": len(result.items)}
        run.write_manifest(tmp, files + ([vocab] if vocab else []),
                           {**config.parameters(), "vocab": None if vocab is None else str(vocab),
                            "paradigms": [str(p) for p in paradigms], "lexicon": None if lexicon is None else str(lexicon)},
                           counts=counts, filters=result.filters,
                           relations=[{"relation": r, "feature": f, **c} for (r, f), c in result.report.counts.items()],
                           excluded_values=result.report.excluded_values, reason=reason_text(result.reason), notes=list(result.notes))
    return result
