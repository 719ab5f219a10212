"""A small raster canvas for the two plots every ``agree score`` draws (accuracy by
construction and by attractors, :mod:`agreement.reporting.accuracy_plots`): Pillow, with
the DejaVu Sans that matplotlib ships, drawn at twice the size and scaled down (smooth
lines and text), written as PNG without metadata (the same figure gives the same bytes).

Why not matplotlib for these two: a score call takes a few seconds, and importing
matplotlib and laying out two figures was a sixth of it (0.9 s of the paper's Italian set
scored in 6.3 s); bars, whiskers, lines and text cost Pillow about 0.07 s. The plots that
are drawn less often (robustness, humans, learning curves, inspect) stay with matplotlib
(:mod:`agreement.reporting.png`), in the same font and the same colours.

Coordinates are pixels of the written image (100 per inch), y downwards; sizes of text
and lines are given in points, as matplotlib's are.
"""
from __future__ import annotations

import functools
import importlib.util
import math
import os
from pathlib import Path
from typing import Sequence

from PIL import Image, ImageDraw, ImageFont

DPI = 100
#: drawn at this multiple of the written size, then scaled down
SCALE = 2
#: matplotlib's default colour cycle (tab10): a model has the same colour in every plot
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def px(points: float) -> float:
    """Points -> pixels of the written image."""
    return points * DPI / 72


@functools.lru_cache(maxsize=None)
def _font_file() -> str | None:
    # matplotlib's own copy of DejaVu Sans (matplotlib is a dependency), found without importing it
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"
    return str(path) if path.is_file() else None


@functools.lru_cache(maxsize=None)
def _font(size: float) -> ImageFont.FreeTypeFont:
    """The font at ``size`` pixels of the drawing."""
    path = _font_file()
    return ImageFont.truetype(path, size) if path else ImageFont.load_default(size)


def text_width(text: str, points: float) -> float:
    """Width in pixels of ``text`` set at ``points``."""
    return _font(px(points) * SCALE).getlength(text) / SCALE


class Canvas:
    """A white image of ``width`` x ``height`` pixels to draw on."""

    def __init__(self, width: float, height: float):
        self.size = (math.ceil(width), math.ceil(height))
        self._image = Image.new("RGB", (self.size[0] * SCALE, self.size[1] * SCALE), "white")
        self._draw = ImageDraw.Draw(self._image)

    def text(self, x: float, y: float, text: str, points: float, anchor: str = "la",
             fill: str = "black") -> None:
        """``anchor``: Pillow's two letters, horizontal (l, m, r) then vertical (a, m, s, d)."""
        self._draw.text((x * SCALE, y * SCALE), text, font=_font(px(points) * SCALE), anchor=anchor, fill=fill)

    def vertical_text(self, x: float, y: float, text: str, points: float) -> None:
        """``text`` read bottom to top, centred on (x, y)."""
        font = _font(px(points) * SCALE)
        left, top, right, bottom = font.getbbox(text, anchor="lm")
        strip = Image.new("L", (math.ceil(right - left) + 2, math.ceil(bottom - top) + 2), 0)
        ImageDraw.Draw(strip).text((1 - left, 1 - top), text, font=font, anchor="lm", fill=255)
        strip = strip.rotate(90, expand=True)
        at = (round(x * SCALE - strip.width / 2), round(y * SCALE - strip.height / 2))
        self._image.paste(Image.new("RGB", strip.size, "black"), at, strip)

    def line(self, points: Sequence[tuple[float, float]], fill: str = "black", width: float = 1.0,
             dotted: bool = False) -> None:
        """A polyline ``width`` points wide; ``dotted``: matplotlib's ':' (dots of one width,
        gaps of 1.65)."""
        xy = [(x * SCALE, y * SCALE) for x, y in points]
        w = max(1, round(px(width) * SCALE))
        if not dotted:
            self._draw.line(xy, fill=fill, width=w, joint="curve")
            return
        dot, gap = px(width) * SCALE, px(width) * 1.65 * SCALE
        for (x0, y0), (x1, y1) in zip(xy, xy[1:]):
            length = math.hypot(x1 - x0, y1 - y0)
            s = 0.0
            while s < length:
                e = min(s + dot, length)
                self._draw.line([(x0 + (x1 - x0) * s / length, y0 + (y1 - y0) * s / length),
                                 (x0 + (x1 - x0) * e / length, y0 + (y1 - y0) * e / length)], fill=fill, width=w)
                s = e + gap

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: str | None = None,
             outline: str | None = None, width: float = 0.8) -> None:
        box = [min(x0, x1) * SCALE, min(y0, y1) * SCALE, max(x0, x1) * SCALE, max(y0, y1) * SCALE]
        self._draw.rectangle(box, fill=fill, outline=outline, width=max(1, round(px(width) * SCALE)))

    def dot(self, x: float, y: float, points: float, fill: str) -> None:
        """A filled circle ``points`` across (matplotlib's marker size)."""
        r = px(points) * SCALE / 2
        self._draw.ellipse([x * SCALE - r, y * SCALE - r, x * SCALE + r, y * SCALE + r], fill=fill)

    def save(self, path: str | os.PathLike) -> None:
        """Scale down and write the PNG (no text chunks: the same drawing, the same bytes).
        Each pixel is the mean of the SCALE x SCALE drawn under it (supersampling's own
        resolve: a tenth of the time of a Lanczos filter, and no ringing at edges)."""
        self._image.reduce(SCALE).save(path, format="PNG", dpi=(DPI, DPI))
