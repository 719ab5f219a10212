"""``agree corpus``: Wikipedia dump or tokenised text -> LM corpus and vocabulary."""
from __future__ import annotations

import logging

import click

from agreement.options import CPUS, LANG, PROBABILITY, SIZE, out_option, pass_run, quiet_option, \
    seed_option
from lm.corpus.prepare import corpus_to_dir
from lm.corpus.tokenize import lang_warning

log = logging.getLogger(__name__)


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path())
@click.option("--lang", type=LANG, required=True,
              help="Language of the inputs (en, it, ...): picks the tokenizer. A dump's header "
                   "is not consulted. A language without rules gets a warning and the generic ones.")
@out_option
@click.option("--vocab-size", type=SIZE, default=50000, show_default=True,
              help="Words in vocab.txt besides <eos> and <unk>.")
@click.option("--max-unk", type=PROBABILITY, default=0.05, show_default=True,
              help="Drop sentences with a larger share of words outside the vocabulary.")
@click.option("--clitics", type=click.Choice(["split", "keep"]), default="split", show_default=True,
              help="English: split (do n't, John 's: UD words, the paper) or keep (don't: "
                   "UD 2.16 EWT surface tokens).")
@click.option("--workers", type=CPUS, default=1, show_default=True,
              help="Processes parsing wikitext (dumps only).")
@seed_option
@quiet_option
@pass_run("corpus")
def corpus(run, inputs, lang, vocab_size, max_unk, clitics, workers):
    """Prepare an LM corpus and its vocabulary.

    Prepare a language-model corpus from MediaWiki XML dumps (.xml, .xml.bz2,
    multistream too) or plain tokenised text files (one sentence per line):
    extract article prose, split sentences, tokenise as the language's UD
    treebanks do, drop sentences with more than --max-unk unknown words,
    shuffle with --seed and split 8:1:1. Writes train.txt, valid.txt, test.txt,
    vocab.txt, counts.tsv and manifest.json.

    \b
    Example:
      agree corpus enwiki-latest-pages-articles1.xml.bz2 --lang en --out en-corpus
      agree corpus kind-it.txt --lang it --vocab-size 20000 --out it-corpus
    """
    if (warning := lang_warning(lang)) is not None:  # a warning, not an error: the generic rules work
        log.warning(f"Warning: {warning}")
    result = corpus_to_dir(run, inputs, lang, vocab_size=vocab_size, max_unk=max_unk, clitics=clitics,
                           workers=workers)
    s = result.stats
    log.info(f"{s['sentences_read']} sentences ({s['tokens_read']} tokens) read, "
             f"{s['sentences_dropped_unk']} dropped (> {100 * max_unk:g}% unknown); "
             f"train/valid/test {result.n_tokens['train']}/{result.n_tokens['valid']}/"
             f"{result.n_tokens['test']} tokens, vocabulary {s['vocab_size']} -> {run.out}")
