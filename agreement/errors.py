"""Domain errors. Each package raises its own; the CLI turns any of them into
one ``Error: ...`` line and exit code 1 (never a traceback)."""
import functools

from lm.errors import LMError
from treebanks.errors import TreebankError
from nonce.errors import NonceError


class AgreeError(Exception):
    """A user-facing error of the agreement layer (test sets, scoring, reports)."""


#: Everything the CLI reports as a clean error.
DOMAIN_ERRORS = (AgreeError, LMError, TreebankError, NonceError)


def names_undecodable(reader):
    """Decorate ``reader(path, ...)`` so that a file that is not UTF-8 is an error
    naming that file (the CLI edge alone cannot know which file it was)."""
    @functools.wraps(reader)
    def wrapper(path, *args, **kwargs):
        try:
            return reader(path, *args, **kwargs)
        except UnicodeDecodeError as e:
            raise AgreeError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    return wrapper


class _Nesting:
    """How many ``agree`` invocations are running in this process (agree demo runs the
    others inside itself). Kept here, not in agreement.cli: ``python -m agreement.cli``
    loads that module twice (as __main__ and when demo imports it)."""

    def __init__(self):
        self.depth = 0

    def enter(self) -> int:
        self.depth += 1
        return self.depth

    def leave(self) -> None:
        self.depth -= 1


NESTING = _Nesting()
