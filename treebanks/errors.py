"""The root of every domain error of agree, and this layer's own.

Every layer raises its own subclass of :class:`DomainError` (``TreebankError`` here,
``formats.errors.AgreeError`` for formats and agreement, ``lm.errors.LMError``,
``nonce.errors.NonceError``); the CLI catches the root once and turns any of them
into one ``Error: ...`` line and exit code 1. The root lives here, in the lowest
layer, because every layer above may import this one and none may import upward.

Library messages name fields, never command-line flags: a message made with
``fields=True`` is a template whose ``{placeholders}`` are field names (``{min_count}
must be at least 1``); ``str()`` spells them as the fields, and the CLI re-spells them
as the running command's options with :meth:`DomainError.spelled` (``--min-count``).
Values other than field names go into such a template through :func:`literal` where
they may hold braces (paths, user input)."""
from __future__ import annotations

import re
import string

#: the house's way of naming where a fault is: ``FILE:LINE: message``
_WHERE = re.compile(r"(?P<file>[^\s:][^\s:]*):(?P<line>[0-9]+): ")


class DomainError(Exception):
    """A user-facing fault of the input or the environment (never a bug).

    ``file``, ``line``: where the fault is, when known: given, or read from a message
    that starts ``FILE:LINE: `` (how every reader names the line it refuses);
    ``fields``: the field names of a template message."""

    def __init__(self, message: str = "", *, file=None, line: int | None = None,
                 fields: bool = False):
        self.template = message if fields else None
        self.fields = tuple(name for _, name, _, _ in string.Formatter().parse(message) if name) \
            if fields else ()
        super().__init__(self.spelled(lambda name: name) if fields else message)
        where = _WHERE.match(str(self)) if file is None and line is None else None
        self.file, self.line = (where["file"], int(where["line"])) if where else (file, line)

    def spelled(self, spell) -> str:
        """The message with every field ``name`` written as ``spell(name)``."""
        if self.template is None:
            return self.args[0] if self.args else ""
        return self.template.format_map({name: spell(name) for name in self.fields})


def literal(value) -> str:
    """``str(value)`` escaped for a ``fields=True`` template."""
    return str(value).replace("{", "{{").replace("}", "}}")


class TreebankError(DomainError):
    """A user-facing error about a treebank; messages start with ``FILE:LINE:`` when known."""
