"""Learning curves (``agree score --curve``): agreement accuracy against training position.

The points of a curve are model directories with a training position:

- a run directory of ``agree train-lm --snapshot-every`` stands for its snapshots
  (``OUT/snapshots/step-*``; the final model is not a point: its weights are the best
  validation's, not those of one step); a hole in the series is an error
  (:func:`lm.training.snapshots.check_series`);
- any model directory (or GGUF file) whose position can be read: our config.json
  ``metrics`` (``steps``, ``tokens_seen``), a Hugging Face Trainer's
  ``trainer_state.json`` (``global_step``, ``num_input_tokens_seen``), or the
  directory's name (``checkpoint-500``, ``step1000``, ``step-000100``);
- or one given explicitly: ``--model 'step=1000:DIR'``, ``'tokens=2M:DIR'``,
  ``'step=1000,tokens=2B:DIR'`` (checkpoint series people download, Pythia's).

``SERIES=`` before a value names its curve (default: the run directory, or the folder
holding the model directories); several series are drawn one above the other. A series
whose models carry no position at all takes the order given (said on stderr); one where
only some do is an error. The x axis of a series is tokens seen when every point has
them, else optimizer steps, else the order.

Every point is scored as a model of its own (items.tsv, summary.* as for any score
run; test sets read and prepared once), then :func:`write_curve` adds
``learning_curve.tsv`` (:data:`COLUMNS`), ``learning_curve.png`` and, in summary.md,
when each condition rises above chance for good (:func:`emergence`; the definition is
in docs/learning_curves.md).
"""
from __future__ import annotations

import logging
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from treebanks.errors import literal
from agreement.errors import AgreeError
from lm.load import spec_path, split_model_value
from formats.files import as_given
from lm.training.snapshots import check_series, list_snapshots

log = logging.getLogger(__name__)

#: learning_curve.tsv's columns, one row per (series, snapshot, condition, breakdown, value)
COLUMNS = ("series", "snapshot", "order", "step", "tokens_seen", "valid_ppl", "condition",
           "breakdown", "value", "items", "right", "undecidable", "accuracy", "ci_low", "ci_high")
BREAKDOWNS = ("all", "attractors", "construction")
CURVE_TSV, CURVE_PNG = "learning_curve.tsv", "learning_curve.png"
#: chance for a choice between two forms, in %
CHANCE = 50.0

_GIVEN = re.compile(r"^((?:step|tokens)=[0-9][0-9_.]*[kKMGB]?(?:,(?:step|tokens)=[0-9][0-9_.]*[kKMGB]?)?):(.+)$")
_NAMED = re.compile(r"(?:^|[-_.])(?:checkpoint|global_step|step)[-_]?(\d+)$", re.IGNORECASE)
_SCALE = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "B": 10**9}


@dataclass(frozen=True)
class Position:
    """Where in training a model is: ``step`` (optimizer steps), ``tokens`` (training
    tokens seen), either may be unknown; ``source``: where it was read;
    ``valid_ppl``: its validation perplexity, when its config.json says."""
    step: int | None = None
    tokens: int | None = None
    source: str = ""
    valid_ppl: float | None = None


@dataclass(frozen=True)
class Point:
    """One model of a curve: its series, its ``--model`` value (scheme and path, as
    given) and its position; ``order``: 1-based, in its series."""
    series: str
    value: str
    path: str
    position: Position
    order: int = 0


@dataclass(frozen=True)
class CurvePlan:
    """The points of every series, in order; ``models``: the ``--model`` values to score."""
    points: tuple[Point, ...]

    @property
    def models(self) -> list[str]:
        return [p.value for p in self.points]



# --------------------------------------------------------------------------- positions

def _count(text: str) -> int:
    m = re.fullmatch(r"([0-9][0-9_.]*)([kKMGB]?)", text)
    try:
        value = float(m.group(1).replace("_", "")) * _SCALE[m.group(2)] if m else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise AgreeError(f"{{models}}: {literal(repr(text))} is not a whole number (a step or token count)",
                         fields=True)
    return int(value)


def _split_value(value: str) -> tuple[str, Position | None, str]:
    """``[SERIES=][step=N,tokens=M:]SPEC`` -> (series or "", the given position, SPEC)."""
    series, rest = "", value
    if not _GIVEN.match(value) and "=" in value and not Path(value).exists():
        series, _, rest = value.partition("=")
    m = _GIVEN.match(rest)
    if m is None or Path(rest).exists():
        return series, None, rest
    fields = dict(part.split("=", 1) for part in m.group(1).split(","))
    step = _count(fields["step"]) if "step" in fields else None
    tokens = _count(fields["tokens"]) if "tokens" in fields else None
    return series, Position(step, tokens, "given"), m.group(2)


