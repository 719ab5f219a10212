"""``agree export``: our test items as BLiMP jsonl or MultiBLiMP TSV, for other toolkits."""
from __future__ import annotations

import click

from agreement.options import invocation_argv
from agreement.options import log, out_option, quiet_option


@click.command()
@click.argument("testsets", nargs=-1, required=True, metavar="TESTSET...")
@click.option("--format", "fmt", type=click.Choice(["blimp", "multiblimp"]), required=True,
              help="blimp: one <paradigm>.jsonl per construction and condition, BLiMP's fields "
                   "(one_prefix_* included); multiblimp: one <condition>.tsv with MultiBLiMP's "
                   "columns (sen, wrong_sen, phenomenon ...).")
@click.option("--lang", default="", help="multiblimp: the lang column (default: empty).")
@out_option
@quiet_option
def export(testsets, fmt, lang, out, force, quiet):
    """Write test items (original, nonce, perturbed) as minimal pairs that
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
    from formats.blimp import write_blimp
    from formats.multiblimp import write_multiblimp
    from formats.manifest import atomic_output_dir, write_manifest
    from formats.papertab import detect_testset, load_testset, testset_files
    from formats.scored import condition

    with atomic_output_dir(out, "export", testsets, force, quiet) as tmp:
        items = []
        for t in testsets:
            ts = load_testset(t)
            log(f"{ts.label}: {ts.kind} test set, {len(ts.items)} items", quiet)
            items += ts.items
        if fmt == "blimp":
            counts = write_blimp(items, tmp, condition)
        else:
            counts = {}
            for cond in sorted({condition(it) for it in items}):
                name = f"{cond.replace(':', '_').replace('/', '_')}.tsv"
                counts[name] = write_multiblimp([it for it in items if condition(it) == cond],
                                                tmp / name, condition, lang=lang)
        inputs = [p for t in testsets for p in testset_files(detect_testset(t)[1])]
        write_manifest(tmp, "export", list(dict.fromkeys(inputs)),
                       {"testsets": list(testsets), "format": fmt, "lang": lang},
                       counts={"pairs": sum(counts.values()), "files": counts}, argv=invocation_argv())
    log(f"wrote {sum(counts.values())} pairs in {len(counts)} files to {out}", quiet)
