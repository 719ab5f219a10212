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
