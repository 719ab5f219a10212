"""Training snapshots: where they lie, when they are due, and how a series is read back.

``agree train-lm --snapshot-every N`` (N optimizer steps, or ``N-tokens``: every N
training tokens, ``2M-tokens``) writes, besides the final model, a complete model
directory at each snapshot::

    OUT/snapshots/step-000100/   config.json, model.pt, vocab.txt (+ spm.model), manifest.json

built inside ``OUT.partial`` while training (each one through a hidden temporary
directory and a rename) and moved with it into ``OUT``. A snapshot holds the
weights *at that step* (the final ``OUT/model.pt`` is the best validation so far);
its config.json ``metrics`` say where it stands: ``steps``, ``tokens_seen`` (training
tokens read so far, all processes), ``epochs``, ``valid_ppl`` and ``valid_tokens``
(the validation split at that step, ``<unk>`` excluded), and ``snapshot``, its number
in the series (1, 2, ...). The final model's metrics record ``snapshots``, how many the
run made, so that a reader can tell a complete series from one with a hole.

This module is torch-free (the scorer reads series with it); the trainer's side is
:mod:`lm.neural.snapshots`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from lm.errors import FieldError, LMError, literal

#: the folder of a run directory (and of OUT.partial) that holds the snapshots
SNAPSHOT_DIR = "snapshots"
_NAME = re.compile(r"step-(\d+)$")
_TOKENS = re.compile(r"(\d+(?:\.\d+)?)([kKMG]?)-tokens$")
_SCALE = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9}


def snapshot_name(step: int) -> str:
    """``step-000100``: zero-padded so that names sort by step up to a million steps."""
    return f"step-{step:06d}"


def snapshot_step(path: Path) -> int | None:
    """The step of a snapshot directory's name, or None when it is not one."""
    m = _NAME.match(Path(path).name)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Schedule:
    """When snapshots are due: every ``steps`` optimizer steps, or every ``tokens``
    training tokens (at the first step that reaches the next multiple); one of the two."""
    steps: int | None = None
    tokens: int | None = None

    @classmethod
    def of(cls, steps: int | None, tokens: int | None) -> "Schedule | None":
        """The schedule of the ``snapshot_every`` / ``snapshot_tokens`` settings (None: none)."""
        if steps is not None and tokens is not None:
            raise FieldError("{snapshot_every} counts either steps or tokens, not both")
        for value in (steps, tokens):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise FieldError(f"{{snapshot_every}} must be at least 1 (got {literal(value)})")
        return None if steps is None and tokens is None else cls(steps, tokens)

    def due(self, step: int, tokens_before: int, tokens_after: int) -> bool:
        """Whether the step that took the run from ``tokens_before`` to ``tokens_after``
        training tokens (now at ``step``) ends with a snapshot."""
        if self.steps is not None:
            return step % self.steps == 0
        return tokens_after // self.tokens > tokens_before // self.tokens

    def describe(self) -> str:
        return f"every {self.steps} steps" if self.steps is not None else f"every {self.tokens} tokens"


def parse_schedule(text: str) -> Schedule:
    """``N`` (optimizer steps) or ``N-tokens`` with an optional k/M/G multiplier
    (``2M-tokens``, ``500k-tokens``); N at least 1. Raises :class:`LMError`."""
    text = str(text).strip()
    if text.isdigit():
        return Schedule.of(int(text), None)
    m = _TOKENS.match(text)
    if m is None:
        raise LMError(f"{text!r} is neither a number of steps (100) nor of tokens (2M-tokens)")
    tokens = float(m.group(1)) * _SCALE[m.group(2)]
    if tokens != int(tokens):
        raise LMError(f"{text!r} is not a whole number of tokens")
    return Schedule.of(None, int(tokens))


def list_snapshots(run_dir: str | Path) -> list[Path]:
    """The snapshot directories of a run directory (or its OUT.partial), by step;
    [] when it has none. Hidden temporaries (a snapshot being written) are skipped."""
    folder = Path(run_dir) / SNAPSHOT_DIR
    if not folder.is_dir():
        return []
    found = [(snapshot_step(p), p) for p in folder.iterdir() if p.is_dir()]
    return [p for step, p in sorted((s, p) for s, p in found if s is not None)]


def read_metrics(model_dir: str | Path) -> dict:
    """config.json's ``metrics`` of one of our model directories ({} when absent)."""
    try:
        config = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    metrics = config.get("metrics") if isinstance(config, dict) else None
    return metrics if isinstance(metrics, dict) else {}


def check_series(run_dir: str | Path, snapshots: list[Path]) -> None:
    """Raise :class:`LMError` when the run's series has a hole: a snapshot numbered in
    the series is missing (deleted), or the finished run made more than are left."""
    numbers = {}
    for path in snapshots:
        n = read_metrics(path).get("snapshot")
        if not isinstance(n, int):
            raise FieldError(f"{literal(path)}: not a snapshot of `agree train-lm {{snapshot_every}}` "
                             "(config.json has no metrics.snapshot)")
        numbers[n] = path
    made = read_metrics(run_dir).get("snapshots")
    last = made if isinstance(made, int) else max(numbers, default=0)
    missing = [n for n in range(1, last + 1) if n not in numbers]
    if missing:
        where = ", ".join(_hole(n, numbers) for n in missing[:3])
        raise LMError(f"{Path(run_dir) / SNAPSHOT_DIR}: {len(missing)} of the run's {last} snapshots "
                      f"missing ({where}{', ...' if len(missing) > 3 else ''}); to draw the curve "
                      f"without them, give the snapshots left as the models "
                      f"('{Path(run_dir) / SNAPSHOT_DIR / 'step-*'}')")


def _hole(n: int, numbers: dict) -> str:
    before = [numbers[k].name for k in sorted(numbers) if k < n][-1:]
    after = [numbers[k].name for k in sorted(numbers) if k > n][:1]
    if before and after:
        return f"number {n}, between {before[0]} and {after[0]}"
    return f"number {n}, " + (f"after {before[0]}" if before else f"before {after[0]}" if after else "")
