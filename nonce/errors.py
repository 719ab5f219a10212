class NonceError(Exception):
    """A user-facing error while making nonce or perturbed variants."""
