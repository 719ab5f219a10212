"""``agree swap-targets``: items with the target pair swapped for K other lemmas (EW/MW)."""
from __future__ import annotations

import random
import shutil

import click

from agreement.options import invocation_argv
from agreement.options import log, out_option, quiet_option, seed_option
from formats.manifest import atomic_output_dir, write_manifest
from formats.items import write_items
from nonce.generate import NonceConfig, read_extract_dir, treebank_vocab, vocab_path
from nonce.pool import CandidatePool
from nonce.systematicity import make_swaps


@click.command("swap-targets")
@click.argument("extract_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--k", "k", type=int, default=20, show_default=True,
              help="Other lemmas per item (fewer when the treebank has fewer).")
@click.option("--vocab", type=click.Path(exists=True),
              help="LM vocabulary (vocab.txt, or a corpus/model directory): both forms must be in it.")
@seed_option
@out_option
@quiet_option
def swap_targets(extract_dir, k, vocab, seed, out, force, quiet):
    """Systematicity items: every original item of an `agree extract` directory,
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
    src = read_extract_dir(extract_dir)
    words = treebank_vocab(vocab, src.table) if vocab else None
    config = NonceConfig(vocab=words, lang=src.lang, features=src.features,
                         alternative_mode=src.alternative_mode)
    result = make_swaps(src.items, CandidatePool(src.table, config.pool_options()), k, random.Random(seed))
    with atomic_output_dir(out, "swap-targets", [extract_dir, vocab], force, quiet) as tmp:
        write_items(tmp / "items.tsv", result.items)
        for name in ("paradigms.tsv", "constructions.tsv"):
            if (src.path / name).is_file():
                shutil.copyfile(src.path / name, tmp / name)
        inputs = [src.path / f for f in ("items.tsv", "paradigms.tsv", "manifest.json")]
        write_manifest(tmp, "swap-targets", inputs + ([vocab_path(vocab)] if vocab else []),
                       {"k": k, "seed": seed, "vocab": vocab, "lang": src.lang,
                        "features": list(src.features), "alternative": src.alternative_mode},
                       counts=result.counts(), argv=invocation_argv())
    c = result.counts()
    log(f"{c['originals']} original items, {c['swaps']} swaps; fewer than {k} lemmas for "
        f"{sum(c['fewer_than_k'].values())}, none for {sum(c['no_pair'].values())} -> {out}", quiet)
