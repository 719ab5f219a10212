"""``agree analyze``: scored results -> noise ceiling, mixed model, EW/MW, challenge subsets."""
from __future__ import annotations

import logging
from pathlib import Path

import click
import numpy as np

from agreement.reporting.analysis.render import to_markdown, write_analysis
from agreement.reporting.analysis.rows import scored_table
from agreement.reporting.analysis.run import analyze as run_analysis
from agreement.errors import AgreeError
from formats.humans import read_humans
from agreement.options import Number, out_option, pass_run, quiet_option, seed_option
from formats.resources import memory_shortfall

log = logging.getLogger(__name__)


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
def analyze(run, score_dirs, humans, challenge_models, no_mixed, n_boot, seed):
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
    _check_extra()
    table = scored_table(score_dirs)
    _check_bootstrap(n_boot, len(table))
    humans_path = _humans_path(humans, table)
    judgments = read_humans(humans_path) if humans_path else None
    log.info(f"{len(table)} scored rows, models: {', '.join(table.models())}"
             + (f"; humans: {humans_path}" if humans_path else "; no human judgments"))
    result = run_analysis(table, np.random.default_rng(seed), judgments=judgments,
                          challenge_models=tuple(challenge_models), mixed=not no_mixed, n_boot=n_boot)
    with run.output_dir([*score_dirs, humans_path]) as tmp:
        files = write_analysis(result, tmp)
        inputs = [f"{d}/items.tsv" if not str(d).endswith(".tsv") else d for d in score_dirs]
        run.write_manifest(tmp, inputs + ([humans_path] if humans_path else []), {
            "score_dirs": list(score_dirs), "humans": humans_path, "challenge_models": list(challenge_models),
            "mixed": not no_mixed, "n_boot": n_boot, "seed": seed},
            counts={"rows": len(table), "models": table.models(), "files": files})
    click.echo(to_markdown(result), nl=False)
    for note in result.notes:
        log.info(note)
    log.info(f"wrote {', '.join(files)} to {run.out}")


def _check_extra() -> None:
    """scipy and statsmodels (the optional extra) are there, else one clear error."""
    try:  # lazy: heavy optional extra, checked for a clear message instead of an ImportError traceback
        import scipy  # noqa: F401
        import statsmodels  # noqa: F401
    except ImportError as e:
        raise AgreeError(f"agree analyze needs scipy and statsmodels ({e}); "
                         "pip install 'agree-bench[analysis]'") from None


def _check_bootstrap(n_boot: int, rows: int) -> None:
    """A bootstrap draws n_boot x rows indices (8 bytes each) at once: refused up front
    when that cannot fit, rather than failing inside numpy after the slow steps."""
    if (short := memory_shortfall(8.0 * n_boot * rows)) is not None:
        raise AgreeError(f"--n-boot {n_boot} over {rows} scored rows needs {short}; "
                         "choose a smaller --n-boot")


def _humans_path(humans, table) -> str | None:
    """--humans, else the file the score run named when it is here."""
    if humans is None and table.humans_path:
        if Path(table.humans_path).is_file():
            return table.humans_path
        log.info(f"the score run's --humans file {table.humans_path} is not here; give --humans FILE")
    return humans
