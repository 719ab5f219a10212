"""Drawing PNG files: matplotlib on the Agg backend (no display needed), and the one
PNG writer, which leaves out the metadata that would make the same figure differ
between runs. Every matplotlib plot of agree (robustness, humans, learning curves,
analyze, inspect) draws through here; the two plots of every score call are drawn on
:mod:`agreement.reporting.raster`'s canvas, in the same font and colours."""
from __future__ import annotations

import os
import warnings

_DPI = 100
#: the least width, in inches, a panel keeps beside its labels and legend when a figure
#: is widened for them (:func:`save_png`)
_PANEL_INCHES = 4.0


def subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float], **options):
    """A new figure drawn by Agg and its axes (``matplotlib.figure.Figure.subplots``'s
    ``options``): a figure of its own, not pyplot's (no figure manager, no global state,
    nothing to close)."""
    # lazy: heavy, so that `agree score --help` and the commands that draw nothing do not pay for it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(nrows, ncols, **options)


def colours() -> list[str]:
    """matplotlib's colour cycle."""
    import matplotlib  # lazy, as above

    return matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]


def save_png(fig, path: str | os.PathLike, *, tight: bool = True) -> None:
    """Lay ``fig`` out and write it; ``tight``: crop the file to what is drawn (plus
    matplotlib's padding), measured on the layout just made rather than by a draw of its own."""
    _lay_out(fig)
    bbox = None
    if tight:
        import matplotlib  # lazy, as above

        bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(matplotlib.rcParams["savefig.pad_inches"])
    # No Software/date metadata: the same results give a byte-identical file.
    fig.savefig(path, dpi=_DPI, metadata={"Software": None}, bbox_inches=bbox)


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
