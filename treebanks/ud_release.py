"""A folder of many UD treebanks, as a release lays it out: which treebanks it holds,
their files, language codes, names and licences.

Two layouts are read alike: a UD release (``UD_Italian-ISDT/it_isdt-ud-test.conllu``,
each folder with ``LICENSE.txt`` and a ``README.md`` whose metadata has a ``License:``
line) and ``../shared/data/ud`` (``it_isdt/it_isdt-ud-test.conllu[.gz]``, each folder
with ``LICENSE.txt``; a ``TREEBANKS.md`` at the top whose table gives each folder's
language, repository, commit and licence).

* **Treebank and language** come from the file name, as UD names its files: the
  treebank is the name before ``-ud-`` (``it_isdt``), the language the code before
  its first ``_`` (``it``, ``hyw``, ``orv``). A ``.conllu`` file named otherwise has
  no language and is skipped, with the reason (:attr:`UdFolder.skipped`).
* **Each file once**: the walk follows no symbolic link to a folder and no link out of
  the folder, and reads a file linked to from inside it once; a copy of a treebank file
  (the same name and bytes in another folder) is read once, and two different files of
  one name are a conflict of their language (item ids are made of file names). What is
  left out, and the folders that cannot be listed, are said, never dropped silently.
* **Licence**: each source that says one is read (the README's ``License:`` line,
  the TREEBANKS.md table, the licence named in LICENSE.txt) and the first of them in
  that order is the treebank's; when they differ, all are kept
  (:attr:`Treebank.licences`) and the treebank counts as NonCommercial when any says
  so: a derived release must not lose an NC clause to a stale file.
* **Language name**: the TREEBANKS.md table's, else the repository folder's
  (``UD_Old_French-PROFITEROLE`` -> ``Old French``), else :data:`COMMON_NAMES`, else none.
"""
from __future__ import annotations

import dataclasses
import errno
import filecmp
import os
import re
from dataclasses import dataclass
from pathlib import Path

from treebanks.errors import TreebankError
from treebanks.reader import SUFFIXES

#: the table a folder of treebanks may carry at its top (../shared/data/ud has one)
TABLE_FILE = "TREEBANKS.md"
LICENCE_FILE = "LICENSE.txt"
README_FILE = "README.md"
_CODE = re.compile(r"[a-z]{2,3}")
_UD_FOLDER = re.compile(r"UD_(?P<language>[^-]+)-(?P<treebank>.+)")
_README_LICENCE = re.compile(r"^License:\s*(?P<licence>\S.*?)\s*$", re.M)
#: the last resort for a language's name, for folders named as files are (``en_ewt``) that
#: no TREEBANKS.md row describes: the languages with the most UD treebanks
COMMON_NAMES = {"ar": "Arabic", "cs": "Czech", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
                "fr": "French", "it": "Italian", "ja": "Japanese", "ko": "Korean", "nl": "Dutch", "pl": "Polish",
                "pt": "Portuguese", "ru": "Russian", "zh": "Chinese"}
#: licence names as LICENSE.txt files write them, the earliest in the text wins
_LICENCE_PATTERNS = (
    (re.compile(r"creativecommons\.org/licenses/(?P<kind>by(?:-nc)?(?:-sa|-nd)?)/(?P<version>\d\.\d)", re.I),
     lambda m: f"CC {m['kind'].upper()} {m['version']}"),
    (re.compile(r"Attribution(?P<nc>-NonCommercial)?(?P<sa>-ShareAlike|-NoDerivatives|-NoDerivs)?\s+"
                r"(?P<version>\d\.\d)"),
     lambda m: "CC BY" + ("-NC" if m["nc"] else "") + ({"-ShareAlike": "-SA"}.get(m["sa"], "-ND") if m["sa"] else "")
     + f" {m['version']}"),
    (re.compile(r"\b(?:CC|Creative Commons)[ -](?P<kind>BY(?:-NC)?(?:-SA|-ND)?)\s+(?P<version>\d\.\d)"),
     lambda m: f"CC {m['kind']} {m['version']}"),
    (re.compile(r"Lesser General Public License[^\n]*Linguistic Resources|LGPL-LR", re.I), lambda m: "LGPL-LR"),
    (re.compile(r"Lesser General Public License|\bLGPL\b", re.I), lambda m: "LGPL"),
    (re.compile(r"GNU General Public License", re.I), lambda m: "GPL"),
    (re.compile(r"Apache License", re.I), lambda m: "Apache-2.0"),
    (re.compile(r"\bMIT License\b", re.I), lambda m: "MIT"),
)


