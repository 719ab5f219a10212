"""Variants of agreement items: colorless-green nonce sentences and perturbations."""
