"""What ``agree analyze`` writes, as a library verb: the analyses of one or more score
directories' rows (:func:`agreement.reporting.analysis.run.analyze`) into ``run.out``:
analysis.json, analysis.md, the PNGs (:mod:`agreement.reporting.analysis.render`) and
manifest.json."""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from agreement.errors import AgreeError
from agreement.reporting.analysis.render import write_analysis
from agreement.reporting.analysis.rows import scored_table
from agreement.reporting.analysis.run import Analysis, analyze
from formats.humans import read_humans
from formats.resources import memory_shortfall
from formats.run import RunContext

log = logging.getLogger(__name__)


def analyze_to_dir(run: RunContext, score_dirs: Sequence[str | os.PathLike], *, humans: str | None = None,
                   challenge_models: Sequence[str] = (), mixed: bool = True, n_boot: int = 1000) -> Analysis:
    """Analyse the scored rows of ``score_dirs`` (``agree score`` outputs, or their
    items.tsv) into ``run.out`` (atomically, under the --out policy; ``run.seed``: the
    bootstraps'). ``humans``: judgments (default: the file the score run named, when it
    is here); ``challenge_models``: also every model on the items each of these gets
    wrong; ``mixed``: fit the mixed-effects model (the slowest step); ``n_boot``: bootstrap
    replicates. Needs scipy and statsmodels (the ``analysis`` extra)."""
    _check_extra()
    table = scored_table([run.path(d) for d in score_dirs])
    _check_bootstrap(n_boot, len(table))
    humans = humans if humans is not None else _scored_humans(table.humans_path)
    log.info(f"{len(table)} scored rows, models: {', '.join(table.models())}"
             + (f"; humans: {humans}" if humans else "; no human judgments"))
    result = analyze(table, np.random.default_rng(run.seed), judgments=read_humans(run.path(humans)) if humans else None,
                     challenge_models=tuple(challenge_models), mixed=mixed, n_boot=n_boot)
    with run.output_dir([*score_dirs, humans]) as tmp:
        files = write_analysis(result, tmp)
        inputs = [f"{d}/items.tsv" if not str(d).endswith(".tsv") else d for d in score_dirs]
        run.write_manifest(tmp, inputs + ([humans] if humans else []), {
            "score_dirs": list(score_dirs), "humans": humans, "challenge_models": list(challenge_models),
            "mixed": mixed, "n_boot": n_boot, "seed": run.seed},
            counts={"rows": len(table), "models": table.models(), "files": files})
    for note in result.notes:
        log.info(note)
    log.info(f"wrote {', '.join(files)} to {run.out}")
    return result


def _check_extra() -> None:
    """scipy and statsmodels (the optional extra) are there, else one clear error."""
    try:  # lazy: heavy optional extra, checked for a clear message instead of an ImportError traceback
        import scipy  # noqa: F401
        import statsmodels  # noqa: F401
    except ImportError as e:
        raise AgreeError(f"agree analyze needs scipy and statsmodels ({e}); "
                         "pip install 'agree-bench[analysis]'") from None


def _check_bootstrap(n_boot: int, rows: int) -> None:
    """A bootstrap draws n_boot x rows indices (8 bytes each) at once: refused up front
    when that cannot fit, rather than failing inside numpy after the slow steps."""
    if (short := memory_shortfall(8.0 * n_boot * rows)) is not None:
        raise AgreeError(f"{{n_boot}} {n_boot} over {rows} scored rows needs {short}; "
                         "choose a smaller {n_boot}", fields=True)


def _scored_humans(path: str | None) -> str | None:
    """The judgments file the score run named, when it is here."""
    if path and Path(path).is_file():
        return path
    if path:
        log.info(f"the score run's human judgments ({path}) are not here: name the file to compare with them")
    return None
