"""What ``agree extract`` writes, as one library verb (the CLI command and the demo call it).

An extract directory: items.tsv, constructions.tsv, paradigms.tsv, manifest.json,
and with ``fmt="colorlessgreen"`` the paper's generated.text/.gold/.eval/.tab.
"""
from __future__ import annotations

import os
from typing import Sequence

from agreement.extraction.extract import CONSTRUCTIONS_FILE, ExtractConfig, ExtractResult, extract_items, write_constructions
from formats.testsets.colorlessgreen import write_colorlessgreen
from formats.items import ITEMS_FILE, write_items
from formats.run import RunContext
from treebanks.paradigms import PARADIGMS_FILE

FORMATS = ("tsv", "colorlessgreen")


def extract_to_dir(run: RunContext, treebanks: Sequence[str | os.PathLike], config: ExtractConfig,
                   *, vocab: str | os.PathLike | None = None, fmt: str = "tsv") -> ExtractResult:
    """Mine ``treebanks`` with ``config`` and write the extract directory ``run.out``
    (atomically, under the --out policy). ``vocab``: the vocabulary path behind
    ``config.vocab``, recorded in the manifest. Paths are read from ``run.root`` and
    recorded as given."""
    at = [run.path(t) for t in treebanks]
    with run.output_dir([*treebanks, vocab]) as tmp:
        result = extract_items(at, config)
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
                                   "constructions": len(result.kept), "items": len(result.items)},
                           constructions=[c.name for c in result.kept], filters=result.filters)
    return result
