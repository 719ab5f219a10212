"""What ``agree export`` writes, as a library verb: test items as BLiMP jsonl or
MultiBLiMP TSV minimal pairs, with manifest.json."""
from __future__ import annotations

import logging
from typing import Sequence

from formats.run import RunContext
from formats.scored import condition
from formats.testsets import load_testset, testset_inputs
from formats.testsets.registry import get_format, registered

log = logging.getLogger(__name__)

#: the formats that have a writer (the test-set registry's)
FORMATS = tuple(f.name for f in registered() if f.write is not None)


def export_to_dir(run: RunContext, testsets: Sequence[str], fmt: str, *, lang: str = "") -> dict[str, int]:
    """Write every item of ``testsets`` (anything ``agree score`` reads) as one pair
    into ``run.out`` (atomically, under the --out policy): ``fmt`` blimp, one
    <paradigm>.jsonl per construction and condition; multiblimp, one
    <condition>.tsv (``lang``: its lang column). Returns pairs per file written."""
    with run.output_dir(testsets) as tmp:
        items = []
        for t in testsets:
            ts = load_testset(t)
            log.info(f"{ts.label}: {ts.kind} test set, {len(ts.items)} items")
            for skipped in ts.notes:   # pairs the reader dropped (identical sentences): said, even with --quiet
                log.warning(f"Warning: {skipped}")
            if not ts.items:   # as agree nonce and perturb say it: an empty output is not a silent one
                log.warning(f"Warning: {ts.label}: the test set has no items, so there is nothing to export")
            items += ts.items
        counts = get_format(fmt).write(items, tmp, condition, lang=lang)
        inputs = [p for t in testsets for p in testset_inputs(t)]
        run.write_manifest(tmp, list(dict.fromkeys(inputs)),
                           {"testsets": list(testsets), "format": fmt, "lang": lang},
                           counts={"pairs": sum(counts.values()), "files": counts})
    return counts
