"""Loading a GGUF file (kind ``gguf``, registered in :mod:`lm.loaders`) with the engine
:func:`lm.gguf.header.choose_engine` picks: llama.cpp (:mod:`lm.gguf.llamacpp`) or
transformers (:mod:`lm.hf.load`). Both modules are cheap to import: each imports its
engine only when a model is loaded."""
from __future__ import annotations

import os

from lm.gguf.header import choose_engine
from lm.gguf.llamacpp import load_llamacpp
from lm.hf.load import load_gguf_transformers
from lm.loaders import accepted_options, register


def load_gguf(path: str | os.PathLike, config: None = None, *, engine: str | None = "auto",
              device: str | None = None, dtype: str | None = None,
              batch_size: int | None = None, convention: str | None = None,
              threads: int | None = None, share_prefix: bool | None = None,
              n_ctx: int | None = None):
    """Load a GGUF file as a :class:`lm.base.Scorer` with the engine that
    :func:`choose_engine` picks; each option given (not None) goes to that engine's
    loader, which must take it unless the command line hands it to every model
    (:data:`lm.loaders.SHARED_OPTIONS`)."""
    choice = choose_engine(path, engine or "auto", dtype=dtype, device=device)
    loader = load_llamacpp if choice == "llama.cpp" else load_gguf_transformers
    given = {k: v for k, v in (("device", device), ("dtype", dtype), ("batch_size", batch_size),
                               ("convention", convention), ("threads", threads),
                               ("share_prefix", share_prefix), ("n_ctx", n_ctx)) if v is not None}
    return loader(path, **accepted_options(loader, f"gguf ({choice})", given))


register("gguf", load_gguf)
