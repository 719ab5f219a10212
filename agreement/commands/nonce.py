"""``agree nonce``: colorless-green nonce variants of an extracted test set."""
from __future__ import annotations

import random
import shutil

import click

from agreement.options import invocation_argv
from agreement.options import COUNT, PROBABILITY, log, out_option, quiet_option, seed_option, warn
from formats.manifest import atomic_output_dir, write_manifest
from formats.items import write_items
from nonce.generate import (SAMPLING_CHOICES, NonceConfig, make_nonce, read_extract_dir,
                            treebank_vocab, vocab_path)
from nonce.vowels import VOWEL_RULE_CHOICES, vowel_rule_on


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
@click.option("--format", "fmt", type=click.Choice(["tsv", "colorlessgreen"]), default="tsv",
              show_default=True, help="colorlessgreen: also write the paper's generated.* files.")
@out_option
@quiet_option
def nonce(extract_dir, n, seed, vocab, ambiguity, vowel_rule, sampling, fmt, out, force, quiet):
    """Make nonce variants: every content word replaced by a random treebank word
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
    with atomic_output_dir(out, "nonce", [extract_dir, vocab], force, quiet) as tmp:
        src = read_extract_dir(extract_dir)
        if not src.items:
            warn(f"{extract_dir}: the test set has no items, so there is nothing to vary")
        words = treebank_vocab(vocab, src.table) if vocab else None
        config = NonceConfig(n=n, ambiguity=ambiguity, vocab=words, lang=src.lang, vowel_rule=vowel_rule,
                             sampling=sampling, features=src.features, alternative_mode=src.alternative_mode,
                             values=src.values)
        result = make_nonce(src.items, src.table, config, random.Random(seed), quiet=quiet)
        write_items(tmp / "items.tsv", result.items)
        for name in ("paradigms.tsv", "constructions.tsv"):
            if (src.path / name).is_file():
                shutil.copyfile(src.path / name, tmp / name)
        if fmt == "colorlessgreen":  # freq column: treebank counts, as agree extract writes it
            from formats.colorlessgreen import write_colorlessgreen
            write_colorlessgreen(result.items, tmp, features=src.features, frequencies=src.table.form_counts())
        params = {"n": n, "seed": seed, "ambiguity": ambiguity, "sampling": sampling,
                  "vowel_rule": vowel_rule, "vowel_rule_applied": vowel_rule_on(src.lang, vowel_rule),
                  "vocab": vocab, "format": fmt, "lang": src.lang, "features": list(src.features),
                  "alternative": src.alternative_mode, "extract": src.manifest.get("parameters", {})}
        inputs = [src.path / f for f in ("items.tsv", "paradigms.tsv", "manifest.json")]
        write_manifest(tmp, "nonce", inputs + ([vocab_path(vocab)] if vocab else []), params, counts=result.counts(), argv=invocation_argv())
    c = result.counts()
    log(f"{c['originals']} original items, {c['with_variants']} with {n} variants ({c['variants']} in all); "
        f"no replacement pair for {sum(c['targets_no_pair'].values())} targets, no candidate for "
        f"{sum(c['positions_no_candidate'].values())} of {sum(c['positions'].values())} positions -> {out}",
        quiet)
    fused = sum(c["positions_fused"].values())
    if fused or c["targets_fused"]:
        why = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in c["positions_fused_unchanged"].items()) or "none"
        log(f"merged tokens (function words kept): {fused} content positions, unchanged: {why}; "
            f"{c['targets_fused']} merged targets keep their own pair", quiet)
    if c["distinct_pairs"]:
        log("distinct target pairs per item: " + ", ".join(f"{k}: {v} items" for k, v in c["distinct_pairs"].items()),
            quiet)
