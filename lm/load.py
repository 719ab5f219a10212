"""The one way in to every model: model specifications and :func:`load_model`.

A model is named by a **spec**: a model directory (ours, ``config.json`` with a
``kind``; or a Hugging Face ``save_pretrained`` one, detected by its config.json's
``model_type``), ``hf:DIR`` (Hugging Face, said explicitly) or ``gguf:FILE.gguf``;
``[GROUP=]SPEC`` adds the label several models (seeds) share. :func:`parse_model_specs`
reads specs into :class:`ModelSpec` records (checked, kinds known, labels unique),
:func:`load_model` loads any of them as a :class:`lm.base.Scorer` through the loader
registry (:mod:`lm.loaders`, which says which options a kind gets), and
:func:`resolve_engine` says which engine runs one.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from formats.manifest import rooted
from formats.vocab import check_vocab
from lm.base import Scorer
from lm.errors import FieldError, literal
from lm.gguf.header import choose_engine
from lm.gguf.packaged import resolve_short
from lm.hf.files import check_hf_dir
from lm.loaders import accepted_options, loader_for, read_config
from lm.model_checks import check_model_files


@dataclass(frozen=True)
class ModelSpec:
    """A model named by a spec.

    directory  the model directory (``config.json`` inside), or the GGUF file
    name       unique display name (the directory name, made unique with its parent;
               "" for a spec read alone: the loader's or the directory's name)
    group      aggregation label (explicit ``GROUP=DIR``, else ``name``)
    kind       backend kind from ``config.json``; ``hf`` (Hugging Face directory) or
               ``gguf`` (GGUF file)
    """
    directory: Path
    name: str
    group: str
    kind: str


def load_model(model: str | os.PathLike | ModelSpec, **options) -> Scorer:
    """Load any model as a :class:`Scorer`: a :class:`ModelSpec`, or one spec's text
    (a model directory, ``hf:DIR``, ``gguf:FILE``). ``options`` go to the kind's loader
    (e.g. ``device="cuda"``, ``carry_state=True``, ``batch_size=256``, ``engine``; those
    it does not take: :mod:`lm.loaders`)."""
    spec = model if isinstance(model, ModelSpec) else model_spec(model)
    config = None if spec.kind == "gguf" else read_config(spec.directory)
    kind = spec.kind if config is None else config["kind"]
    loader = loader_for(kind, spec.directory)
    if config is not None:
        check_model_files(spec.directory)   # config, weights and vocabulary are the ones written together
        check_vocab(Path(spec.directory), config)
    scorer = loader(Path(spec.directory), config, **accepted_options(loader, kind, options))
    if spec.name:
        scorer.name = spec.name
    elif not scorer.name:
        scorer.name = Path(spec.directory).name
    return scorer


def resolve_engine(spec: ModelSpec, engine: str | None = None, *, dtype: str | None = None,
                   device: str | None = None) -> str | None:
    """The engine that runs ``spec``: for a GGUF file the one ``engine`` (``auto``: by
    the memory it needs, the dtype and the device) picks, chosen once so that every
    worker runs the same; for other kinds ``engine`` as given."""
    if spec.kind == "gguf":
        return choose_engine(spec.directory, engine or "auto", dtype=dtype, device=device)
    return engine


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


def _scheme(path: str, root: str | os.PathLike | None = None) -> tuple[str, str]:
    """``hf:DIR`` -> ("hf", DIR); ``gguf:FILE`` -> ("gguf", FILE); ``gguf:NAME`` of a packaged
    file (:mod:`lm.gguf.packaged`, e.g. ``gguf:gemma3-270m``) -> ("gguf", its path); else ("", path)."""
    for scheme in ("hf", "gguf"):
        if path.startswith(scheme + ":") and not Path(rooted(root, path)).exists():
            rest = path[len(scheme) + 1:]
            if scheme == "gguf":
                rest = resolve_short(rest, Path(rooted(root, rest)).exists())
            return scheme, rest
    return "", path


def _spec_kind(path: Path, scheme: str) -> str:
    """The kind of one model, checked before anything is loaded."""
    if scheme == "gguf":
        if not path.is_file():
            raise FieldError(f"{{models}} gguf:{literal(path)}: no such GGUF file")
        return "gguf"
    if scheme == "hf":
        check_hf_dir(path)
        return "hf"
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
