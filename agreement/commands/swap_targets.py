"""``agree swap-targets``: items with the target pair swapped for K other lemmas (EW/MW)."""
from __future__ import annotations

import logging

import click

from agreement.options import POSITIVE_INT, out_option, pass_run, quiet_option, seed_option
from nonce.nonce_dir import swap_targets_to_dir

log = logging.getLogger(__name__)


@click.command("swap-targets")
@click.argument("extract_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--k", "k", type=POSITIVE_INT, default=20, show_default=True,
              help="Other lemmas per item (fewer when the treebank has fewer).")
@click.option("--vocab", type=click.Path(exists=True),
              help="LM vocabulary (vocab.txt, or a corpus/model directory): both forms must be in it.")
@seed_option
@out_option
@quiet_option
@pass_run("swap-targets")
def swap_targets(run, extract_dir, k, vocab):
    """Swap target lemmas (systematicity items).

    Systematicity items: every original item of an `agree extract` directory,
    then K copies with only the target pair replaced by the two forms of another
    lemma with the same POS and features (from its paradigms.tsv; the two forms
    spelled differently). Variant 0 is the original, variants 1..K (perturbation
    `swap`) one lemma each, same item_id: `agree score` them, then
    `agree analyze` reports EW and MW accuracy.

    \b
    Example:
      agree extract ../shared/data/ud/en_ewt --lang en --out en-items
      agree swap-targets en-items --k 20 --seed 1 --out en-swaps
      agree score en-swaps --model en-lstm --out en-swaps-scored
      agree analyze en-swaps-scored --out en-swaps-analysis
    """
    result = swap_targets_to_dir(run, extract_dir, k=k, seed=run.seed, vocab=vocab)
    c = result.counts()
    if not c["originals"]:   # as agree nonce says it: an empty output is not a silent one
        log.warning(f"Warning: {extract_dir}: the test set has no items, so there is nothing to swap")
    elif not c["swaps"]:
        log.warning(f"Warning: none of the {c['originals']} items got a swap: no target has another lemma with "
                    f"its POS and features in {extract_dir}'s paradigms.tsv")
    log.info(f"{c['originals']} original items, {c['swaps']} swaps; fewer than {k} lemmas for "
             f"{sum(c['fewer_than_k'].values())}, none for {sum(c['no_pair'].values())} -> {run.out}")
