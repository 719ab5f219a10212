"""Drawing PNG files: matplotlib on the Agg backend (no display needed), and the one
PNG writer, which leaves out the metadata that would make the same figure differ
between runs. Every plot of agree (score, robustness, analyze) draws through here."""
from __future__ import annotations

import os

_DPI = 100


def pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display)."""
    # lazy: heavy (0.5 s), so that `agree score --help` and the commands that draw nothing
    # do not pay for it
    import matplotlib

    matplotlib.use("Agg")  # must precede pyplot
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: str | os.PathLike) -> None:
    fig.tight_layout()
    # No Software/date metadata: the same results give a byte-identical file.
    fig.savefig(path, dpi=_DPI, metadata={"Software": None}, bbox_inches="tight")
    pyplot().close(fig)
