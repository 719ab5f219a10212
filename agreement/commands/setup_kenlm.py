"""``agree setup kenlm``: build KenLM's lmplz and build_binary into this environment."""
from __future__ import annotations

import logging

import click

from agreement.options import CPUS, pass_run, quiet_option
from treebanks.progress import progress as progress_bar
from lm.kenlm.build import build_kenlm

log = logging.getLogger(__name__)


@click.group()
def setup():
    """Install optional native tools into the active environment.

    \b
    Example:
      agree setup kenlm
    """


@setup.command()
@click.option("--prefix", type=click.Path(file_okay=False),
              help="Install into PREFIX/bin (default: this Python's environment, where "
                   "`agree train-lm --arch kn5` looks first).")
@click.option("--version", "version", help="kenlm source release (default: the installed kenlm distribution's, else 0.3.0).")
@click.option("--force", is_flag=True, help="Rebuild even when lmplz and build_binary are there.")
@click.option("--jobs", "-j", type=CPUS, help="Parallel compile jobs (default: all cores).")
@quiet_option
@pass_run("setup kenlm")
def kenlm(run, prefix, version, jobs):
    """Build KenLM's lmplz (5-gram trainer) and build_binary from the kenlm source
    distribution (pip download + cmake) and install them into PREFIX/bin. Needs
    cmake, a C++ compiler, Boost, zlib, bzip2 and lzma headers: all are checked
    before anything is downloaded. Takes a few minutes; prints the installed paths.

    \b
    Example:
      agree setup kenlm
      agree train-lm en-corpus --arch kn5 --out en-kn5
    """
    bar = None   # made at the first progress report: none when the tools are already there

    def progress(stage, percent):
        nonlocal bar
        if bar is None:
            bar = progress_bar(log, total=100, desc="kenlm", unit="%")
        bar.set_description(f"kenlm: {stage}")
        if percent >= 0:
            bar.update(percent - bar.n)

    try:
        result = build_kenlm(prefix, version=version, force=run.force, jobs=jobs, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    for path in result.tools:
        click.echo(str(path))
    what = f"built kenlm {result.version} in {result.seconds:.0f} s" if result.built else \
        "already installed (--force rebuilds)"
    log.info(f"lmplz, build_binary: {what} -> {result.bin_dir}")
