"""Which distribution this code is, what it is called where, and its version.

Three names, on purpose different: the package index knows the project as
``agree-bench`` (``agree`` there is an unrelated project), the command is
``agree``, and the code imports as the top-level packages of
:data:`IMPORT_PACKAGES` (folders fixed by the design card). The version comes
from the installed distribution's metadata -- setup.cfg's ``[metadata] version``
as pip recorded it -- but only when that distribution is this very tree or
these very files: a source checkout run beside some other installed copy must
not report the other copy's version.
"""
from __future__ import annotations

import configparser
import json
from importlib import metadata
from pathlib import Path

#: The name on the package index: ``pip install agree-bench``.
DISTRIBUTION = "agree-bench"
#: The command installed by the distribution.
COMMAND = "agree"
#: Top-level import packages the distribution installs (setup.cfg's packages.find).
IMPORT_PACKAGES = ("agreement", "formats", "lm", "treebanks", "nonce")

_TREE = Path(__file__).resolve().parents[1]   # the folder holding formats/, agreement/ ...


def ours() -> metadata.Distribution | None:
    """The installed distribution whose files are the ones running now, or None
    (a source tree on sys.path that pip never installed, or one installed elsewhere)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    return dist if _is_this_tree(dist) else None


def _is_this_tree(dist: metadata.Distribution) -> bool:
    # A regular install: this very file is one of the distribution's files.
    here = Path(__file__).resolve()
    if any(Path(dist.locate_file(f)).resolve() == here for f in dist.files or () if f.name == here.name):
        return True
    # An editable install (pip install -e): PEP 610's direct_url.json names the tree.
    try:
        url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
    except json.JSONDecodeError:
        return False
    return url.startswith("file://") and Path(url[len("file://"):]).resolve() == _TREE


def source_tree_record(dist: metadata.Distribution) -> bool:
    """Whether ``dist`` is build metadata lying in this source tree (an ``*.egg-info``
    that setuptools wrote beside setup.cfg, on sys.path when Python runs from the
    tree), not an installed distribution. Installed into site-packages, this code
    sits beside every other distribution there: those are never build metadata."""
    return ((_TREE / "setup.cfg").is_file() and dist.read_text("SOURCES.txt") is not None
            and Path(dist.locate_file("")).resolve() == _TREE)


def source_version() -> str:
    """setup.cfg's version with a ``+source`` local label, read from the tree
    (``0+unknown`` when there is no setup.cfg beside the packages)."""
    cfg = configparser.ConfigParser()
    try:
        cfg.read(_TREE / "setup.cfg", encoding="utf-8")
        return f"{cfg['metadata']['version']}+source"
    except (KeyError, configparser.Error, UnicodeDecodeError):
        return "0+unknown"


def version() -> str:
    """The version of the running code: the installed metadata's when the installed
    distribution is this code, else :func:`source_version`."""
    dist = ours()
    return dist.version if dist is not None else source_version()


def install_command(extra: str | None = None) -> str:
    """The one command that installs the distribution (with ``extra``): pip keeps an
    installed (editable) agree-bench and adds only the extra's requirements."""
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {DISTRIBUTION}"
