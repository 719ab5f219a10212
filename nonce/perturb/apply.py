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

import json
import os
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from formats.items import Item, read_items, write_items
from formats.run import RunContext
from nonce.errors import NonceError
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


def perturb_to_dir(run: RunContext, testset: str | os.PathLike, aspect: str, severity: float,
                   options: dict[str, Any], *, vectors: str | None = None, paradigms: str | None = None,
                   seed: int = 1111) -> PerturbResult:
    """What ``agree perturb`` writes: ``testset`` (items.tsv or its directory)
    perturbed into ``run.out`` (items.tsv, a copy of paradigms.tsv, manifest.json),
    atomically under the --out policy. ``options``: the aspect's options (None
    values are dropped; ``lang`` defaults to the test set's manifest); ``vectors``
    and ``paradigms``: the semantic aspect's files (its default paradigms: the test
    set's own). Relative paths are read from ``run.root`` and recorded as given."""
    cls = get_aspect(aspect)
    src = Path(testset)
    directory = src if run.path(src).is_dir() else src.parent
    with run.output_dir([directory, vectors, paradigms]) as tmp:
        items = list(read_items(run.path(src)))
        params = _source_parameters(run.path(directory) / "manifest.json")
        options = {**options, "lang": options.get("lang") or params.get("lang")}
        if "paradigms" in cls.all_options():  # the semantic aspect: file paths, loaded by the aspect
            own = directory / "paradigms.tsv"
            options.update(vectors=vectors, paradigms=paradigms or (str(own) if run.path(own).is_file() else None))
        elif vectors or paradigms:
            raise NonceError(f"{aspect}: {{vectors}} and {{paradigms}} are for the semantic aspect only",
                             fields=True)
        options = {k: v for k, v in options.items() if v is not None}
        result = perturb(items, aspect, severity, _rooted_files(options, run), seed)
        write_items(tmp / "items.tsv", result.items)
        if run.path(directory / "paradigms.tsv").is_file():
            shutil.copyfile(run.path(directory / "paradigms.tsv"), tmp / "paradigms.tsv")
        inputs = [p for p in (src, options.get("vectors"), options.get("paradigms")) if p]
        run.write_manifest(tmp, inputs, {"aspect": aspect, "severity": severity, "seed": seed,
                                         "label": result.label, **options, "source": params},
                           counts=result.stats)
    return result


def _rooted_files(options: dict[str, Any], run: RunContext) -> dict[str, Any]:
    """The aspect's file options read from the run's root (the manifest records them as given)."""
    return {k: str(run.path(v)) if k in ("vectors", "paradigms") else v for k, v in options.items()}


def _source_parameters(manifest_file: Path) -> dict:
    """The test set's own parameters (its manifest.json), {} when it has none."""
    if not manifest_file.is_file():
        return {}
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise NonceError(f"{manifest_file}: not a valid manifest.json ({e})") from None
    params = manifest.get("parameters") if isinstance(manifest, dict) else None
    return params if isinstance(params, dict) else {}
