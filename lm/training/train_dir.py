"""What ``agree train-lm`` writes, as a library verb: :func:`lm.training.train.train_lm` plus the
model directory's manifest.json (the CLI command and the demo call it)."""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from formats.manifest import describe_outputs
from formats.run import RunContext
from lm.training.trainers import CHECKPOINT_FILE
from lm.training.train import TrainResult, train_lm


def train_lm_to_dir(run: RunContext, inputs: Sequence[str | os.PathLike], *, arch: str,
                    lang: str | None = None, size: str = "paper", epochs: int | None = None,
                    max_steps: int | None = None, resume: bool = False, on_step=None,
                    **options) -> TrainResult:
    """Train ``arch`` on ``inputs`` into ``run.out`` (see :func:`lm.training.train.train_lm`; the
    --out policy, OUT.partial, checkpoints) and write its manifest.json just before
    the rename (and each snapshot's, :mod:`lm.training.snapshots`). ``options``: train-lm's model
    and training options (None = not given; the manifest records the given ones in the
    order given); the seed is ``run.seed``; relative paths are read and written inside
    ``run.root`` and recorded as given; ``on_step``: as :func:`lm.training.train.train_lm`'s."""
    params = {"arch": arch, "lang": lang, "size": size, "epochs": epochs, "max_steps": max_steps,
              "seed": run.seed, **{k: v for k, v in options.items() if v is not None}}

    def manifest(directory: Path, metrics: dict) -> None:
        # files: the model's own files and their checksums, checked before it scores
        run.write_manifest(directory, inputs, params, metrics=metrics,
                           files=describe_outputs(directory, skip=(CHECKPOINT_FILE,)))

    def snapshot_manifest(directory: Path, metrics: dict) -> None:
        # the command line without --resume: a resumed run's snapshots are byte-identical
        # to an uninterrupted run's (the final manifest records the resuming command)
        replace(run, argv=tuple(a for a in run.argv if a != "--resume")).write_manifest(
            directory, inputs, params, metrics=metrics)

    return train_lm([run.path(p) for p in inputs], run.path(run.out), arch=arch, lang=lang, size=size,
                    seed=run.seed, max_steps=max_steps, epochs=epochs, resume=resume,
                    finalize=manifest, on_snapshot=snapshot_manifest, on_step=on_step, force=run.force,
                    **options)
