"""The trainer's side of snapshots (:mod:`lm.training.snapshots` describes them): writing one
complete model directory under ``<work>/snapshots/``, and, on ``resume``, putting the
series back where the checkpoint stands.

A snapshot is written through a hidden ``.step-N.tmp`` directory and a rename, so a
snapshot directory is complete or absent. Resuming from a checkpoint at step S keeps
the snapshots up to S and removes later ones (left by a run killed after its last
checkpoint): the resumed run makes them again, byte for byte, so the series ends with
no duplicate and no hole.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

from formats.files import replace_dir
from lm.neural.checkpoint import save_model, write_config
from lm.training.snapshots import SNAPSHOT_DIR, list_snapshots, snapshot_name, snapshot_step

#: files of the work directory that every snapshot carries (the vocabulary the model reads)
SHARED_FILES = ("vocab.txt", "spm.model")


def restore_series(work: Path, step: int, rank0: bool) -> int:
    """Snapshots after ``step`` and unfinished temporaries removed (rank 0); returns how
    many snapshots the run had made by ``step`` (the next one's number is that + 1)."""
    folder = Path(work) / SNAPSHOT_DIR
    if rank0 and folder.is_dir():
        for path in folder.iterdir():
            late = snapshot_step(path) is not None and snapshot_step(path) > step
            if late or (path.name.startswith(".") and path.name.endswith(".tmp")):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
    return sum(1 for p in list_snapshots(work) if snapshot_step(p) <= step)


def write_snapshot(work: Path, model, config, options, corpus, lang: str, metrics: dict,
                   on_snapshot: Callable[[Path, dict], None] | None = None) -> Path:
    """``<work>/snapshots/step-N/`` (N = ``metrics["steps"]``): the vocabulary files,
    ``model.pt`` of ``model``'s weights now, ``config.json`` with ``metrics``, and what
    ``on_snapshot(directory, metrics)`` adds (the CLI: manifest.json) before the rename.
    An existing snapshot of that step (made before an interruption) is replaced."""
    folder = Path(work) / SNAPSHOT_DIR
    folder.mkdir(exist_ok=True)
    final = folder / snapshot_name(metrics["steps"])
    tmp = folder / f".{final.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        for name in SHARED_FILES:
            if (Path(work) / name).is_file():
                shutil.copyfile(Path(work) / name, tmp / name)
        save_model(model, config.to_dict(), tmp)
        write_config(tmp, config, options, corpus, lang, metrics)
        if on_snapshot is not None:
            on_snapshot(tmp, metrics)
        replace_dir(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
