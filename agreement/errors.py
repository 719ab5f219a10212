"""Domain errors. Each package raises its own; the CLI turns any of them into
one ``Error: ...`` line and exit code 1 (never a traceback)."""
from lm.errors import LMError
from treebanks.errors import TreebankError
from nonce.errors import NonceError


class AgreeError(Exception):
    """A user-facing error of the agreement layer (test sets, scoring, reports)."""


#: Everything the CLI reports as a clean error.
DOMAIN_ERRORS = (AgreeError, LMError, TreebankError, NonceError)
