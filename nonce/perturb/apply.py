"""Perturb a whole test set: one aspect, one severity, one seed.

Every input row gives one output row with the same ``item_id`` and ``variant``;
its ``perturbation`` column says what was done (``qwerty@nouns:0.2``; a row that
was already a variant, e.g. ``nonce``, becomes ``nonce+qwerty@nouns:0.2``). Rows
the aspect could not change (no eligible word) are kept unchanged but labelled
all the same, so every severity of a curve is measured on the same items.

Randomness: each row draws from ``random.Random`` objects seeded with (seed,
item_id, variant, purpose), never from a shared stream, so a row's output does
not depend on the other rows, their order, or the Python hash seed.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Iterable

from formats.items import Item
from nonce.perturb.base import Aspect, Draft, get_aspect


@dataclass(frozen=True)
class PerturbResult:
    """items:  the perturbed rows, input order (``Item.extra["changes"]``: edits made)
    label:  the perturbation label written in every row
    stats:  counts for the manifest (items, items_changed, changes, and the aspect's own)"""
    items: list[Item]
    label: str
    stats: dict[str, int] = field(default_factory=dict)


def _rng_factory(seed: int, item: Item):
    base = f"{seed}\x1f{item.item_id}\x1f{item.variant}"

    def rng(purpose: str) -> random.Random:
        # a str seed is hashed with SHA-512 by random.Random: stable across runs
        return random.Random(f"{base}\x1f{purpose}")
    return rng


def make_aspect(aspect: str | Aspect, severity: float, options: dict[str, Any] | None = None) -> Aspect:
    """An aspect instance from its name (unknown name, bad severity or option: NonceError)."""
    if isinstance(aspect, Aspect):
        return aspect
    return get_aspect(aspect)(severity, options or {})


def perturb(items: Iterable[Item], aspect: str | Aspect, severity: float,
            options: dict[str, Any] | None = None, seed: int = 1111) -> PerturbResult:
    """Apply one aspect at one severity to every item; see the module docstring."""
    items = list(items)
    worker = make_aspect(aspect, severity, options)
    if items:
        worker.prepare(items)
    label = worker.label()
    out = []
    for item in items:
        draft = Draft(item)
        changes = worker.perturb(draft, _rng_factory(seed, item))
        tag = label if item.perturbation == "original" else f"{item.perturbation}+{label}"
        out.append(draft.to_item(tag, changes))
    stats = {"items": len(out),
             "items_changed": sum(1 for it in out if it.extra["changes"]),
             "changes": sum(it.extra["changes"] for it in out),
             **getattr(worker, "stats", {})}
    return PerturbResult(out, label, stats)


def perturb_items(items: Iterable[Item], aspect: str, severity: float,
                  options: dict[str, Any] | None = None, seed: int = 1111) -> list[Item]:
    """The perturbed items only (see :func:`perturb` for the counts)."""
    return perturb(items, aspect, severity, options, seed).items
