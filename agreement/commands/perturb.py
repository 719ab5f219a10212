"""``agree perturb``: a noisier copy of a test set, for robustness curves."""
from __future__ import annotations

import logging

import click

from agreement.options import FINITE, LANG, out_option, pass_run, quiet_option, seed_option
from nonce.errors import NonceError
from nonce.perturb.apply import perturb_to_dir
from nonce.perturb.base import aspect_names
from nonce.perturb.select import DIRECTIONS, POS_GROUPS

log = logging.getLogger(__name__)


def _options(pairs) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise NonceError(f"--option {pair!r}: expected KEY=VALUE")
        out[key.replace("-", "_")] = value
    return out


@click.command()
@click.argument("testset", type=click.Path(exists=True))
@click.option("--aspect", required=True, type=click.Choice(aspect_names()),
              help="What to perturb (see below).")
@click.option("--severity", required=True, type=FINITE, help="Per-word (per-space, per-article ...) "
              "probability in [0, 1]; for semantic the target cosine similarity in [-1, 1].")
@click.option("--pos-group", type=click.Choice(list(POS_GROUPS)),
              help="qwerty/swap/drop-char: noise only words of this group.")
@click.option("--match-group", type=click.Choice([g for g in POS_GROUPS if g != "random"]),
              help="With --pos-group random: as many words per sentence as this group.")
@click.option("--direction", type=click.Choice(DIRECTIONS),
              help="Noise the first (start) or last (end) candidate words instead of a random subset.")
@click.option("--vectors", type=click.Path(exists=True), help="semantic: word2vec text file or model directory.")
@click.option("--paradigms", type=click.Path(exists=True, dir_okay=False),
              help="semantic: paradigms.tsv (default: the one in TESTSET).")
@click.option("--lang", type=LANG, help="Language of the items (default: from the test set's manifest).")
@click.option("--option", "-o", "extra", multiple=True, metavar="KEY=VALUE",
              help="Aspect option, e.g. mode=swap (articles), band=0.1 (semantic), scope=context.")
@seed_option
@out_option
@quiet_option
@pass_run("perturb")
def perturb(run, testset, aspect, severity, pos_group, match_group, direction, vectors, paradigms, lang,
            extra):
    """Make a noisier copy of a test set.

    Perturb every item of a test set, keeping cue, target and their number intact.
    Writes items.tsv (same schema; `perturbation` says what was done, e.g.
    qwerty@nouns:0.2), manifest.json (counts) and a copy of paradigms.tsv.
    Score several severities with `agree score` to draw robustness curves.

    \b
    Aspects and what --severity means:
      qwerty, swap,   per-word probability in [0, 1] (a letter -> keyboard neighbour,
      drop-char       two letters swapped, a letter dropped); --pos-group, --direction
      drop-space      per-space probability (words merged)
      articles        per-article probability; -o mode=remove|swap|mixed
      marks           per-gap / per-mark probability; -o mode=both|insert|remove
      digits          per-number probability (digits -> words)
      semantic        target cosine similarity in [-1, 1] of replacement verbs;
                      --vectors; -o band=0.05
    Every aspect: -o scope=prefix|context|sentence (default prefix).

    \b
    Example:
      agree perturb en-items --aspect qwerty --severity 0.2 --pos-group nouns --seed 1 --out en-q-nouns-0.2
      agree perturb en-items --aspect qwerty --severity 0.2 --pos-group random --match-group nouns \\
          --seed 1 --out en-q-random-0.2
      agree perturb en-items --aspect semantic --severity 0.4 --vectors lstm-en --seed 1 --out en-sem-0.4
    """
    result = perturb_to_dir(run, testset, aspect, severity,
                            {"pos_group": pos_group, "match_group": match_group, "direction": direction,
                             "lang": lang, **_options(extra)},
                            vectors=vectors, paradigms=paradigms, seed=run.seed)
    if not result.items:
        log.warning(f"Warning: {testset}: the test set has no items, so there is nothing to perturb")
    s = result.stats
    log.info(f"{result.label}: {s['items_changed']} of {s['items']} items changed, "
             f"{s['changes']} edits -> {run.out}")
