class LMError(Exception):
    """A user-facing error about corpora, training or model directories."""
