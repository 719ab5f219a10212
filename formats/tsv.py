"""The limits of the csv module, set once for every reader of agree's tab-separated files.

csv refuses a field over 131,072 characters by default (``_csv.Error: field larger
than field limit``, a traceback). A real sentence of 5,000 words with its POS tags
and features stays under a megabyte, so the limit is raised to
:data:`FIELD_LIMIT`; a field beyond it (a file that is not what it claims, or
damaged) is an :class:`AgreeError` naming the file and line, never a traceback.
:func:`one_line` is the writers' side: a value as one field of a row.
"""
from __future__ import annotations

import csv
import os
from typing import Iterable, Iterator

from formats.errors import AgreeError

#: characters one field may hold (16 Mi): far beyond any sentence, short of a whole file
FIELD_LIMIT = 1 << 24

csv.field_size_limit(FIELD_LIMIT)


def one_line(value: object) -> str:
    """``value`` as one field of a tab-separated row: its runs of white space (a tab or
    newline in a reason or a sentence would break the row) as one space."""
    return " ".join(str(value).split())


def checked_rows(reader: Iterable, path: str | os.PathLike) -> Iterator:
    """The rows of a csv ``reader`` (``csv.reader`` or ``csv.DictReader``) over ``path``;
    a row csv cannot read is an :class:`AgreeError` naming ``path`` and its line."""
    rows = iter(reader)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as e:
            raise _error(e, reader, path) from None
        yield row


def header_of(reader: csv.DictReader, path: str | os.PathLike) -> list[str] | None:
    """A DictReader's column names (None for an empty file), read as :func:`checked_rows` reads rows."""
    try:
        return reader.fieldnames
    except csv.Error as e:
        raise _error(e, reader, path) from None


def _error(e: csv.Error, reader, path) -> AgreeError:
    line = getattr(getattr(reader, "reader", reader), "line_num", 0)
    if "field larger than field limit" in str(e):
        return AgreeError(f"{path}:{line}: a field longer than {FIELD_LIMIT:,} characters; no "
                          "sentence is that long (a damaged file, or not what its name says?)")
    return AgreeError(f"{path}:{line}: unreadable row ({e})")
