"""Drawing PNG files: matplotlib on the Agg backend (no display needed), and the one
PNG writer, which leaves out the metadata that would make the same figure differ
between runs. Every plot of agree (score, robustness, analyze) draws through here."""
from __future__ import annotations

import os
import warnings

_DPI = 100
#: the least width, in inches, a panel keeps beside its labels and legend when a figure
#: is widened for them (:func:`save_png`)
_PANEL_INCHES = 4.0


def pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display)."""
    # lazy: heavy (0.5 s), so that `agree score --help` and the commands that draw nothing
    # do not pay for it
    import matplotlib

    matplotlib.use("Agg")  # must precede pyplot
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: str | os.PathLike) -> None:
    _lay_out(fig)
    # No Software/date metadata: the same results give a byte-identical file.
    fig.savefig(path, dpi=_DPI, metadata={"Software": None}, bbox_inches="tight")
    pyplot().close(fig)


def _lay_out(fig) -> None:
    """``tight_layout``; a figure whose tick labels and outside legend leave its panels no
    room (BLiMP's 16 long paradigm names) is widened until they fit, rather than warned about."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.tight_layout()
    if not any("Tight layout not applied" in str(w.message) for w in caught):
        for w in caught:   # anything else matplotlib says is not ours to hide
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return
    renderer = fig.canvas.get_renderer()
    decorations = 0.0   # inches of labels, titles and legends beside the panels of the first row
    for ax in fig.axes:
        if ax.get_subplotspec() is not None and ax.get_subplotspec().rowspan.start == 0:
            outer = ax.get_tightbbox(renderer)
            decorations += (ax.bbox.x0 - outer.x0 + outer.x1 - ax.bbox.x1) / fig.dpi
    columns = fig.axes[0].get_subplotspec().get_gridspec().ncols
    fig.set_figwidth(max(fig.get_figwidth(), decorations + _PANEL_INCHES * columns))
    fig.tight_layout()
