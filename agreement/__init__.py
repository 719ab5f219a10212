"""agree: long-distance agreement benchmarks for language models.

Reproduces and extends Gulordava et al. (2018), *Colorless green recurrent
networks dream hierarchically*. Library verbs live in the submodules; the
``agree`` command (``agreement.cli``) is a thin layer over them.
"""
from importlib import metadata

try:
    # One place for the version: setup.cfg's [metadata] version, as installed.
    __version__ = metadata.version("agree")
except metadata.PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
