"""``agree extract-all``: a folder of UD treebanks -> one directory per language, index.tsv
and a multilingual release (JSON Lines, Parquet, a datasheet)."""
from __future__ import annotations

import logging
import shlex

import click

from agreement.errors import AgreeError
from agreement.extraction.batch import extract_languages
from agreement.extraction.config import ExtractConfig, parse_features, parse_relations
from agreement.extraction.relation_arcs import RELATIONS
from agreement.options import COUNT, PARALLEL, POSITIVE_INT, Number, out_option, pass_run, quiet_option, \
    seed_option
from agreement.parallel import EXECUTORS
from treebanks.cache import default_cache_dir

log = logging.getLogger(__name__)

#: nonce variants per item in a release: refused before any work beyond this (every
#: item of every language gets as many; agree nonce makes more for one test set)
VARIANTS = Number(int, min=1, max=1000, why="nonce variants per item of a release; agree nonce makes more")


def _codes(values) -> tuple[str, ...]:
    """Repeated options and comma lists alike: ``--only it,de --only fr``."""
    return tuple(c.strip() for v in values for c in v.split(",") if c.strip())


@click.command("extract-all")
@click.argument("ud_dir", type=click.Path(exists=True, file_okay=False))
@out_option
@click.option("--only", multiple=True, metavar="CODES",
              help="Mine only these languages (UD codes, comma-separated or repeated: --only it,de).")
@click.option("--exclude", multiple=True, metavar="CODES", help="Leave these languages out.")
@click.option("--workers", type=PARALLEL, default=1, show_default=True,
              help="Languages mined at once: processes on this machine, or Ray tasks with --executor ray.")
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="local: --workers processes here (1: this process). ray: Ray tasks of one CPU "
                   "(RAY_ADDRESS or --ray-address, else a local cluster of --workers CPUs for the run).")
@click.option("--ray-address", metavar="ADDR", default=None,
              help="With --executor ray: the Ray cluster to join (its machines must share --out and UD_DIR).")
@click.option("--n", "n", type=VARIANTS, default=9, show_default=True, help="Nonce variants per item.")
@seed_option
@click.option("--relations", default=",".join(RELATIONS), show_default=True, help="Relations mined, a comma list.")
@click.option("--features", default="Gender|Number|Person", show_default=True,
              help="Agreement features, a |-list; each item contrasts one.")
@click.option("--min-distance", type=POSITIVE_INT, default=1, show_default=True,
              help="Smallest cue-target index difference.")
@click.option("--max-distance", type=COUNT, default=0, show_default=True,
              help="Largest cue-target index difference (0: none).")
@click.option("--no-cache", is_flag=True, help="Parse every treebank file even when the parse cache has it.")
@quiet_option
@pass_run("extract-all")
def extract_all(run, ud_dir, only, exclude, workers, executor, ray_address, n, relations, features,
                min_distance, max_distance, no_cache):
    """Mine every language of a UD folder and write a release.

    Find the treebanks of UD_DIR (a UD release, UD_*/xx_tb-ud-*.conllu, or any
    folder of .conllu[.gz] files named as UD names them), group them by language
    (the code before the first _ of a file name: several treebanks of a language are
    mined together, their paradigms pooled), mine each language by agreement relation
    (agree extract --mode relations) and make its nonce variants (agree nonce; each
    language seeded from --seed and its code alone). Writes OUT/<code>/ per language
    (items.tsv, relations.tsv, paradigms.tsv, pairs.jsonl, pairs.parquet with
    pyarrow, manifest.json), and at the top index.tsv (a row per language: counts by
    relation and feature, licence, and for a language without items the reason),
    the datasheet README.md and manifest.json. agree score OUT reads it back.

    The walk follows no symbolic link to a folder and no link out of UD_DIR, reads
    each file once (a copy of a treebank file too) and says on stderr what it left
    out. OUT appears whole when every language is done. An interrupted run leaves
    OUT.partial: the same command again keeps the finished languages. A treebank
    that cannot be read (unreadable, a dangling link, empty) fails its language
    only, and a folder that cannot be listed is missing: the others are written,
    and the run ends with an error naming it.

    \b
    Example:
      agree extract-all ../shared/data/ud --workers 2 --out ud-release
      agree extract-all ../shared/data/ud --only it,de --n 9 --seed 1 --out it-de
    """
    config = ExtractConfig(mode="relations", features=parse_features(features),
                           relations=parse_relations(relations), min_distance=min_distance,
                           max_distance=max_distance or None,
                           cache_dir=None if no_cache else str(default_cache_dir()))
    given = [("--relations", relations, ",".join(RELATIONS)), ("--features", features, "Gender|Number|Person"),
             ("--min-distance", min_distance, 1), ("--max-distance", max_distance, 0)]
    recipe = shlex.join(["agree", "extract-all", str(ud_dir), "--seed", str(run.seed), "--n", str(n)]
                        + [w for flag, value, default in given if value != default for w in (flag, str(value))])
    result = extract_languages(run, ud_dir, config, n=n, only=_codes(only), exclude=_codes(exclude),
                               workers=workers, executor=executor, address=ray_address, recipe=recipe)
    for line in result.skipped_files:
        log.warning(f"Warning: skipped {line}")
    with_items = [o.row for o in result.outcomes if o.row.items]
    read = [o.row for o in result.outcomes if not o.error]
    if read and not with_items:   # said even with --quiet, as agree extract says it: an empty release is no result
        log.warning(f"Warning: no agreement items in any language: {read[0].language}: {read[0].reason}")
    log.info(f"{len(result.outcomes)} languages ({result.kept} kept from an earlier run), {len(with_items)} with "
             f"items: {result.items} items, {result.variants} nonce variants -> {run.out}")
    unread = ""
    if result.unreadable:
        unread = (f"{len(result.unreadable)} folder(s) of {ud_dir} could not be read, so their treebanks are "
                  f"missing ({'; '.join(result.unreadable)})")
    if result.failed:
        names = "; ".join(f"{o.row.language}: {o.error}" for o in result.failed)
        raise AgreeError(f"{len(result.failed)} of {len(result.outcomes)} languages failed and were skipped "
                         f"({names}){'; ' + unread if unread else ''}; the others are in {run.out}, and the "
                         f"same command again mines only the failed ones once their treebanks are fixed")
    if unread:
        raise AgreeError(f"{unread}; the languages read are in {run.out}, and the same command again, once the "
                         f"folders can be read, keeps them and mines the rest")
