"""agree: long-distance agreement benchmarks for language models.

Reproduces and extends Gulordava et al. (2018), *Colorless green recurrent
networks dream hierarchically*. Library verbs live in the submodules; the
``agree`` command (``agreement.cli``) is a thin layer over them.
"""
from formats.manifest import AGREE_VERSION as __version__  # noqa: F401  (the one version: distribution agree-bench)
