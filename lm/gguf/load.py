"""GGUF files as a backend (kind ``gguf``, named ``gguf:FILE`` or ``gguf:NAME`` of a
packaged file): loaded with the engine :func:`lm.gguf.header.choose_engine` picks,
llama.cpp (:mod:`lm.gguf.llamacpp`) or transformers (:mod:`lm.hf.load`). Both modules
are cheap to import: each imports its engine only when a model is loaded."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from lm.backends import Backend, take_options
from lm.errors import FieldError, literal
from lm.gguf.header import choose_engine
from lm.gguf.llamacpp import LlamaCppScorer, load_llamacpp
from lm.gguf.packaged import resolve_short
from lm.hf.load import load_gguf_transformers
from lm.open import cannot_open

#: the options each engine takes (their loaders' keyword parameters)
ENGINE_OPTIONS = {
    "llama.cpp": ("batch_size", "convention", "device", "dtype", "n_ctx", "share_prefix", "threads"),
    "transformers": ("batch_size", "convention", "device", "dtype", "threads"),
}
#: what opens where: llama.cpp has no states to read
LLAMACPP = "a GGUF model on the llama.cpp engine"


@dataclass(frozen=True)
class GGUFOptions:
    """How a GGUF file is loaded: ``engine`` (``auto``: by the memory it needs, the
    dtype and the device); every other option given (not None) goes to that engine,
    which must take it (:data:`ENGINE_OPTIONS`) unless the command line hands it to
    every model (:data:`lm.backends.SHARED_OPTIONS`)."""
    engine: str | None = "auto"
    device: str | None = None
    dtype: str | None = None
    batch_size: int | None = None
    convention: str | None = None
    threads: int | None = None
    share_prefix: bool | None = None
    n_ctx: int | None = None


def load_gguf(path: str | os.PathLike, config: None = None, options: GGUFOptions = GGUFOptions()):
    """A GGUF file as a :class:`lm.base.Scorer` on the engine :func:`choose_engine` picks."""
    choice = choose_engine(path, options.engine or "auto", dtype=options.dtype, device=options.device)
    loader = load_llamacpp if choice == "llama.cpp" else load_gguf_transformers
    given = {k: v for k, v in asdict(options).items() if v is not None and k != "engine"}
    return loader(path, **take_options(ENGINE_OPTIONS[choice], f"gguf ({choice})", given))


def _check(path: Path) -> None:
    if not path.is_file():
        raise FieldError(f"{{models}} gguf:{literal(path)}: no such GGUF file")


def _engine(path: Path, engine: str | None, dtype: str | None, device: str | None) -> str:
    return choose_engine(path, engine or "auto", dtype=dtype, device=device)


def _open(scorer):
    if isinstance(scorer, LlamaCppScorer):
        return LLAMACPP
    from lm.hf.open import open_scorer  # torch: already in, with the transformers scorer
    return open_scorer(scorer)


def _opening(name: str, options: dict) -> dict:
    """A GGUF file is opened on transformers; llama.cpp is refused before the file loads."""
    if options.get("engine") == "llama.cpp":
        raise cannot_open(name, LLAMACPP)
    return {**options, "engine": options.get("engine") or "transformers"}


#: the backend: ``gguf:FILE`` (a file, no config.json)
GGUF = Backend("gguf", GGUFOptions, load_gguf, scheme="gguf", file=True, resolve=resolve_short,
               check=_check, engine=_engine, opener=_open, opening=_opening)
