"""Domain errors. Each layer raises its own subclass of the one root,
:class:`treebanks.errors.DomainError`; the CLI catches the root and turns any of them
into one ``Error: ...`` line and exit code 1 (never a traceback). A caller of the
library catches ``DomainError`` for all of them."""
from formats.errors import AgreeError  # noqa: F401  (handed on: the agreement layer raises it too)
from lm.errors import FieldError, LMError  # noqa: F401  (handed on)
from nonce.errors import NonceError  # noqa: F401  (handed on)
from treebanks.errors import DomainError, TreebankError  # noqa: F401  (handed on)
