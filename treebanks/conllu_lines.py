"""The conllu side of the reader: the columns we ask ``conllu`` for, line numbers
that conllu does not keep (:class:`LineTracker`), and conllu's parse messages in the
reader's own words (:func:`conllu_message`). Written against conllu 6.x's parser
internals (``parse_line``, ``DEFAULT_FIELD_PARSERS``), hence setup.cfg's ``conllu<7``."""
from __future__ import annotations

import re
from pathlib import Path

from conllu.exceptions import ParseException
from conllu.parser import DEFAULT_FIELD_PARSERS, parse_id_value, parse_int_value, parse_line

from treebanks.errors import TreebankError

def _int_field(line: list[str], i: int):
    # fast path for the usual positive integer; conllu's own parser (regexes)
    # handles 0, ranges, empty nodes and raises the errors
    v = line[i]
    if v.isdigit() and v[0] != "0":
        return int(v)
    return (parse_id_value if i == 0 else parse_int_value)(v)


#: The CoNLL-U columns conllu is asked for, under the names we give them. conllu
#: parses a column only when its name has a parser (its defaults: id, xpos,
#: feats, head, deps, misc); naming XPOS/FEATS/DEPS/MISC differently keeps them
#: plain strings (we canonicalise FEATS ourselves, cached, and read only
#: ``SpaceAfter=No`` from MISC, which a dict per word would make slow).
COLUMNS = ("id", "form", "lemma", "upos", "xpos_", "feats_", "head", "deprel", "deps_", "misc_")
FIELD_PARSERS = {"id": _int_field, "head": _int_field}


class LineTracker:
    """The file as conllu sees it, plus the line numbers conllu does not keep.

    ``conllu.parse_sentences`` asks for the next line only after it has yielded
    a sentence, so while a sentence is being parsed ``block`` still holds its raw
    lines and ``block_start`` its first line number."""

    def __init__(self, fh, path: Path, first_line: int = 0):
        self.fh = fh
        self.path = path
        self.lineno = first_line  # lines before this part of the file (a piece, below)
        self.block_start = 0
        self.block: list[str] = []
        self._in_block = False

    def read(self, *args):  # parse_incr checks that its argument is file-like
        return self.fh.read(*args)

    def __iter__(self):
        for line in self.fh:
            self.lineno += 1
            if line.isspace():  # conllu's test is line.strip() == ""
                self._in_block = False
            else:
                if not self._in_block:
                    self._in_block = True
                    self.block_start = self.lineno
                    self.block = []
                self.block.append(line)
                if line[0] != "#":
                    if line.count("\t") != 9:
                        raise TreebankError(
                            f"{self.path}:{self.lineno}: expected 10 tab-separated columns, "
                            f"found {line.count(chr(9)) + 1}")
                elif line.startswith("# global.columns"):
                    line = self._global_columns(line)
            yield line

    def _global_columns(self, line: str) -> str:
        # conllu would rename the columns after this comment (CoNLL-U Plus)
        names = line.partition("=")[2].split()
        if [n.lower() for n in names] != ["id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel",
                                          "deps", "misc"]:
            raise TreebankError(f"{self.path}:{self.lineno}: CoNLL-U Plus columns ({' '.join(names)}) are "
                                f"not supported; expected the 10 CoNLL-U columns")
        return "#\n"  # the standard ten: nothing to rename

    def word_line(self, k: int) -> int:
        """Line number of the k-th (0-based) non-comment row of the current block."""
        seen = -1
        for offset, line in enumerate(self.block):
            if not line.lstrip().startswith("#"):
                seen += 1
                if seen == k:
                    return self.block_start + offset
        return self.block_start

    def locate_parse_error(self, e: ParseException) -> str:
        """conllu says what failed but not where: re-parse the block line by line."""
        for offset, line in enumerate(self.block):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                parse_line(line, COLUMNS, {**DEFAULT_FIELD_PARSERS, **FIELD_PARSERS})
            except ParseException as inner:
                return f"{self.path}:{self.block_start + offset}: {conllu_message(inner)}"
        return f"{self.path}:{self.block_start}: {conllu_message(e)}"


#: conllu 6's messages (conllu.parser) in the reader's own words; the column names
#: are the ones we give conllu (COLUMNS), written as the CoNLL-U format names them.
_CONLLU_MESSAGES = (
    (re.compile(r"Failed parsing field '(\w+)': '(.*)' is not a valid ID\.$"),
     "{0}: {1!r} is not a word ID (1, 2-3 or 4.1 expected)"),
    (re.compile(r"Failed parsing field '(\w+)': '(.*)' is not a valid value for parse_int_value\.$"),
     "{0}: {1!r} is not a number"),
    (re.compile(r"Failed parsing field '(\w+)': (.*)$"), "{0}: {1}"),
    (re.compile(r"Invalid line format.*"), "not a CoNLL-U line (10 tab-separated columns expected)"),
    (re.compile(r"Invalid comment format.*"), "a comment line must start with '#'"),
)


def conllu_message(e: ParseException) -> str:
    """What conllu's ParseException says, in the reader's wording (``HEAD: 'two' is not
    a number``); a message we do not know is passed on as conllu wrote it."""
    text = str(e)
    for pattern, wording in _CONLLU_MESSAGES:
        m = pattern.match(text)
        if m:
            groups = [g.upper().rstrip("_") if i == 0 and len(m.groups()) > 1 else g
                      for i, g in enumerate(m.groups())]
            return wording.format(*groups)
    return text
