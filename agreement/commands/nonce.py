"""``agree nonce``: colorless-green nonce variants of an extracted test set."""
from __future__ import annotations

import logging

import click

from agreement.options import COUNT, PROBABILITY, out_option, pass_run, quiet_option, seed_option
from nonce.generate import SAMPLING_CHOICES
from nonce.nonce_dir import FORMATS, nonce_to_dir
from nonce.vowels import VOWEL_RULE_CHOICES

log = logging.getLogger(__name__)


@click.command()
@click.argument("extract_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--n", "n", type=COUNT, default=9, show_default=True, help="Nonce variants per original item.")
@seed_option
@click.option("--vocab", type=click.Path(exists=True),
              help="LM vocabulary (vocab.txt, or a corpus/model directory): candidates must be in it.")
@click.option("--ambiguity", type=PROBABILITY, default=0.1, show_default=True,
              help="Largest share of a candidate's occurrences with another POS (0 = one POS only).")
@click.option("--vowel-rule", type=click.Choice(VOWEL_RULE_CHOICES), default="auto", show_default=True,
              help="Match vowel-initial status (articles a/an, lo/il): auto = on for en and it.")
@click.option("--sampling", type=click.Choice(SAMPLING_CHOICES), default="uniform", show_default=True,
              help="Draw candidates uniformly over word types, or weighted by treebank frequency.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="tsv",
              show_default=True, help="colorlessgreen: also write the paper's generated.* files.")
@out_option
@quiet_option
@pass_run("nonce")
def nonce(run, extract_dir, n, vocab, ambiguity, vowel_rule, sampling, fmt):
    """Make colorless-green nonce variants.

    Make nonce variants: every content word replaced by a random treebank word
    with the same POS and features, the target by another lemma's singular/plural
    pair. Writes items.tsv (variant 0 = original, 1..n = nonce), paradigms.tsv and
    manifest.json (with counts of positions and targets that had no candidate).

    A merged multiword token (Italian farlo = fare + lo, a noun with a prefixed
    preposition and article) keeps its function words: it is replaced only by
    another merged token the treebank spells with the same function parts, else
    left unchanged and counted (positions_fused_unchanged, by reason). An item's
    variants draw their target pairs without replacement until its candidates
    are used up; manifest counts distinct_pairs: items by distinct pairs.

    \b
    Example:
      agree extract ../shared/data/ud/en_ewt --lang en --out en-items
      agree nonce en-items --n 9 --seed 1 --out en-nonce
    """
    result = nonce_to_dir(run, extract_dir, n=n, seed=run.seed, vocab=vocab, ambiguity=ambiguity,
                          vowel_rule=vowel_rule, sampling=sampling, fmt=fmt)
    c = result.counts()
    if not c["originals"]:
        log.warning(f"Warning: {extract_dir}: the test set has no items, so there is nothing to vary")
    elif not c["with_variants"] and n:   # an empty or foreign paradigms.tsv: said, not a silent copy of the items
        log.warning(f"Warning: none of the {c['originals']} items got nonce variants: no target has a replacement "
                    f"pair in {extract_dir}'s paradigms.tsv")
    log.info(f"{c['originals']} original items, {c['with_variants']} with {n} variants ({c['variants']} in all); "
             f"no replacement pair for {sum(c['targets_no_pair'].values())} targets, no candidate for "
             f"{sum(c['positions_no_candidate'].values())} of {sum(c['positions'].values())} positions -> {run.out}")
    fused = sum(c["positions_fused"].values())
    if fused or c["targets_fused"]:
        why = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in c["positions_fused_unchanged"].items()) or "none"
        log.info(f"merged tokens (function words kept): {fused} content positions, unchanged: {why}; "
                 f"{c['targets_fused']} merged targets keep their own pair")
    if c.get("targets_own_pair"):
        log.info("relation items whose closed-class target has no other lemma's pair, keeping their own: "
                 + ", ".join(f"{k} {v}" for k, v in c["targets_own_pair"].items()))
    if c["distinct_pairs"]:
        log.info("distinct target pairs per item: "
                 + ", ".join(f"{k}: {v} items" for k, v in c["distinct_pairs"].items()))
