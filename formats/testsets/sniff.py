"""What a file looks like, for messages when it is not what a reader expects: JSON that
is not JSON Lines, a table with another delimiter, the columns found.

Only the start of a file is read (:data:`SNIFF_BYTES`), except by :func:`not_json_lines`,
which parses the whole file once, after a reader has already failed on it."""
from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from formats.jsonl import not_json_lines

#: bytes read to describe a file
SNIFF_BYTES = 65536
DELIMITERS = {"\t": "tab", ",": "comma", ";": "semicolon"}


def first_line(path: Path) -> str:
    """The file's first line ("" when it cannot be read as UTF-8 text)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline()
    except (OSError, UnicodeDecodeError):
        return ""


def header_delimiter(line: str, required: tuple[str, ...]) -> str | None:
    """The delimiter (tab, comma or semicolon) that splits a header line into columns
    holding every ``required`` name; with none required, the most frequent of the three
    in the line. None when no delimiter does."""
    line = line.rstrip("\r\n")
    if not required:
        counts = {d: line.count(d) for d in DELIMITERS}
        best = max(counts, key=counts.get)
        return best if counts[best] else None
    for d in DELIMITERS:
        cols = {c.strip().strip('"') for c in next(csv.reader([line], delimiter=d), [])}
        if set(required) <= cols:
            return d
    return None


def main_suffix(path: Path) -> str:
    """The suffix most of a directory's files have (ties: the first in sorted order),
    or a file's own."""
    if not path.is_dir():
        return path.suffix
    kinds = Counter(p.suffix or "(no suffix)" for p in path.iterdir() if p.is_file())
    return min(kinds, key=lambda s: (-kinds[s], s)) if kinds else ""


def describe(path: Path) -> str:
    """One phrase saying what ``path`` is, e.g. ``a comma-separated table with columns
    a, b`` or ``JSON but not JSON Lines``."""
    path = Path(path)
    if path.is_dir():
        kinds = Counter(p.suffix or "(no suffix)" for p in path.iterdir() if p.is_file())
        if not kinds:
            return "an empty directory" if not any(path.iterdir()) else "a directory of directories"
        suffix = main_suffix(path)
        first = sorted(p for p in path.iterdir() if p.is_file() and (p.suffix or "(no suffix)") == suffix)[0]
        listing = ", ".join(f"{n} {s}" for s, n in kinds.most_common(4))
        return f"a directory of files ({listing}); {first.name} is {describe(first)}"
    if not path.exists():
        return "no such file or directory"
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as e:
        return f"unreadable ({e.strerror})"
    if path.suffix in (".pickle", ".pkl") or head[:1] == b"\x80":
        return "a Python pickle"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:
            return "not UTF-8 text"
        text = head[:e.start].decode("utf-8")
    return _describe_text(path, text)


def _describe_text(path: Path, text: str) -> str:
    lines = text.splitlines()
    first = lines[0] if lines else ""
    if not first.strip():
        return "an empty file" if not text.strip() else "a text file starting with a blank line"
    if first.lstrip().startswith(("{", "[")):
        try:
            row = json.loads(first)
            if isinstance(row, dict):
                return f"JSON Lines whose first object has the fields {', '.join(row)}"
        except json.JSONDecodeError:
            pass
        return not_json_lines(path) or "text starting like JSON but not JSON"
    delim = header_delimiter(first, ())
    if delim is not None:
        cols = next(csv.reader([first], delimiter=delim), [])
        return f"a {DELIMITERS[delim]}-separated table whose first line has {', '.join(cols[:12])}"
    return f"a text file whose first line is {first[:60]!r}"


def delimiter_note(line: str, delimiter: str) -> str:
    """``the header is comma-separated: a, b`` when a header line is split by another
    delimiter than ``delimiter``, else ``the header has a, b``."""
    line = line.rstrip("\r\n")
    seen = header_delimiter(line, ())
    if seen is not None and seen != delimiter and delimiter not in line:
        cols = next(csv.reader([line], delimiter=seen), [])
        return (f"the header is {DELIMITERS[seen]}-separated: {', '.join(cols)}; "
                f"{DELIMITERS[delimiter]}-separated columns are expected")
    cols = line.split(delimiter)
    return f"the header has {', '.join(cols) if line else 'nothing'}"
