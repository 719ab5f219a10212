"""What ``agree train-lm`` writes, as a library verb: :func:`lm.training.train.train_lm` plus the
model directory's manifest.json (the CLI command and the demo call it)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from formats.manifest import describe_outputs, rooted, write_manifest
from lm.training.trainers import CHECKPOINT_FILE
from lm.training.train import TrainResult, train_lm


def train_lm_to_dir(out: str | os.PathLike, inputs: Sequence[str | os.PathLike], *, arch: str,
                    lang: str | None = None, size: str = "paper", epochs: int | None = None,
                    max_steps: int | None = None, seed: int = 1111, resume: bool = False,
                    argv: Sequence[str] = (), force: bool = False, quiet: bool = False,
                    root: str | os.PathLike | None = None, on_step=None, **options) -> TrainResult:
    """Train ``arch`` on ``inputs`` into ``out`` (see :func:`lm.training.train.train_lm`; the
    --out policy, OUT.partial, checkpoints) and write its manifest.json just before
    the rename (and each snapshot's, :mod:`lm.training.snapshots`). ``options``: train-lm's model
    and training options (None = not given; the manifest records the given ones in the
    order given); ``argv``: the command line the manifest records; ``root``: where
    relative paths, ``out`` included, are read and written, recorded as given
    (:func:`formats.manifest.rooted`); ``on_step``: as :func:`lm.training.train.train_lm`'s."""
    params = {"arch": arch, "lang": lang, "size": size, "epochs": epochs, "max_steps": max_steps,
              "seed": seed, **{k: v for k, v in options.items() if v is not None}}

    def manifest(directory: Path, metrics: dict) -> None:
        # files: the model's own files and their checksums, checked before it scores
        write_manifest(directory, "train-lm", inputs, params, metrics=metrics, argv=argv, root=root,
                       files=describe_outputs(directory, skip=(CHECKPOINT_FILE,)))

    def snapshot_manifest(directory: Path, metrics: dict) -> None:
        # the command line without --resume: a resumed run's snapshots are byte-identical
        # to an uninterrupted run's (the final manifest records the resuming command)
        write_manifest(directory, "train-lm", inputs, params, metrics=metrics,
                       argv=[a for a in argv if a != "--resume"], root=root)

    return train_lm([rooted(root, p) for p in inputs], rooted(root, out), arch=arch, lang=lang, size=size,
                    seed=seed, max_steps=max_steps, epochs=epochs, resume=resume, quiet=quiet,
                    finalize=manifest, on_snapshot=snapshot_manifest, on_step=on_step, force=force,
                    **options)
