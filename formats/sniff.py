"""Recognising agree's own files (and the test sets it reads) from their first lines.

Where a corpus is expected (tokenised text, one sentence per line), a test set, a
manifest or a vocabulary would be read as sentences without complaint: each of
their lines is "words". :func:`own_format` tells what such a file is, so that the
reader can refuse it with a sentence that says so.
"""
from __future__ import annotations

import json
import re
from typing import Sequence

_JSON_KEY = re.compile(r'^\s*"[^"]*"\s*:')

#: header columns -> what a tab-separated file with them is (first match wins)
_HEADERS = (
    ({"item_id", "model", "logp_correct"}, "a scored items.tsv of agree score"),
    ({"item_id", "tokens", "correct", "wrong"}, "an items.tsv of agree test items"),
    ({"item_id", "votes_correct", "votes_wrong"}, "a file of human judgments"),
    ({"pattern", "constr_id", "sent_id"}, "a .tab file of the paper's test sets"),
    ({"sen", "wrong_sen"}, "a MultiBLiMP test set"),
    ({"direction", "construction", "pairs"}, "a constructions.tsv of agree extract"),
    ({"form", "lemma", "upos", "feats"}, "a paradigms.tsv of agree extract"),
)


def own_format(lines: Sequence[str]) -> str | None:
    """What the file whose first ``lines`` these are is, as "a ... of ..." (None when it
    looks like none of agree's files: plain text, a dump)."""
    lines = [line.rstrip("\r\n").lstrip("\ufeff") for line in lines]
    if not lines:
        return None
    first = lines[0]
    columns = set(first.split("\t"))
    if len(columns) > 1:
        for needed, what in _HEADERS:
            if needed <= columns:
                return what
    if first == "word\tcount":
        return "a counts.tsv of agree corpus"
    if lines[:2] == ["<eos>", "<unk>"]:
        return "a vocab.txt (one word a line)"
    return _json_format(lines)


def _json_format(lines: list[str]) -> str | None:
    first = lines[0].strip()
    if first in ("{", "[") and len(lines) > 1 and (_JSON_KEY.match(lines[1]) or lines[1].strip() in ("{", "[")):
        head = "\n".join(lines)
        return "an agree manifest.json" if '"command":' in head else "a JSON file"
    if first.startswith(("{", "[")):
        try:
            value = json.loads(first)
        except ValueError:
            return None
        if isinstance(value, dict):
            if "sentence_good" in value:
                return "a BLiMP .jsonl test set"
            return "an agree manifest.json" if "command" in value else "a JSON Lines file"
        if isinstance(value, list):
            return "a JSON file"
    return None
