"""Domain errors. Each package raises its own; the CLI turns any of them into
one ``Error: ...`` line and exit code 1 (never a traceback)."""
from formats.errors import AgreeError  # noqa: F401  (handed on: the agreement layer raises it too)
from lm.errors import LMError
from treebanks.errors import TreebankError
from nonce.errors import NonceError


#: Everything the CLI reports as a clean error.
DOMAIN_ERRORS = (AgreeError, LMError, TreebankError, NonceError)


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
