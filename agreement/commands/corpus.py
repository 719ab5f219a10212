"""``agree corpus``: Wikipedia dump or tokenised text -> LM corpus and vocabulary."""
from __future__ import annotations

import logging
from functools import partial

import click

from agreement.options import LANG, PARALLEL, POSITIVE_INT, PROBABILITY, SIZE, out_option, pass_run, \
    quiet_option, seed_option
from formats.resources import cpu_count
from lm.corpus.prepare import corpus_to_dir
from lm.corpus.ranges import MAX_PAGE_CHARS, local_runner
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
@click.option("--max-tokens", type=POSITIVE_INT, default=None,
              help="Stop at this many tokens: the first whole pages of the dumps (lines of text "
                   "files), in input order, as the paper's corpora were cut; the same for any --workers.")
@click.option("--workers", type=PARALLEL, default=1, show_default=True,
              help="Dump ranges parsed at once: processes here, or Ray tasks with --executor ray.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: --workers processes here (1: this process). ray: Ray tasks of one CPU "
                   "(RAY_ADDRESS or --ray-address, else a local cluster of --workers CPUs for the run).")
@click.option("--ray-address", metavar="ADDR", default=None,
              help="With --executor ray: the Ray cluster to join (its machines must share the inputs and --out).")
@click.option("--any-dump-lang", is_flag=True,
              help="Read a dump whose header names another language than --lang (a mislabelled dump).")
@seed_option
@quiet_option
@pass_run("corpus")
def corpus(run, inputs, lang, vocab_size, max_unk, clitics, max_tokens, workers, executor, ray_address,
           any_dump_lang):
    """Prepare an LM corpus and its vocabulary.

    Prepare a language-model corpus from MediaWiki XML dumps (.xml, .xml.bz2,
    multistream too) or plain tokenised text files (one sentence per line):
    extract article prose, split sentences, tokenise as the language's UD
    treebanks do, drop sentences with more than --max-unk unknown words,
    shuffle with --seed and split 8:1:1. Writes train.txt, valid.txt, test.txt,
    vocab.txt, counts.tsv and manifest.json.

    A dump is parsed in ranges by --workers processes (a multistream dump by
    its index's streams, any other in blocks), the same corpus for any number
    of them. An interrupted run keeps its finished ranges in .OUT.resume beside
    --out; the same command resumes from them.

    \b
    Example:
      agree corpus enwiki-latest-pages-articles1.xml.bz2 --lang en --out en-corpus
      agree corpus kind-it.txt --lang it --vocab-size 20000 --out it-corpus
      agree corpus enwiki-latest-pages-articles-multistream.xml.bz2 --lang en \\
        --max-tokens 90000000 --workers 2 --out en-90m
    """
    if (warning := lang_warning(lang)) is not None:  # a warning, not an error: the generic rules work
        log.warning(f"Warning: {warning}")
    if executor == "ray" or ray_address:
        # lazy: the task runner brings numpy and the scoring executors (a second of start-up)
        from agreement.parallel import check_executor

        check_executor(executor, workers, ray_address)
    elif workers > 4 * cpu_count():
        raise click.BadParameter(f"{workers}: more processes than this machine's {cpu_count()} CPUs can use "
                                 f"(at most {4 * cpu_count()}); a larger cluster: --executor ray",
                                 param_hint="--workers")
    runner = local_runner(workers) if executor == "local" else partial(_on_ray, workers=workers,
                                                                        address=ray_address)
    result = corpus_to_dir(run, inputs, lang, vocab_size=vocab_size, max_unk=max_unk, clitics=clitics,
                           workers=workers, runner=runner, max_tokens=max_tokens,
                           any_dump_lang=any_dump_lang)
    s = result.stats
    if s.get("pages_too_large"):
        log.warning(f"Warning: skipped {s['pages_too_large']} pages of more than {MAX_PAGE_CHARS >> 20} MB of "
                    "wikitext (MediaWiki saves none over 2 MB: a fault of the dump, such as a template loop)")
    log.info(f"{s['sentences_read']} sentences ({s['tokens_read']} tokens) read, "
             f"{s['sentences_dropped_unk']} dropped (> {100 * max_unk:g}% unknown); "
             f"train/valid/test {result.n_tokens['train']}/{result.n_tokens['valid']}/"
             f"{result.n_tokens['test']} tokens, vocabulary {s['vocab_size']} -> {run.out}")



def _on_ray(fn, tasks, *, workers: int, address: str | None):
    """Ranges as Ray tasks, one cluster for the whole run, read from ``tasks`` as workers
    free up (a dump read in order must not be held whole: its blocks travel in the tasks)."""
    from agreement.parallel import run_tasks  # lazy: see above

    yield from run_tasks(fn, tasks, executor="ray", workers=workers, address=address)
