"""The one way in to every model: model specifications, :func:`load_model` and
:func:`open_model`, over the backends' records (:data:`BACKENDS`).

A model is named by a **spec**: a model directory (ours, ``config.json`` with a
``kind``; or a Hugging Face ``save_pretrained`` one, detected by its config.json's
``model_type``), or a backend's scheme and a path (``hf:DIR``, ``gguf:FILE.gguf``);
``[GROUP=]SPEC`` adds the label several models (seeds) share. :func:`parse_model_specs`
reads specs into :class:`ModelSpec` records (checked, labels unique), :func:`load_model`
loads any of them as a :class:`lm.base.Scorer` with the options its backend takes
(:mod:`lm.backends`), :func:`resolve_engine` says which engine runs one, and
:func:`open_model` / :func:`open_spec` open its states for ``agree inspect``.
"""
from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from formats.manifest import rooted
from formats.vocab import check_vocab
from lm.backends import Backend, ModelLoading
from lm.base import CONFIG_FILE, Scorer
from lm.errors import FieldError, LMError, literal
from lm.gguf.load import GGUF
from lm.hf.load import HF
from lm.kenlm.scorer import KN5
from lm.model_checks import check_model_files
from lm.neural.backend import LSTM, TRANSFORMER
from lm.open import OpenModel, cannot_open
from lm.unigram import UNIGRAM

#: every backend, one record each (lm.backends.Backend); the order in which a spec's
#: scheme and a config.json without ``kind`` are recognised
BACKENDS: tuple[Backend, ...] = (LSTM, TRANSFORMER, KN5, UNIGRAM, HF, GGUF)


@dataclass(frozen=True)
class ModelSpec:
    """A model named by a spec.

    directory  the model directory (``config.json`` inside), or the file of a file
               backend (GGUF)
    name       unique display name (the directory name, made unique with its parent;
               "" for a spec read alone: the loader's or the directory's name)
    group      aggregation label (explicit ``GROUP=DIR``, else ``name``)
    kind       the backend's kind: ``config.json``'s ``kind``, or the kind of the scheme
               the spec was written with (``hf``, ``gguf``)
    """
    directory: Path
    name: str
    group: str
    kind: str


def backend(kind: str, path: str | os.PathLike = "") -> Backend:
    """The record of ``kind``; an :class:`LMError` naming the model at ``path`` and the
    kinds a config.json may name when no backend has it."""
    found = _find(kind)
    if found is None:
        # a kind with a scheme is not written in a config.json (hf is read from model_type)
        known = ", ".join(sorted(b.kind for b in BACKENDS if b.scheme is None))
        raise LMError(f"{path}: unknown model kind {kind!r} (known: {known})")
    return found


def _find(kind: str) -> Backend | None:
    return next((b for b in BACKENDS if b.kind == kind), None)


def load_model(model: str | os.PathLike | ModelSpec, loading: ModelLoading | None = None,
               **options) -> Scorer:
    """Load any model as a :class:`Scorer`: a :class:`ModelSpec`, or one spec's text
    (a model directory, ``hf:DIR``, ``gguf:FILE``). ``loading`` (a run's options for
    every model) and ``options`` (by name, over it) go to the backend as its options
    record (e.g. ``device="cuda"``, ``carry_state=True``, ``batch_size=256``, ``engine``;
    those it does not take: :func:`lm.backends.take_options`)."""
    if loading is not None:
        options = {**loading.given(), **options}
    spec = model if isinstance(model, ModelSpec) else model_spec(model)
    found = _find(spec.kind)
    config = None if found is not None and found.file else read_config(spec.directory)
    record = found if config is None else backend(config["kind"], spec.directory)
    if config is not None:
        check_model_files(spec.directory)   # config, weights and vocabulary are the ones written together
        check_vocab(Path(spec.directory), config)
    scorer = record.load_path(spec.directory, config, options)
    if spec.name:
        scorer.name = spec.name
    elif not scorer.name:
        scorer.name = Path(spec.directory).name
    return scorer


def resolve_engine(spec: ModelSpec, engine: str | None = None, *, dtype: str | None = None,
                   device: str | None = None) -> str | None:
    """The engine that runs ``spec``, chosen once so that every worker runs the same: the
    backend's choice where it has one (a GGUF file: by the memory it needs, the dtype and
    the device, for ``engine`` auto), else ``engine`` as given."""
    found = _find(spec.kind)
    if found is not None and found.engine is not None:
        return found.engine(spec.directory, engine, dtype, device)
    return engine


def open_model(scorer: Scorer) -> OpenModel:
    """The :class:`OpenModel` of a loaded scorer, by its backend's opener; one
    :class:`LMError` (:func:`lm.open.cannot_open`) saying what it is when it has no
    states to open (KenLM, unigram, masked models, llama.cpp)."""
    record = _find(getattr(scorer, "kind", ""))
    opened = record.opener(scorer) if record is not None and record.opener is not None else None
    if opened is None or isinstance(opened, str):
        raise cannot_open(scorer.name, opened or _in_words(scorer, record))
    return opened


def open_spec(model: str | os.PathLike | ModelSpec, **options) -> OpenModel:
    """A model loaded to be opened (:func:`load_model`, :func:`open_model`), with the
    options its backend opens it with; a backend that cannot open it with those refuses
    before anything is loaded (a GGUF file on llama.cpp)."""
    spec = model if isinstance(model, ModelSpec) else model_spec(model)
    found = _find(spec.kind)
    if found is not None and found.opening is not None:
        options = found.opening(spec.name or Path(spec.directory).name, options)
    return open_model(load_model(spec, **options))


