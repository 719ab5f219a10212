"""``agree demo``: the whole pipeline on a generated language, with a report."""
from __future__ import annotations

import click

from agreement.options import out_option, pass_run, quiet_option, seed_option

SCALES = ("tiny", "default")


@click.command()
@out_option
@seed_option
@click.option("--scale", "size", type=click.Choice(SCALES), default="default", show_default=True,
              help="default: 2,000 treebank sentences, 300k corpus tokens, 9 nonce variants, a "
                   "4-epoch LSTM (under two minutes on 2 CPU cores); tiny: a half-minute smoke run. "
                   "(Not train-lm's --size, which picks a model preset.)")
@click.option("--size", "old_size", type=click.Choice(SCALES), hidden=True,
              help="The former name of --scale.")
@quiet_option
@pass_run("demo")
def demo(run, size, old_size):
    """Run the whole study on a generated language.

    Run the whole study on a language the project generates itself (nothing is
    downloaded): a treebank with long-distance number agreement across attractors
    and a training corpus, then agree corpus, extract, nonce, train-lm (LSTM,
    5-gram Kneser-Ney, unigram) and score, and write report.md: accuracy on
    original and nonce items per model, by construction and by number of
    attractors, with the plots of agree score. Prints the accuracy table; the
    step times go to timings.tsv.

    \b
    Example:
      agree demo --out demo-out
      agree demo --scale tiny --seed 2 --out demo-tiny
    """
    from agreement.demo.run import demo_config, run_demo  # lazy: the whole pipeline loads only when it runs

    result = run_demo(run, demo_config(old_size or size, seed=run.seed))
    click.echo(result.table, nl=False)
