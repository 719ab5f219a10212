"""What ``agree export`` writes, as a library verb: test items as BLiMP jsonl or
MultiBLiMP TSV minimal pairs, with manifest.json."""
from __future__ import annotations

import os
from typing import Sequence

from agreement.options import log, warn
from formats.manifest import atomic_output_dir, write_manifest
from formats.scored import condition
from formats.testsets import load_testset, testset_inputs
from formats.testsets.registry import get_format, registered

#: the formats that have a writer (the test-set registry's)
FORMATS = tuple(f.name for f in registered() if f.write is not None)


def export_to_dir(out: str | os.PathLike, testsets: Sequence[str], fmt: str, *, lang: str = "",
                  argv: Sequence[str] = (), force: bool = False, quiet: bool = False) -> dict[str, int]:
    """Write every item of ``testsets`` (anything ``agree score`` reads) as one pair
    into ``out`` (atomically, under the --out policy): ``fmt`` blimp, one
    <paradigm>.jsonl per construction and condition; multiblimp, one
    <condition>.tsv (``lang``: its lang column). Returns pairs per file written."""
    with atomic_output_dir(out, "export", testsets, force, quiet) as tmp:
        items = []
        for t in testsets:
            ts = load_testset(t)
            log(f"{ts.label}: {ts.kind} test set, {len(ts.items)} items", quiet)
            for skipped in ts.notes:   # pairs the reader dropped (identical sentences): said, even with --quiet
                warn(skipped)
            items += ts.items
        counts = get_format(fmt).write(items, tmp, condition, lang=lang)
        inputs = [p for t in testsets for p in testset_inputs(t)]
        write_manifest(tmp, "export", list(dict.fromkeys(inputs)),
                       {"testsets": list(testsets), "format": fmt, "lang": lang},
                       counts={"pairs": sum(counts.values()), "files": counts}, argv=argv)
    return counts
