"""Every output directory's ``manifest.json``: what ran, on which inputs (with
checksums), with which parameters and versions; and the checks of a directory's
own files against it. (The directories themselves, written whole or not at all,
are :mod:`formats.files`'s ``--out`` policy.)
"""
from __future__ import annotations

import json
import math
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Sequence

from formats.errors import AgreeError
from formats.distribution import version as distribution_version
from formats.digests import sha256_of
from formats.files import atomic_write_text, rooted

MANIFEST = "manifest.json"

# One place for the version: setup.cfg's [metadata] version, as installed (or as
# written in the tree, marked +source, when this tree was never installed).
AGREE_VERSION = distribution_version()
# Distributions whose versions every manifest records; the kenlm module comes from
# ufal.kenlm's wheel (kenlm itself where a user installed that instead).
_PACKAGES = ("torch", "numpy", "conllu", "kenlm", "ufal.kenlm", "sentencepiece", "click",
             "matplotlib", "pillow")


def describe_inputs(paths: Iterable[str | os.PathLike],
                    root: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """Path, size and sha256 of each input file (a directory: each file inside it,
    hidden files excepted). Paths are read from ``root`` (see :func:`formats.files.rooted`) and
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
                   root: str | os.PathLike | None = None, described: list[dict[str, Any]] | None = None,
                   **extra: Any) -> dict[str, Any]:
    """Write ``manifest.json``: what ran, on which inputs (with checksums), with which
    parameters and package versions, plus any command-specific counts in ``extra``.

    ``argv`` is the command line after ``agree`` (the CLI passes what it was given);
    ``root``: where relative input paths are read (:func:`formats.files.rooted`). ``described``:
    the inputs as :func:`describe_inputs` gave them when they were read (a long run records
    the checksums of what it read, and a file removed meanwhile does not fail it), instead of
    describing ``inputs`` now. No timestamp: the same inputs and seed give a byte-identical directory."""
    manifest = {
        "command": command,
        "argv": list(argv),
        "inputs": described if described is not None else describe_inputs(inputs, root),
        "parameters": {k: _jsonable(v) for k, v in parameters.items()},
        "versions": versions(),
        **{k: _jsonable(v) for k, v in extra.items()},
    }
    if (where := _non_finite(manifest)) is not None:   # NaN is not JSON, and never a result
        raise AgreeError(f"{Path(directory) / MANIFEST}: {where} is not a finite number; "
                         "nothing was written")
    atomic_write_text(Path(directory) / MANIFEST, json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    return manifest


def _non_finite(value: Any, where: str = "") -> str | None:
    """The key path of the first NaN or infinity in a JSON-like value, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where or 'a value'} ({value})"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, sub in items:
        if (found := _non_finite(sub, f"{where}.{key}" if where else str(key))) is not None:
            return found
    return None


#: the manifest key listing an output directory's own files with their checksums
OUTPUT_FILES = "files"


def describe_outputs(directory: str | os.PathLike, skip: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Name, size and sha256 of each file at the top of ``directory`` (manifest.json,
    hidden files and the names in ``skip`` excepted), for a manifest's ``files``: what
    :func:`changed_outputs` checks before the directory is used (a model's weights and
    config must be the ones written together)."""
    skipped = {MANIFEST, *skip}
    return [{"path": f.name, "bytes": f.stat().st_size, "sha256": sha256_of(f)}
            for f in sorted(Path(directory).iterdir())
            if f.is_file() and not f.name.startswith(".") and f.name not in skipped]


def changed_outputs(directory: str | os.PathLike) -> list[str]:
    """The files of ``directory`` that its manifest.json lists under ``files`` and that
    are no longer what was written (another sha256); [] without such a manifest (an
    older one, or none). A listed file that is missing is left to the reader that needs it."""
    try:
        listed = read_manifest(directory).get(OUTPUT_FILES)
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(listed, list):
        return []
    changed = []
    for entry in listed:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) \
                or Path(entry["path"]).name != entry["path"]:     # top-level names only
            continue
        path = Path(directory) / entry["path"]
        if path.is_file() and sha256_of(path) != entry.get("sha256"):
            changed.append(entry["path"])
    return changed


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
