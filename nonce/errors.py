"""The error of the ``nonce`` layer (a :class:`treebanks.errors.DomainError`)."""
from treebanks.errors import DomainError


class NonceError(DomainError):
    """A user-facing error while making nonce or perturbed variants."""