@dataclass(frozen=True)
class Treebank:
    """One treebank of the folder.

    name       the file names' treebank part: ``it_isdt``
    language   its UD language code: ``it``
    directory  the folder its files are in
    files      its ``.conllu[.gz|.bz2]`` files, sorted
    language_name  ``Italian`` (TREEBANKS.md, else the UD_ folder's name), or ""
    repository the UD repository: ``UD_Italian-ISDT``, or ""
    commit     the repository commit TREEBANKS.md gives, or ""
    licences   (source, licence) per source that names one: ``README.md``,
               ``TREEBANKS.md``, ``LICENSE.txt``, in that order of trust
    """
    name: str
    language: str
    directory: Path
    files: tuple[Path, ...]
    language_name: str = ""
    repository: str = ""
    commit: str = ""
    licences: tuple[tuple[str, str], ...] = ()

    @property
    def licence(self) -> str:
        """The licence (the most trusted source's), with any other source that says
        otherwise: ``CC BY-NC-SA 4.0 (LICENSE.txt: CC BY-SA 4.0)``; ``unknown`` when
        no source names one."""
        if not self.licences:
            return "unknown"
        first = self.licences[0][1]
        others = [f"{src}: {lic}" for src, lic in self.licences[1:] if lic != first]
        return first + (f" ({'; '.join(others)})" if others else "")

    @property
    def noncommercial(self) -> bool:
        """Whether any source gives a NonCommercial licence."""
        return any("-NC" in lic or "NonCommercial" in lic for _, lic in self.licences)


@dataclass(frozen=True)
class UdFolder:
    """What :func:`read_ud_folder` found: the treebanks (sorted by name), the files and
    folders it skipped, each with why, the folders it could not read, and the languages
    whose files conflict (two different treebank files of one name)."""
    path: Path
    treebanks: tuple[Treebank, ...]
    skipped: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()     #: folders it could not list, each with why
    conflicts: dict = dataclasses.field(default_factory=dict)   #: language code -> why it cannot be mined


def treebank_of(file: Path) -> tuple[str, str] | None:
    """(treebank, language) of a UD file name (``it_isdt-ud-test.conllu.gz`` ->
    ``("it_isdt", "it")``), or None when the name starts with no language code."""
    stem = file.name
    for suffix in SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    name = stem.split("-ud-")[0]
    code, sep, _ = name.partition("_")
    if not sep or not _CODE.fullmatch(code):
        return None
    return name, code


