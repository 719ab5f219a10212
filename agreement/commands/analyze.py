"""``agree analyze``: scored results -> noise ceiling, mixed model, EW/MW, challenge subsets."""
from __future__ import annotations

import click

from agreement.options import Number, out_option, pass_run, quiet_option, seed_option
from agreement.reporting.analysis.analyze_dir import analyze_to_dir
from agreement.reporting.analysis.render import to_markdown


@click.command()
@click.argument("score_dirs", nargs=-1, required=True, metavar="SCORE_DIR...",
                type=click.Path(exists=True))
@click.option("--humans", type=click.Path(exists=True, dir_okay=False),
              help="Human judgments (as for agree score); default: the file the score run named.")
@click.option("--challenge-model", "challenge_models", multiple=True, metavar="NAME",
              help="Also report every model on the items this model gets wrong (repeatable).")
@click.option("--no-mixed", is_flag=True, help="Skip the mixed-effects model (the slowest step).")
@click.option("--n-boot", type=Number(int, min=10, max=100000, why="each replicate resamples every item"), default=1000, show_default=True,
              help="Bootstrap replicates for the correlation and reliability intervals.")
@out_option
@seed_option
@quiet_option
@pass_run("analyze")
def analyze(run, score_dirs, humans, challenge_models, no_mixed, n_boot):
    """Analyses beyond accuracy over `agree score` outputs.

    \b
    - graded comparison with humans: Pearson/Spearman of each model's
      P(correct)/(P(correct)+P(wrong)) with the rater share, with bootstrap
      intervals, beside the split-half reliability of the raters and the noise
      ceiling sqrt(reliability); point-biserial of correctness vs the rater share
    - logistic mixed model (statsmodels BinomialBayesMixedGLM, variational Bayes
      estimates, Laplace intervals for the fixed effects):
      correct ~ nonce + model + model:attractors + (1|item) + (1|construction)
    - paired comparison of every two models, items as the bootstrap unit
    - EW/MW systematicity over target lemmas (rows scored on `agree swap-targets`)
    - challenge subsets: rows the unigram and 5-gram models both get wrong, and
      rows each --challenge-model gets wrong, with every model on them

    Writes analysis.json, analysis.md, ceiling.png, forest.png and manifest.json
    to --out; prints analysis.md on stdout. Needs scipy and statsmodels
    (pip install 'agree-bench[analysis]').

    \b
    Example:
      agree score ../shared/data/colorlessgreen/Italian/best_model_mturk.tab \\
        --from-outputs hidden650_batch64_dropout0.2_lr10.0 \\
        --humans ../shared/data/colorlessgreen/Italian/best_model_mturk.tab --out it-paper
      agree analyze it-paper --out it-analysis
    """
    result = analyze_to_dir(run, score_dirs, humans=humans, challenge_models=challenge_models,
                            mixed=not no_mixed, n_boot=n_boot)
    click.echo(to_markdown(result), nl=False)