def _in_words(scorer: Scorer, record: Backend | None) -> str:
    if getattr(scorer, "context", "prefix") == "sentence":
        return "a masked model"
    if record is not None:
        return record.described
    return f"a {getattr(scorer, 'kind', '') or type(scorer).__name__} model"


def read_config(model_dir: str | os.PathLike) -> dict:
    """The config.json of a model directory: ours, or one a backend recognises without a
    ``kind`` (Hugging Face's, as kind ``hf``)."""
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
    if isinstance(config, dict) and "kind" not in config:
        found = next((b for b in BACKENDS if b.recognise is not None and b.recognise(config)), None)
        if found is not None:
            return {**config, "kind": found.kind}
    if not isinstance(config, dict) or "kind" not in config:
        raise LMError(f"{path}: neither a model directory of ours (no 'kind') nor a "
                      "Hugging Face model (no 'model_type')")
    return config


# --------------------------------------------------------------------------- specs

def model_spec(text: str | os.PathLike, root: str | os.PathLike | None = None) -> ModelSpec:
    """One spec (no group, no glob) as a :class:`ModelSpec` whose name is left to the loader."""
    scheme, path = _scheme(str(text), root)
    path = Path(rooted(root, path))
    return ModelSpec(path, "", "", _spec_kind(path, scheme))


def parse_model_specs(values: Sequence[str], root: str | os.PathLike | None = None) -> list[ModelSpec]:
    """Parse ``[GROUP=]SPEC`` values (the ``models`` field). A directory may be a glob
    (``lstm=runs/seed*``) so that one value names all seeds of a group. Without
    ``GROUP=`` a model's label is its directory (or file) name, made unique with its
    parent folders when two share it. ``root``: where relative paths are read (see
    :func:`split_model_value`)."""
    specs: list[tuple[Path, str | None, str]] = []
    for value in values:
        group, scheme, paths = split_model_value(value, root)
        specs += [(Path(p), group or None, scheme) for p in paths]
    seen: set[str] = set()
    for d, _, _ in specs:
        if os.path.abspath(d) in seen:
            raise FieldError(f"{{models}}: {literal(d)} is given twice")
        seen.add(os.path.abspath(d))
    names = _unique_names([d for d, _, _ in specs])
    out = []
    for (directory, group, scheme), name in zip(specs, names):
        out.append(ModelSpec(directory, name, group or name, _spec_kind(directory, scheme)))
    return out


def split_model_value(value: str, root: str | os.PathLike | None = None) -> tuple[str, str, list[str]]:
    """One ``[GROUP=]SPEC`` value -> (group or "", scheme ``hf``/``gguf``/"", the paths
    it names: a glob expanded, sorted). An error when a glob matches nothing.
    ``root``: where a relative path is read (:func:`formats.manifest.rooted`; the paths
    come back under it)."""
    group, _, path = value.partition("=") if "=" in value and not Path(rooted(root, value)).exists() \
        else ("", "", value)
    scheme, path = _scheme(path, root)
    path = str(rooted(root, path))
    paths = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
    if not paths:
        raise FieldError(f"{{models}} {literal(value)}: no directory matches {literal(repr(path))}")
    return group, scheme, paths


def spec_path(value: str) -> str:
    """The path a spec's text names as written: a backend's scheme (``hf:``, ``gguf:``)
    left out, nothing resolved (the file or directory a run records as its input)."""
    return next((value[len(b.scheme) + 1:] for b in BACKENDS
                 if b.scheme and value.startswith(b.scheme + ":")), value)


def _scheme(path: str, root: str | os.PathLike | None = None) -> tuple[str, str]:
    """A backend's ``SCHEME:PATH`` -> (scheme, the path it names: ``hf:DIR`` -> ("hf", DIR);
    ``gguf:NAME`` of a packaged file, e.g. ``gguf:gemma3-270m`` -> ("gguf", its path));
    a path that exists as written, or has no scheme -> ("", path)."""
    for b in BACKENDS:
        if b.scheme and path.startswith(b.scheme + ":") and not Path(rooted(root, path)).exists():
            rest = path[len(b.scheme) + 1:]
            if b.resolve is not None:
                rest = b.resolve(rest, Path(rooted(root, rest)).exists())
            return b.scheme, rest
    return "", path


def _spec_kind(path: Path, scheme: str) -> str:
    """The kind of one model, checked before anything is loaded."""
    for b in BACKENDS:
        if scheme and b.scheme == scheme:
            if b.check is not None:
                b.check(path)
            return b.kind
    return str(read_config(path)["kind"])


def _unique_names(dirs: Sequence[Path]) -> list[str]:
    """Directory names; a name shared by several directories gets parent folders
    added (``a/model``, ``b/model``) until it is unique."""
    parts = [Path(os.path.abspath(d)).parts for d in dirs]
    depth = [1] * len(dirs)
    while True:
        names = [os.path.join(*p[-k:]) for p, k in zip(parts, depth)]
        clash = [i for i, n in enumerate(names) if names.count(n) > 1 and depth[i] < len(parts[i])]
        if not clash:
            return names
        for i in clash:
            depth[i] += 1
