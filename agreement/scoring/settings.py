"""What an ``agree score`` run is asked, one record per concern, each built once by the
command and handed only to the stages that read it:

* :class:`WhatToScore`: the test sets' format and language, the method, the .tab
  columns, the vocabulary filter, learning curves and the normalisation (reading and
  scoring);
* :class:`lm.backends.ModelLoading`: how every model loads (its backend takes the fields
  its own options record names);
* :class:`Execution`: where the models run (the executor, its workers, shard size);
* :class:`Reporting`: what is written beside the scores (tokens.tsv, human and
  published figures).

The manifest's ``parameters`` are read from three of them (:func:`recorded_parameters`),
in the order manifests have always had; where the run executed is its ``execution``.
"""
from __future__ import annotations

from dataclasses import dataclass

from lm.backends import ModelLoading

__all__ = ["Execution", "ModelLoading", "Reporting", "WhatToScore", "recorded_parameters"]


@dataclass(frozen=True)
class WhatToScore:
    """What is scored and how it is compared.

    fmt               the format of every test set (``auto``: detected from each)
    lang              a test set's language where its files do not say it (CLAMS)
    method            ``target`` or ``sentence``
    from_outputs      model columns of a paper .tab used instead of models
    require_in_vocab  only items every model's vocabulary covers
    curve             the models are the points of learning curves (:mod:`agreement.scoring.curve`)
    normalize, unigram  whole-sentence scores normalised (:mod:`agreement.scoring.normalize`;
                      None: the sum)
    """
    fmt: str = "auto"
    lang: str | None = None
    method: str = "target"
    from_outputs: tuple[str, ...] = ()
    require_in_vocab: bool = False
    curve: bool = False
    normalize: str | None = None
    unigram: str | None = None


@dataclass(frozen=True)
class Execution:
    """Where and how fast the models run, never what they compute (the manifest's
    ``execution``). executor, workers, ray_address: :mod:`agreement.scoring.executors`;
    shard_size: items per shard (None: :data:`agreement.scoring.shard_store.SHARD_SIZE`);
    torch_threads: torch's CPU threads while scoring when the models' threads are not
    given (None: torch's own setting)."""
    executor: str = "in-process"
    workers: int | None = None
    ray_address: str | None = None
    shard_size: int | None = None
    torch_threads: int | None = None


@dataclass(frozen=True)
class Reporting:
    """What is written beside the scores: tokens.tsv with ``surprisal`` (in ``units``),
    human judgments (``humans``) and published accuracies (``reference``) beside the
    models."""
    humans: str | None = None
    reference: str | None = None
    surprisal: bool = False
    units: str = "nats"


def recorded_parameters(what: WhatToScore, loading: ModelLoading, reporting: Reporting, seed: int) -> dict:
    """The options that change the results as the manifest records them, in the order of
    every manifest before these records (``fmt`` as ``format``; ``curve``, ``lang``,
    ``normalize`` and ``unigram`` only when set: older manifests lack them)."""
    out = {"from_outputs": what.from_outputs, "humans": reporting.humans, "require_in_vocab": what.require_in_vocab,
           "carry_state": loading.carry_state, "batch_size": loading.batch_size, "device": loading.device,
           "dtype": loading.dtype, "engine": loading.engine, "threads": loading.threads, "seed": seed,
           "method": what.method, "format": what.fmt, "surprisal": reporting.surprisal, "units": reporting.units,
           "reference": reporting.reference}
    when_set = {"curve": what.curve, "lang": what.lang, "convention": loading.convention,
                "normalize": what.normalize, "unigram": what.unigram}
    return {**out, **{k: v for k, v in when_set.items() if v or k == "convention"}}
