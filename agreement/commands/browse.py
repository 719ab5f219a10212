"""``agree browse``: score directories -> a static results page (opens from file://)."""
from __future__ import annotations

import logging

import click

from agreement.options import out_option, pass_run, quiet_option
from agreement.reporting.browse.site import browse_to_dir

log = logging.getLogger(__name__)


def _testset_pairs(ctx, param, values) -> dict[str, str]:
    out = {}
    for v in values:
        label, sep, path = v.partition("=")
        if not sep or not label or not path:
            raise click.BadParameter(f"{v!r}: give LABEL=PATH (LABEL as the score run names the test set)")
        out[label] = path
    return out


@click.command()
@click.argument("score_dirs", nargs=-1, required=True, metavar="SCORE_DIR...", type=click.Path(exists=True))
@click.option("--testset", "testsets", multiple=True, metavar="LABEL=PATH", callback=_testset_pairs,
              help="Where a scored test set is now, when it moved since the score run (LABEL as in "
                   "items.tsv's testset column; repeatable). Default: the path the run recorded, from here "
                   "or from the score directory's parent.")
@click.option("--humans", type=click.Path(exists=True, dir_okay=False),
              help="Human judgments to show (as for agree score); default: the file the score run named.")
@out_option
@quiet_option
@pass_run("browse")
def browse(run, score_dirs, testsets, humans):
    """A results page of score runs, opened from the file system.

    Writes a static site to --out: index.html with its scripts, styles and data
    beside it (no server, no network: open OUT/index.html in a browser). It
    shows a summary (accuracy per model with Wilson intervals, by condition,
    attractors, distance, language and relation, over the rows the filters
    keep; the runs' plots), a table of every scored pair with filters
    (language, relation, feature, attractors, distance, original/nonce, right
    or wrong per model, models that disagree, humans) and sorting, and for one
    item the pair side by side with cue, target and attractors marked, each
    model's log-probabilities and margin, its nonce variants, and per-word
    surprisal where the run saved tokens.tsv (agree score --surprisal).

    SCORE_DIR: agree score outputs over the same test sets (several runs show
    their models side by side); the test sets are read again for the words.

    \b
    Example:
      agree score it-nonce --model runs/kn5 --model runs/unigram --surprisal --out it-scores
      agree browse it-scores --out it-page
    """
    page = browse_to_dir(run, score_dirs, testsets=testsets, humans=humans)
    log.info(f"wrote {page.rows} rows of {len(page.models)} models, {page.files} files "
             f"({page.bytes / 1e6:.1f} MB), to {run.out}: open {run.out}/index.html")
