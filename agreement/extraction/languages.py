"""The languages of a folder of UD treebanks (``agree extract-all``): the treebanks
found by :func:`treebanks.ud_release.read_ud_folder`, grouped by language code
(several treebanks of one language, Italian ISDT and ParTUT, are mined together,
their paradigms pooled), and the selection ``only`` / ``exclude``."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from agreement.errors import AgreeError
from treebanks.errors import literal
from treebanks.ud_release import Treebank, read_ud_folder


@dataclass(frozen=True)
class Language:
    """One language of the folder: its code, name and treebanks (sorted by name)."""
    code: str
    treebanks: tuple[Treebank, ...]

    @property
    def name(self) -> str:
        """The first treebank's language name that is known, else ""."""
        return next((t.language_name for t in self.treebanks if t.language_name), "")

    @property
    def files(self) -> tuple[Path, ...]:
        """Every treebank file of the language, treebank by treebank."""
        return tuple(f for t in self.treebanks for f in t.files)

    @property
    def noncommercial(self) -> bool:
        return any(t.noncommercial for t in self.treebanks)

    @property
    def size(self) -> int:
        """Bytes of its files (the biggest languages are started first); a file that
        cannot be read counts 0 (reading it fails the language, saying why)."""
        return sum(_size(f) for f in self.files)


@dataclass(frozen=True)
class LanguageSelection:
    """The languages to mine, and what the folder held besides."""
    languages: tuple[Language, ...]
    excluded: tuple[str, ...]          #: codes in the folder left out by ``only``/``exclude``
    skipped_files: tuple[str, ...]     #: files and folders left out, each with why
    unreadable: tuple[str, ...] = ()   #: folders that could not be listed, each with why


def find_languages(ud_dir: str | os.PathLike, only: Sequence[str] = (), exclude: Sequence[str] = ()) -> LanguageSelection:
    """The languages of ``ud_dir`` (sorted by code), ``only`` those codes when given,
    less ``exclude``. A code in ``only`` or ``exclude`` that the folder lacks is an
    error listing the codes it has (a typo must not silently mine nothing), and so is a
    chosen language whose treebank files conflict (two different files of one name)."""
    folder = read_ud_folder(ud_dir)
    groups: dict[str, list[Treebank]] = {}
    for t in folder.treebanks:
        groups.setdefault(t.language, []).append(t)
    languages = {code: Language(code, tuple(tbs)) for code, tbs in sorted(groups.items())}
    for field, codes in (("only", only), ("exclude", exclude)):
        unknown = [c for c in codes if c not in languages]
        if unknown:
            unread = f"; {len(folder.unreadable)} folder(s) could not be read: {literal(folder.unreadable[0])}" \
                if folder.unreadable else ""
            raise AgreeError(f"{{{field}}} {literal(unknown[0])}: no treebank of that language in "
                             f"{literal(ud_dir)} (its languages: {literal(', '.join(languages))}{unread})",
                             fields=True)
    chosen = [c for c in languages if (not only or c in only) and c not in exclude]
    if not chosen:
        raise AgreeError(f"no language left to mine in {literal(ud_dir)} after {{only}} and {{exclude}}",
                         fields=True)
    for code in chosen:
        if code in folder.conflicts:
            raise AgreeError(f"{code}: {literal(folder.conflicts[code])}, or leave the language out with "
                             f"{{exclude}} {code}", fields=True)
    return LanguageSelection(tuple(languages[c] for c in chosen),
                             tuple(c for c in languages if c not in chosen), folder.skipped, folder.unreadable)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
