"""Loading a GGUF file with the engine :func:`lm.gguf.header.choose_engine` picks: llama.cpp
(:mod:`lm.gguf.llamacpp`) or transformers (:mod:`lm.hf.load`). Both modules are cheap to
import: each imports its engine only when a model is loaded."""
from __future__ import annotations

import os

from lm.gguf.header import choose_engine
from lm.hf.load import load_gguf_transformers
from lm.gguf.llamacpp import load_llamacpp


def load_gguf(path: str | os.PathLike, engine: str = "auto", *, quiet: bool = False, **options):
    """Load a GGUF file as a :class:`lm.base.Scorer` with the engine that
    :func:`choose_engine` picks (``options`` go to that engine's loader)."""
    choice = choose_engine(path, engine or "auto", quiet=quiet)
    if choice == "llama.cpp":
        return load_llamacpp(path, **options)
    return load_gguf_transformers(path, **options)