def read_ud_folder(path: str | os.PathLike) -> UdFolder:
    """The treebanks under ``path`` (any depth; hidden folders skipped; the walk rules
    in :class:`_Walk`). Raises :class:`TreebankError` when ``path`` is not a directory or
    holds no treebank file."""
    root = Path(path)
    if not root.is_dir():
        raise TreebankError(f"{root}: not a directory (a folder of UD treebanks is expected)")
    walk = _Walk(root)
    files = walk.files()
    if not files:
        unread = f" ({walk.unreadable[0]})" if walk.unreadable else ""
        raise TreebankError(f"{root}: no {', '.join(SUFFIXES)} file in it or in its folders{unread}")
    table = read_treebank_table(root / TABLE_FILE)
    groups: dict[tuple[Path, str], list[Path]] = {}
    codes: dict[tuple[Path, str], str] = {}
    skipped = list(walk.skipped)
    for f in files:
        found = treebank_of(f)
        if found is None:
            skipped.append(f"{f}: the file name does not start with a language code and '_' "
                           f"(UD names its files xx_treebank-ud-split.conllu)")
            continue
        key = (f.parent, found[0])
        groups.setdefault(key, []).append(f)
        codes[key] = found[1]
    treebanks = [_treebank(name, codes[(d, name)], d, tuple(fs), table) for (d, name), fs in groups.items()]
    if not treebanks:
        raise TreebankError(f"{root}: no treebank file named as UD names them (xx_treebank-ud-split.conllu); "
                            f"{skipped[0]}")
    treebanks.sort(key=lambda t: (t.name, str(t.directory)))
    treebanks, copies, conflicts = _one_of_each(treebanks)
    return UdFolder(root, tuple(treebanks), tuple(skipped + copies), tuple(walk.unreadable), conflicts)


class _Walk:
    """The files of a folder of treebanks, each read once. The walk follows no symbolic
    link to a folder (one that leads back into the folder would give every treebank
    again, one that leads out of it reads what is not the folder's) and no link to a
    file outside the folder; a link to a file inside it is read once, as that file.
    What it leaves out is said (``skipped``), as are the folders it cannot list
    (``unreadable``): nothing is left out without a word."""

    def __init__(self, root: Path):
        self.root, self.real_root = root, os.path.realpath(root)
        self.skipped: list[str] = []
        self.unreadable: list[str] = []

    def files(self) -> list[Path]:
        """The treebank-named files (``SUFFIXES``), sorted, each real file once."""
        found: list[tuple[Path, bool]] = []     # (path, is a symbolic link)
        stack = [self.root]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as e:
                self.unreadable.append(f"{folder}: {os_reason(e)}")
                continue
            subdirs = self._entries(folder, entries, found)
            stack.extend(reversed(subdirs))
        return self._once(sorted(found))

    def _entries(self, folder: Path, entries, found: list) -> list[Path]:
        subdirs, treebank_files = [], 0
        for e in entries:
            if e.name.startswith("."):
                continue
            path = Path(e.path)
            if e.is_symlink():
                treebank_files += self._link(path, found)
            elif e.is_dir(follow_symlinks=False):
                subdirs.append(path)
            elif e.name.endswith(SUFFIXES):
                treebank_files += 1
                if e.is_file(follow_symlinks=False):
                    found.append((path, False))
                else:   # opening a pipe would wait for a writer that never comes
                    self.skipped.append(f"{path}: not a regular file (a pipe, socket or device), not read")
        if not subdirs and not treebank_files and folder != self.root:
            self.skipped.append(f"{folder}: no {SUFFIXES[0]} file in this folder")
        return subdirs

    def _link(self, path: Path, found: list) -> int:
        real = os.path.realpath(path)
        inside = real == self.real_root or real.startswith(self.real_root.rstrip(os.sep) + os.sep)
        if os.path.isdir(path):
            where = "back into" if inside else "out of"
            self.skipped.append(f"{path}: a symbolic link to a folder ({real}), not followed: it leads {where} "
                                f"the folder")
            return 0
        if not path.name.endswith(SUFFIXES):
            return 0
        if os.path.exists(path) and not inside:
            self.skipped.append(f"{path}: a symbolic link out of the folder (to {real}), not followed")
            return 0
        found.append((path, True))   # a dangling link or a loop too: reading it fails its language, saying why
        return 1

    def _once(self, found: list[tuple[Path, bool]]) -> list[Path]:
        """One path per real file: the file itself rather than a link to it."""
        by_real: dict[str, Path] = {}
        for path, link in sorted(found, key=lambda f: f[1]):      # files before links
            real = os.path.realpath(path) if os.path.exists(path) else str(path)
            if real in by_real:
                self.skipped.append(f"{path}: a symbolic link to {by_real[real]}, which is read once")
            else:
                by_real[real] = path
        return sorted(by_real.values())