def training_position(path: str | os.PathLike) -> Position | None:
    """The position a model directory (or GGUF file) carries, or None: our config.json
    metrics, then trainer_state.json, then its name (see the module docstring)."""
    path = Path(path)
    metrics = _json(path / "config.json").get("metrics")
    if isinstance(metrics, dict) and isinstance(metrics.get("steps"), int):
        tokens, ppl = metrics.get("tokens_seen"), metrics.get("valid_ppl")
        return Position(metrics["steps"], tokens if isinstance(tokens, int) else None, "config.json",
                        float(ppl) if isinstance(ppl, (int, float)) else None)
    state = _json(path / "trainer_state.json")
    if isinstance(state.get("global_step"), int):
        tokens = state.get("num_input_tokens_seen")
        return Position(state["global_step"], tokens if isinstance(tokens, int) and tokens > 0 else None,
                        "trainer_state.json")
    m = _NAMED.search(path.stem if path.is_file() else path.name)
    return Position(int(m.group(1)), None, "directory name") if m else None


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# --------------------------------------------------------------------------- the plan

def plan_curve(values: Sequence[str], root: str | os.PathLike | None = None) -> CurvePlan:
    """The points of ``--model`` values for ``--curve`` (module docstring): run
    directories expanded into their snapshots, positions read or given, series formed
    and ordered. Raises :class:`AgreeError` (or LMError for a series with a hole)."""
    raw: list[tuple[str, str, Position | None]] = []   # (series, value, position)
    for value in values:
        series, given, spec = _split_value(value)
        group, scheme, paths = split_model_value(spec, root)
        if group:        # a GROUP= left after the position: SERIES=step=N:DIR is the order
            raise AgreeError(f"{{models}} {literal(value)}: write the series first: SERIES=step=N:DIR",
                             fields=True)
        if given is not None and len(paths) != 1:
            raise AgreeError(f"{{models}} {literal(value)}: a position given for {len(paths)} models; "
                             "give each its own {models} 'step=N:DIR'", fields=True)
        for path in paths:
            shown = str(as_given(path, root))
            snapshots = list_snapshots(path) if not scheme and given is None else []
            if snapshots:
                check_series(path, snapshots)
                log.info(f"{shown}: {len(snapshots)} snapshots ({snapshots[0].name} ... "
                         f"{snapshots[-1].name}); the final model is not a point of the curve")
                raw += [(series or Path(path).name, str(as_given(s, root)), None) for s in snapshots]
            else:
                value_of = f"{scheme}:{shown}" if scheme else shown
                raw.append((series or _default_series(Path(path)), value_of, given))
    points = []
    for series in dict.fromkeys(s for s, _, _ in raw):
        points += _series_points(series, [(v, g) for s, v, g in raw if s == series], root)
    return CurvePlan(tuple(points))


def _default_series(path: Path) -> str:
    """A model directory's series: its folder (a snapshot's: its run directory)."""
    parent = Path(os.path.abspath(path)).parent
    return parent.parent.name if parent.name == "snapshots" else parent.name


def _series_points(series: str, members, root) -> list[Point]:
    """One series' points, positions read, sorted by position."""
    found = []
    for value, given in members:
        path = spec_path(value)
        rooted_path = Path(root, path) if root is not None else Path(path)
        found.append((value, str(rooted_path), given or training_position(rooted_path)))
    lacking = [v for v, _, pos in found if pos is None]
    if lacking and len(lacking) < len(found):
        raise AgreeError(f"curve {literal(series)}: no training position for {literal(', '.join(lacking))} "
                         "while the other models of the series have one; give it as "
                         "{models} 'step=N:DIR' (or name the series apart: SERIES=DIR)", fields=True)
    if lacking:
        log.info(f"curve {series}: none of its {len(found)} models carries a training position; "
                 "their order as given is taken as the position (1, 2, ...)")
        found = [(v, p, Position(source="order")) for v, p, _ in found]
    axis = _axis([pos for _, _, pos in found])
    found.sort(key=lambda f: _x(f[2], axis) if axis != "order" else 0)
    seen: dict = {}
    for value, _, pos in found:
        key = _x(pos, axis)
        if axis != "order" and key in seen:
            raise AgreeError(f"curve {series}: {seen[key]} and {value} are both at {axis} {key}")
        seen[key] = value
    sources = ", ".join(sorted({pos.source for _, _, pos in found}))
    log.info(f"curve {series}: {len(found)} points by {axis} (positions from {sources})")
    return [Point(series, v, p, pos, i + 1) for i, (v, p, pos) in enumerate(found)]


def _axis(positions: Sequence[Position]) -> str:
    """``tokens`` when every point has them, else ``steps``, else ``order``."""
    if positions and all(p.tokens is not None for p in positions):
        return "tokens"
    if positions and all(p.step is not None for p in positions):
        return "steps"
    return "order"


def _x(pos: Position, axis: str, order: int = 0):
    return {"tokens": pos.tokens, "steps": pos.step}.get(axis, order)


def series_axis(points: Sequence[Point]) -> tuple[str, list[float]]:
    """The x axis of one series' points (sorted) and their x values."""
    axis = _axis([p.position for p in points])
    return axis, [float(_x(p.position, axis, p.order)) for p in points]
