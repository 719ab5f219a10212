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
from formats.manifest import as_given, atomic_output_dir, rooted, write_manifest
from treebanks.paradigms import PARADIGMS_FILE

FORMATS = ("tsv", "colorlessgreen")


def extract_to_dir(out: str | os.PathLike, treebanks: Sequence[str | os.PathLike], config: ExtractConfig,
                   *, vocab: str | os.PathLike | None = None, fmt: str = "tsv", argv: Sequence[str] = (),
                   force: bool = False, quiet: bool = False,
                   root: str | os.PathLike | None = None) -> ExtractResult:
    """Mine ``treebanks`` with ``config`` and write the extract directory ``out``
    (atomically, under the --out policy). ``vocab``: the vocabulary path behind
    ``config.vocab``, recorded in the manifest; ``argv``: the command line the
    manifest records; ``root``: where relative paths (``out`` included) are read
    and written, recorded as given (:func:`formats.manifest.rooted`)."""
    at = [rooted(root, t) for t in treebanks]
    with atomic_output_dir(rooted(root, out), "extract", [*at, rooted(root, vocab)], force, quiet) as tmp:
        result = extract_items(at, config)
        write_items(tmp / ITEMS_FILE, result.items)
        write_constructions(tmp / CONSTRUCTIONS_FILE, result, config.features)
        result.paradigms.save(tmp / PARADIGMS_FILE)
        if fmt == "colorlessgreen":
            write_colorlessgreen(result.items, tmp, features=config.features,
                                 frequencies=result.paradigms.form_counts())
        files = [as_given(f, root) for f in result.files]
        write_manifest(tmp, "extract", files + ([vocab] if vocab else []),
                       {**config.parameters(), "vocab": None if vocab is None else str(vocab), "format": fmt},
                       counts={"sentences": result.sentences, "tokens": result.tokens,
                               "constructions": len(result.kept), "items": len(result.items)},
                       constructions=[c.name for c in result.kept], filters=result.filters, argv=argv,
                       root=root)
    return result
