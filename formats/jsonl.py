"""JSON Lines, read one way by every reader of it (BLiMP and the pair formats, the
release's ``pairs.jsonl``, a published reference): one object per non-blank line, and
one error naming the file and line otherwise, saying so when the file is one JSON
document rather than JSON Lines."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

from formats.errors import AgreeError


def json_lines(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of ``path``."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.strip():
                    yield lineno, json_object(line, path, lineno)
    except UnicodeDecodeError as e:
        raise AgreeError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None


def json_object(line: str, path: Path, lineno: int) -> dict:
    """One JSON Lines line as a dict; one error naming the file and line otherwise (and,
    for a file that is JSON but not JSON Lines, what it is)."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as e:
        raise AgreeError(f"{path}:{lineno}: " + (not_json_lines(path) or
                                                  f"not JSON ({e.msg} at column {e.colno})")) from None
    if not isinstance(row, dict):
        raise AgreeError(f"{path}:{lineno}: not a JSON object")
    return row


def not_json_lines(path: Path) -> str | None:
    """What is wrong when ``path`` as a whole is one JSON document (valid JSON, but not
    one object per line), else None (parses the whole file: only once a reader failed)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        doc = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return (f"JSON but not JSON Lines: one JSON {_kind(doc)} over {text.count(chr(10)) + 1} "
            "lines, where one JSON object per line is expected")


def _kind(doc) -> str:
    if isinstance(doc, dict):
        keys = ", ".join(list(doc)[:8])
        return f"object (keys: {keys})" if keys else "object"
    return "array" if isinstance(doc, list) else type(doc).__name__
