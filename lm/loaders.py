"""The loader registry: model kind -> the function that loads it.

Each backend module registers ``loader(path, config, **options)`` for its kinds with
:func:`register` (the *training* registry, architecture -> trainer, is
:mod:`lm.training.trainers`); :func:`lm.load.load_model`, the one way in to every model,
looks kinds up here. The modules are imported lazily, when a kind is first loaded, so
that scoring a KenLM model does not import torch, and vice versa.

Options: a loader declares the options it takes as keyword parameters, and gets only
those (:func:`accepted_options`). The command line hands every model the same
:data:`SHARED_OPTIONS` (a ``--device`` for a KenLM model among them): a kind that does
not take one of these is not given it; any other option a kind does not take is an
:class:`LMError` naming the option and the kind.
"""
from __future__ import annotations

import inspect
import json
import os
from pathlib import Path
from typing import Callable

from lm.base import CONFIG_FILE, Scorer
from lm.errors import LMError
from lm.heavy import import_heavy

#: kind -> module that registers its loader (imported when the kind is first loaded)
_BACKEND_MODULES = {
    "lstm": "lm.neural.scorer",
    "transformer": "lm.neural.scorer",
    "kn5": "lm.kenlm.scorer",
    "unigram": "lm.unigram",
    "hf": "lm.hf.load",  # a Hugging Face save_pretrained directory (see read_config)
    "gguf": "lm.gguf.load",  # a GGUF file (gguf:FILE), not a directory
}
_LOADERS: dict[str, Callable[..., Scorer]] = {}
#: the model options the command line hands every model, whatever its kind; a kind
#: that does not take one is not given it
SHARED_OPTIONS = ("device", "dtype", "batch_size", "convention", "threads", "engine",
                  "carry_state")


def register(kind: str, loader: Callable[..., Scorer]) -> None:
    """Register ``loader(path, config, **options) -> Scorer`` for a kind (``config``:
    the directory's config.json; None for a GGUF file)."""
    _LOADERS[kind] = loader


def read_config(model_dir: str | os.PathLike) -> dict:
    """The config.json of a model directory (ours, or Hugging Face's as kind ``hf``)."""
    model_dir = Path(model_dir)
    path = model_dir / CONFIG_FILE
    if not model_dir.is_dir():
        raise LMError(f"{model_dir}: no such model directory")
    if not path.exists():
        raise LMError(f"{model_dir}: not a model directory (no {CONFIG_FILE}); "
                      "make one with `agree train-lm`")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LMError(f"{path}: unreadable model config ({e})") from None
    if isinstance(config, dict) and "kind" not in config and "model_type" in config:
        return {**config, "kind": "hf"}  # Hugging Face's config.json: lm.hf.load reads it
    if not isinstance(config, dict) or "kind" not in config:
        raise LMError(f"{path}: neither a model directory of ours (no 'kind') nor a "
                      "Hugging Face model (no 'model_type')")
    return config


def loader_for(kind: str, path) -> Callable[..., Scorer]:
    """The loader registered for ``kind`` (its module imported on first use); ``path``: the
    model, for the message when no backend knows the kind."""
    if kind not in _LOADERS and kind in _BACKEND_MODULES:
        import_heavy(_BACKEND_MODULES[kind])
    if kind not in _LOADERS:
        # "hf" is not written in a config.json: read_config infers it from model_type
        known = ", ".join(sorted(k for k in _BACKEND_MODULES if k not in ("hf", "gguf")))
        raise LMError(f"{path}: unknown model kind {kind!r} (known: {known})")
    return _LOADERS[kind]


def accepted_options(loader: Callable, kind: str, options: dict) -> dict:
    """The ``options`` that ``loader`` declares; the :data:`SHARED_OPTIONS` it does not
    declare are left out, any other is an :class:`LMError` naming it and ``kind``."""
    takes = {name for name, p in inspect.signature(loader).parameters.items()
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    unknown = sorted(k for k in options if k not in takes and k not in SHARED_OPTIONS)
    if unknown:
        declared = ", ".join(sorted(takes - {"path", "model_dir", "config"})) or "none"
        raise LMError(f"{kind} models take no option {unknown[0]!r} (they take: {declared})")
    return {k: v for k, v in options.items() if k in takes}
