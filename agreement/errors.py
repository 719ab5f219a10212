"""Domain errors. Each package raises its own; the CLI turns any of them into
one ``Error: ...`` line and exit code 1 (never a traceback)."""
from formats.errors import AgreeError  # noqa: F401  (handed on: the agreement layer raises it too)
from lm.errors import LMError
from treebanks.errors import TreebankError
from nonce.errors import NonceError


#: Everything the CLI reports as a clean error.
DOMAIN_ERRORS = (AgreeError, LMError, TreebankError, NonceError)
