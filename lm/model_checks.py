"""What a model directory must pass before it scores anything.

A model directory is several files written together (config.json, the weights,
vocab.txt, ...). Scored after one of them was edited or swapped for another
model's, it would give numbers without a word: these checks refuse it first, and
say which file is wrong.

- :func:`check_model_files`: the files its manifest.json lists (``agree train-lm``
  and ``import-model`` record each one's sha256) are the ones written;
- :func:`check_config_matches`: config.json's architecture fields are those the
  weights were trained with (model.pt keeps its own copy);
- :func:`check_config_types`: each architecture field has its type (a size is an
  integer, not ``"2"``);
- :func:`check_finite_weights`: no weight is NaN or infinite.

Torch-free: tensors are used through their methods only.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping

from formats.manifest import MANIFEST, changed_outputs
from lm.errors import LMError

#: the types of the architecture fields of a neural model's config.json (lm.neural.models.LMConfig)
FIELD_TYPES = {"kind": str, "vocab_size": int, "emb_size": int, "hidden_size": int, "layers": int,
               "dropout": float, "tied": bool, "heads": int, "max_len": int, "tokenizer": str}


def check_model_files(model_dir: str | os.PathLike) -> None:
    """Raise :class:`LMError` naming every file of ``model_dir`` whose sha256 differs from
    the one its manifest.json recorded (nothing to check without such a manifest)."""
    model_dir = Path(model_dir)
    changed = changed_outputs(model_dir)
    if not changed:
        return
    names = ", ".join(changed)
    one = len(changed) == 1
    raise LMError(f"{model_dir / changed[0] if one else model_dir}: {names} "
                  f"{'has' if one else 'have'} changed since the model was written (the sha256 "
                  f"differs from the one in {MANIFEST}); restore the original "
                  f"{'file' if one else 'files'}, or train or import the model again")


def check_config_types(config: Mapping, path: str | os.PathLike) -> None:
    """Each architecture field present in ``config`` has its type (:data:`FIELD_TYPES`)."""
    for name, kind in FIELD_TYPES.items():
        if name not in config:
            continue
        value = config[name]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            raise LMError(f"{path}: {name} is {value!r} ({type(value).__name__}), expected "
                          f"{'a number' if kind is float else 'an integer' if kind is int else kind.__name__}")


def check_config_matches(config: Mapping, trained: Mapping, config_path: str | os.PathLike,
                         weights_path: str | os.PathLike) -> None:
    """config.json's architecture fields equal the ones the weights were trained with
    (``trained``: the configuration stored beside them)."""
    for name in FIELD_TYPES:
        if name in config and name in trained and config[name] != trained[name]:
            raise LMError(f"{config_path}: {name} is {config[name]!r} but {Path(weights_path).name} was "
                          f"trained with {trained[name]!r}; config.json was edited or the weights "
                          "are another model's (restore the original files)")


def check_finite_weights(tensors: Iterable, path: str | os.PathLike) -> None:
    """Every floating-point tensor of ``tensors`` ((name, tensor) pairs) is finite."""
    for name, t in tensors:
        # a finite sum has no NaN or infinity among its terms: one pass, no mask of the
        # tensor's size (a sum that overflows is checked element by element)
        if t.is_floating_point() and not bool(t.sum().isfinite()) and not bool(t.isfinite().all()):
            bad = int((~t.isfinite()).sum())
            raise LMError(f"{path}: {name} holds {bad} NaN or infinite values (a diverged or "
                          "damaged model); it cannot score")