def os_reason(e: OSError) -> str:
    """An OS error in words (``permission denied``), without the path it names."""
    return (e.strerror or str(e)).lower()


def unreadable_file(path: Path) -> str | None:
    """Why a treebank file cannot be read (a dangling link, a link loop, no permission),
    or None when it can be opened."""
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as e:
        if os.path.islink(path) and not os.path.exists(path):
            target = os.readlink(path)
            what = "a symbolic-link loop" if e.errno == errno.ELOOP else f"a symbolic link to a missing file ({target})"
            return f"{path}: cannot be read: {what}"
        return f"{path}: cannot be read ({os_reason(e)})"
    return None


def _one_of_each(treebanks: list[Treebank]) -> tuple[list[Treebank], list[str], dict[str, str]]:
    """Each treebank file once: item ids are made of file names, so two files of one
    name (a copy of a treebank in another folder) would repeat them in a release. A
    copy with the same bytes is left out, with a word; two different files of one name
    are a conflict of their language (code -> message)."""
    first: dict[str, Path] = {}
    copies, conflicts, drop = [], {}, set()
    for t in treebanks:
        for f in t.files:
            stem = _stem(f)
            if stem not in first:
                first[stem] = f
            elif _same_bytes(first[stem], f):
                copies.append(f"{f}: a copy of {first[stem]} (the same bytes), read once")
                drop.add(f)
            else:
                conflicts.setdefault(t.language, f"two different treebank files named {stem}: {first[stem]} and {f} "
                                                  f"(item ids would repeat in the release); keep one of them")
    kept = []
    for t in treebanks:
        files = tuple(f for f in t.files if f not in drop)
        if files:
            kept.append(dataclasses.replace(t, files=files))
    return kept, copies, conflicts


def _stem(file: Path) -> str:
    name = file.name
    return next((name[: -len(s)] for s in SUFFIXES if name.endswith(s)), name)


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def _treebank(name: str, code: str, directory: Path, files: tuple[Path, ...], table: dict) -> Treebank:
    row = table.get(directory.name) or table.get(name) or {}
    licences = []
    readme = _text(directory / README_FILE)
    if readme and (m := _README_LICENCE.search(readme)):
        licences.append((README_FILE, m["licence"]))
    if row.get("licence"):
        licences.append((TABLE_FILE, row["licence"].split(" (")[0].strip()))
    if (found := licence_in_text(_text(directory / LICENCE_FILE))):
        licences.append((LICENCE_FILE, found))
    m = _UD_FOLDER.fullmatch(directory.name)
    repository = row.get("ud repository") or (directory.name if m else "")
    language_name = (row.get("language") or (m["language"].replace("_", " ") if m else "")
                     or COMMON_NAMES.get(code, ""))
    return Treebank(name, code, directory, files, language_name, repository, row.get("commit", ""),
                    tuple(licences))


def licence_in_text(text: str) -> str:
    """The licence a LICENSE.txt names first (``CC BY-NC-SA 3.0``, ``LGPL-LR``...), or ""."""
    best = None
    for pattern, name in _LICENCE_PATTERNS:
        m = pattern.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), name(m))
    return best[1] if best else ""


def read_treebank_table(path: Path) -> dict[str, dict[str, str]]:
    """TREEBANKS.md's table (the first whose header has ``folder``) as folder ->
    {lowercased column: cell}; {} when there is no such file or table."""
    rows: dict[str, dict[str, str]] = {}
    header: list[str] | None = None
    for line in _text(path).splitlines():
        if not line.startswith("|"):
            if header is not None and rows:
                break
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells] if "folder" in (c.lower() for c in cells) else None
        elif not set(cells[0]) <= set("-: "):
            rows[cells[0]] = dict(zip(header, cells))
    return rows


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
