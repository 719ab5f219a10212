class TreebankError(Exception):
    """A user-facing error about a treebank; messages start with ``FILE:LINE:`` when known."""
