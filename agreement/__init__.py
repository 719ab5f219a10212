"""agree: long-distance agreement benchmarks for language models.

Reproduces and extends Gulordava et al. (2018), *Colorless green recurrent
networks dream hierarchically*. Library verbs live in the submodules; the
``agree`` command (``agreement.cli``) is a thin layer over them.
"""
import os

# torch's OpenMP threads wait for work passively. With GOMP's default (spinning), the
# many small tensor operations of a scorer leave threads spinning for a core that other
# processes hold: measured 3.1 against 13.4 pairs/s with 2 threads on 2 busy cores, the
# same on idle ones. Set before torch loads (the CLI imports this package first); a
# user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from formats.manifest import AGREE_VERSION as __version__  # noqa: E402,F401  (the one version: distribution agree-bench)
