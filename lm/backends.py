"""One record per language-model engine: :class:`Backend`.

A backend says in one place everything the rest of agree asks of it: its kind, how a
model spec names it, how it loads, which load options it takes (a frozen dataclass,
:attr:`Backend.options`), and whether its inner states can be opened (``agree
inspect``). Each backend's folder defines its record; :data:`lm.load.BACKENDS` lists
them, and :mod:`lm.load` is the only reader (``load_model``, ``model_spec``,
``open_model``), so adding a backend touches no caller.

Options: the command line hands every model the same :class:`ModelLoading` record (a
``--device`` for a KenLM model among them: :data:`SHARED_OPTIONS` are its fields); a
backend whose options do not name one is not given it, and any other option it does not
name is an :class:`LMError` naming the option and the kind (:func:`take_options`).
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from lm.errors import LMError

@dataclass(frozen=True)
class ModelLoading:
    """How every model of a run is loaded, whatever its kind (``agree score``'s model
    options; None: the backend's default). Each backend takes the fields its own options
    record names (:meth:`Backend.take`) and is not given the others.

    batch_size, device, dtype  sequences per pass, where the weights live, their type
    convention   the text subword models read (:mod:`lm.pieces`)
    threads      each model's CPU threads (llama.cpp's and torch's)
    engine       the engine of a GGUF file or a Hugging Face directory
    carry_state  the hidden state carried across sentences (agree's LSTM)
    """
    batch_size: int | None = None
    device: str | None = None
    dtype: str | None = None
    engine: str | None = None
    threads: int | None = None
    carry_state: bool = False
    convention: str | None = "agree"

    def given(self) -> dict:
        """The options set (not None), by name: what a backend is handed."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}


#: the model options the command line hands every model, whatever its kind (the fields of
#: :class:`ModelLoading`); a kind that does not take one is not given it
SHARED_OPTIONS = tuple(f.name for f in dataclasses.fields(ModelLoading))


@dataclass(frozen=True)
class NoOptions:
    """The load options of a backend that takes none (KenLM, unigram)."""


@dataclass(frozen=True)
class Backend:
    """One language-model engine, as agree finds, loads and opens it.

    kind       the scorers' kind; a model directory's config.json names it as ``kind``
               unless the backend has a ``scheme``
    options    the frozen dataclass of the load options it takes (fields and defaults)
    load       ``(path, config, options) -> Scorer``; ``config``: the directory's
               config.json, None for a file backend
    what       the model in words, for a refusal (``"a KenLM n-gram model"``)
    scheme     the spec prefix that names it (``hf`` of ``hf:DIR``), or None
    file       whether its spec names a file (no config.json) rather than a directory
    resolve    ``(rest, exists) -> path``: what a scheme's rest names (``gguf:NAME`` of a
               packaged file); None: the rest as written
    check      ``(path) -> None``: raises when a path named with the scheme cannot be one
               of its models, before anything is loaded
    recognise  ``(config) -> bool``: a config.json without ``kind`` that is one of its
               models (Hugging Face's, by ``model_type``)
    engine     ``(path, engine, dtype, device) -> engine``: the engine that runs a model,
               chosen once for every worker; None: the ``engine`` option as given
    opener     ``(scorer) -> OpenModel | str`` (the model in words when it cannot be
               opened); None: it has no states to inspect (llama.cpp, KenLM, unigram)
    opening    ``(name, options) -> options``: the load options of a model to be opened,
               or an :class:`LMError` before it is loaded; None: as given
    """
    kind: str
    options: type
    load: Callable
    what: str = ""
    scheme: str | None = None
    file: bool = False
    resolve: Callable[[str, bool], str] | None = None
    check: Callable[[Path], None] | None = None
    recognise: Callable[[dict], bool] | None = None
    engine: Callable | None = None
    opener: Callable | None = None
    opening: Callable[[str, dict], dict] | None = None

    @property
    def described(self) -> str:
        return self.what or f"a {self.kind} model"

    def take(self, options: "dict | ModelLoading"):
        """``options`` (a dict, or the run's :class:`ModelLoading`) as this backend's
        :attr:`options` record (:func:`take_options`)."""
        if isinstance(options, ModelLoading):
            options = options.given()
        names = [f.name for f in dataclasses.fields(self.options)]
        return self.options(**take_options(names, self.kind, options))

    def load_path(self, path: str | os.PathLike, config: dict | None, options: dict):
        """The scorer of the model at ``path`` loaded with ``options`` (a dict, checked)."""
        return self.load(Path(path), config, self.take(options))


def take_options(names: Iterable[str], label: str, options: dict) -> dict:
    """The ``options`` among ``names``; the :data:`SHARED_OPTIONS` outside them are left
    out, any other is an :class:`LMError` naming it and ``label`` (the kind)."""
    names = set(names)
    unknown = sorted(k for k in options if k not in names and k not in SHARED_OPTIONS)
    if unknown:
        raise LMError(f"{label} models take no option {unknown[0]!r} "
                      f"(they take: {', '.join(sorted(names)) or 'none'})")
    return {k: v for k, v in options.items() if k in names}
