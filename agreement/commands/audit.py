"""``agree audit``: draw a seeded sample of a release for a person to judge, and read
their verdicts back into a valid-rate table."""
from __future__ import annotations

import logging

import click

from agreement.extraction.audit import RATES_MD, SHEET_FILE, SHEET_MD, draw_to_dir, rates_tsv, read_to_dir
from agreement.options import COUNT, out_option, pass_run, quiet_option, seed_option

log = logging.getLogger(__name__)


@click.group("audit")
def audit():
    """Judge a release by hand: draw a sheet, read the verdicts.

    \b
    Example:
      agree audit draw ud-release --n-orig 15 --n-nonce 5 --seed 7 --out audit-7
      (fill the verdict column of audit-7/sheet.tsv: valid, questionable or invalid)
      agree audit read audit-7/sheet.tsv --out audit-7-rates
    """


@audit.command("draw")
@click.argument("release", type=click.Path(exists=True))
@click.option("--n-orig", type=COUNT, default=15, show_default=True,
              help="Originals per language, spread over its relation x feature strata.")
@click.option("--n-nonce", type=COUNT, default=5, show_default=True,
              help="Nonce variants per language, spread the same way.")
@click.option("--only", default="", metavar="CODES", help="Only these languages (comma-separated UD codes).")
@seed_option
@out_option
@quiet_option
@pass_run("audit draw")
def draw(run, release, n_orig, n_nonce, only):
    """Draw a seeded audit sheet from a release.

    RELEASE: an `agree extract-all` output (or one language directory of it, or a
    pairs.jsonl). Per language, N-ORIG originals and N-NONCE nonce variants,
    stratified by relation x feature (one from each stratum in turn, in a seeded
    order). Writes OUT/sheet.tsv (one pair a row: good and bad sentence with the
    cue in [brackets] and the target in {braces}, feature and values, where the
    wrong form came from, and empty verdict and note columns), OUT/sheet.md (the
    same for reading) and manifest.json. The same release and --seed give the
    same sheet.

    \b
    Example:
      agree audit draw ud-release --n-orig 15 --n-nonce 5 --seed 7 --out audit-7
    """
    languages = tuple(c.strip() for c in only.split(",") if c.strip())
    rows = draw_to_dir(run, release, n_orig, n_nonce, languages)
    log.info(f"{len(rows)} pairs in {len({r.language for r in rows})} languages -> "
             f"{run.out}/{SHEET_FILE} (read {run.out}/{SHEET_MD})")


@audit.command("read")
@click.argument("sheet", type=click.Path(exists=True))
@out_option
@quiet_option
@pass_run("audit read")
def read(run, sheet):
    """Read a judged sheet into a valid-rate table.

    SHEET: a sheet.tsv from `agree audit draw` (or its directory) with the verdict
    column filled: valid, questionable or invalid (v, q, i); empty rows are not
    judged. Prints the table (language, kind, judged, valid, questionable,
    invalid, valid_rate; questionable counts as not valid; `all` rows sum the
    languages) and writes it to OUT/valid_rates.tsv and OUT/valid_rates.md with
    manifest.json.

    \b
    Example:
      agree audit read audit-7/sheet.tsv --out audit-7-rates
    """
    rates, unjudged = read_to_dir(run, sheet)
    click.echo(rates_tsv(rates), nl=False)
    log.info(f"{sum(r.judged for r in rates if r.language != 'all')} verdicts read, {unjudged} rows not judged "
             f"-> {run.out}/{RATES_MD}")
