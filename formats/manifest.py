"""Output directories that appear whole or not at all, and their manifests.

Every command writes into a temporary sibling of ``--out`` and renames it into
place only when everything succeeded, so an error or an interrupt never leaves
a half-written directory where a user (or the next command) would read it.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from formats.distribution import version as distribution_version
from formats.files import claim_output, commit_dir, make_tmp_dir, sha256_of

MANIFEST = "manifest.json"

# One place for the version: setup.cfg's [metadata] version, as installed (or as
# written in the tree, marked +source, when this tree was never installed).
AGREE_VERSION = distribution_version()
# Distributions whose versions every manifest records; the kenlm module comes from
# ufal.kenlm's wheel (kenlm itself where a user installed that instead).
_PACKAGES = ("torch", "numpy", "conllu", "kenlm", "ufal.kenlm", "sentencepiece", "click",
             "mwxml", "mwparserfromhell", "matplotlib")


@contextmanager
def atomic_output_dir(out: str | os.PathLike, command: str | None = None, inputs: Iterable = (),
                      force: bool = False, quiet: bool = False) -> Iterator[Path]:
    """Yield a fresh temporary directory beside ``out``; on success it replaces ``out``.

    The one ``--out`` policy (see :mod:`formats.files`): ``out`` is checked before any
    work (an existing directory is replaced only when it is empty or an output of
    ``agree COMMAND``, or with ``force``; it may not be, contain or lie inside one
    of ``inputs``), locked while the command runs, and leftovers of killed runs
    beside it are removed. On any exception (or KeyboardInterrupt) the temporary
    directory is removed and ``out`` is left exactly as it was.
    """
    with claim_output(out, command, inputs, force, quiet) as target:
        tmp = None
        try:
            tmp = make_tmp_dir(target)
            yield tmp
        except BaseException:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        try:
            commit_dir(tmp, target, command, force)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; match a plain open()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def rooted(root: str | os.PathLike | None, path: str | os.PathLike | None) -> str | os.PathLike | None:
    """``path`` read from ``root`` (a relative path is taken inside it; ``root`` None:
    the working directory, and ``path`` is returned as it is). A library verb given
    ``root`` reads ``rooted(root, p)`` and records ``p`` as given, so that a pipeline
    built inside one directory (agree demo) records paths relative to it without
    changing the working directory."""
    if path is None or root is None:
        return path
    return Path(root, path)


def as_given(path: str | os.PathLike, root: str | os.PathLike | None) -> str | os.PathLike:
    """The inverse of :func:`rooted`: a path found under ``root`` as the path relative
    to it that the caller named (unchanged when ``root`` is None or it lies elsewhere)."""
    if root is None:
        return path
    try:
        return Path(path).relative_to(root)
    except ValueError:
        return path


def describe_inputs(paths: Iterable[str | os.PathLike],
                    root: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """Path, size and sha256 of each input file (a directory: each file inside it,
    hidden files excepted). Paths are read from ``root`` (see :func:`rooted`) and
    recorded as given."""
    rows = []
    for p in paths:
        p = Path(p)
        where = Path(rooted(root, p))
        files = sorted(f for f in where.rglob("*") if f.is_file()) if where.is_dir() else [where]
        for f in files:
            if f.name.startswith("."):
                continue
            rows.append({"path": str(p / f.relative_to(where)) if f != where else str(p),
                         "bytes": f.stat().st_size, "sha256": sha256_of(f)})
    return rows


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "agree": AGREE_VERSION}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def write_manifest(directory: str | os.PathLike, command: str, inputs: Iterable[str | os.PathLike],
                   parameters: dict[str, Any], *, argv: Sequence[str] = (),
                   root: str | os.PathLike | None = None, **extra: Any) -> dict[str, Any]:
    """Write ``manifest.json``: what ran, on which inputs (with checksums), with which
    parameters and package versions, plus any command-specific counts in ``extra``.

    ``argv`` is the command line after ``agree`` (the CLI passes what it was given);
    ``root``: where relative input paths are read (:func:`rooted`). No timestamp: the same inputs and seed give a byte-identical directory."""
    manifest = {
        "command": command,
        "argv": list(argv),
        "inputs": describe_inputs(inputs, root),
        "parameters": {k: _jsonable(v) for k, v in parameters.items()},
        "versions": versions(),
        **{k: _jsonable(v) for k, v in extra.items()},
    }
    atomic_write_text(Path(directory) / MANIFEST, json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    return manifest


def read_manifest(directory: str | os.PathLike) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _jsonable(v: Any) -> Any:
    if isinstance(v, Path):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return v
