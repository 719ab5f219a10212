"""``agree export``: our test items as BLiMP jsonl or MultiBLiMP TSV, for other toolkits."""
from __future__ import annotations

import logging

import click

from agreement.extraction.export_dir import FORMATS, export_to_dir
from agreement.options import LANG, out_option, pass_run, quiet_option

log = logging.getLogger(__name__)


@click.command()
@click.argument("testsets", nargs=-1, required=True, metavar="TESTSET...")
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True,
              help="blimp: one <paradigm>.jsonl per construction and condition, BLiMP's fields "
                   "(one_prefix_* included); multiblimp: one <condition>.tsv with MultiBLiMP's "
                   "columns (sen, wrong_sen, phenomenon ...).")
@click.option("--lang", type=LANG, default=None, help="multiblimp: the lang column (default: empty).")
@out_option
@quiet_option
@pass_run("export")
def export(run, testsets, fmt, lang):
    """Write items as BLiMP/MultiBLiMP pairs.

    Write test items (original, nonce, perturbed) as minimal pairs that
    lm-evaluation-harness, minicons or BLiMP's own scripts read.

    TESTSET: anything `agree score` reads. Each item becomes one pair: the
    sentence with the correct form and the same sentence with the wrong form.
    Sentences are the items' words joined by spaces, with sentence-final .?!
    attached to the last word (BLiMP's style); `agree score` reads them back
    into the same words. Extra fields `agree_*` (item id, variant, construction,
    perturbation, attractors ...) let `agree score` restore the items, so the
    accuracies of a round trip equal those of the items themselves; other tools
    ignore them. Writes manifest.json with the counts.

    \b
    Example:
      agree export en-nonce --format blimp --out en-blimp
      agree score en-blimp --model runs/kn5 --method sentence --out en-blimp-scores
    """
    counts = export_to_dir(run, testsets, fmt, lang=lang or "")
    log.info(f"wrote {sum(counts.values())} pairs in {len(counts)} files to {run.out}")
