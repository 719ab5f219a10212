"""The training registry, beside the backends' records (:mod:`lm.backends`): architecture -> trainer.

Each backend registers a :class:`Trainer` with :func:`register_trainer`: the
settings it takes with their defaults, its presets (named sizes: settings laid over
the defaults) and its training function. :func:`lm.training.train.train_lm` looks the
architecture up here, and ``agree train-lm`` takes its ``--arch`` and ``--size``
choices and its presets from here, so adding an architecture touches neither.

The functions are named as ``"module:function"`` and imported only when a model is
trained: listing the architectures (``agree train-lm --help``) never imports torch.
The modules that register are listed in :data:`_TRAINER_MODULES` (imported when the
architectures are first listed or looked up).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Mapping

from lm.errors import FieldError, LMError

#: architecture -> the module that registers its trainer (all torch-free at import)
_TRAINER_MODULES = {
    "lstm": "lm.neural.presets",
    "transformer": "lm.neural.presets",
    "kn5": "lm.kenlm.scorer",
    "unigram": "lm.unigram",
}
_TRAINERS: dict[str, "Trainer"] = {}

#: what a checkpointed trainer keeps in its work directory to resume from (the driver,
#: lm.training.train, decides on --resume by it; lm.neural.checkpoint writes it)
CHECKPOINT_FILE = "checkpoint.pt"

#: the preset used when none is named, and the architecture of ``agree train-lm``
DEFAULT_SIZE = "paper"
DEFAULT_ARCH = "lstm"


@dataclass(frozen=True)
class TrainRun:
    """What every trainer is told besides its settings.

    arch: the architecture trained; seed: the one seed; lang: the corpus language;
    resume: continue from the checkpoint in the work directory; on_step: called with the step number after every optimizer step
    (checkpointed trainers; tests use it to interrupt); on_snapshot: called as
    ``f(directory, metrics)`` with each snapshot directory before it is renamed into
    place (:mod:`lm.training.snapshots`; the CLI writes its manifest.json there);
    stop: the SIGINT/SIGTERM flag (:class:`lm.training.interrupt.StopFlag`) the driver
    raised for a checkpointed trainer, which acts on it (None: the trainer's own)."""
    arch: str
    seed: int
    lang: str = ""
    resume: bool = False
    on_step: Callable[[int], None] | None = None
    on_snapshot: Callable | None = None
    stop: object | None = None


@dataclass(frozen=True)
class Trainer:
    """One trainable architecture.

    arch: its name (``--arch``; the model directory's ``kind``);
    train: ``"module:function"``, called as ``f(corpus, work_dir, settings, run)``
        with the settings of :meth:`settings` and a :class:`TrainRun`; it writes the
        model into ``work_dir`` and returns its metrics (``valid_ppl``, ``valid_tokens``, ...);
    check: ``"module:function"`` or None, called as ``f(arch, settings, seed)`` before
        anything is written, to refuse settings the trainer cannot use;
    defaults: every setting it takes -> its default (None: the trainer's own default);
    presets: size -> the settings that size lays over the defaults;
    checkpointed: trains in steps, saves checkpoints (takes ``resume``) and runs under
        torchrun (the process group is joined before training);
    capped_vocab: the corpus vocabulary is cut to ``vocab_size`` words before training
        (models that count words; the neural trainers build their own vocabulary).
    """
    arch: str
    train: str
    defaults: Mapping[str, object]
    presets: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    check: str | None = None
    checkpointed: bool = False
    capped_vocab: bool = False

    def settings(self, size: str, given: Mapping[str, object]) -> dict:
        """The defaults, the preset ``size`` (if this architecture has one) and the
        ``given`` settings (None = not given), in that order of precedence."""
        known = set(sizes())
        if size not in known:
            raise FieldError(f"unknown {{size}} {size!r} (known: {', '.join(sizes())})")
        given = {k: v for k, v in given.items() if v is not None}
        unknown = sorted(set(given) - set(self.defaults))
        if unknown:
            raise FieldError(f"{{arch}} {self.arch} does not take "
                             + ", ".join("{" + name + "}" for name in unknown))
        return {**self.defaults, **self.presets.get(size, {}), **given}

    def function(self, which: str = "train") -> Callable:
        module, _, name = getattr(self, which).partition(":")
        return getattr(importlib.import_module(module), name)


def register_trainer(trainer: Trainer) -> None:
    """Register ``trainer`` under its architecture name (a backend module calls this)."""
    _TRAINERS[trainer.arch] = trainer


def trainers() -> dict[str, Trainer]:
    """Every registered architecture, in :data:`_TRAINER_MODULES` order, then the others."""
    for module in dict.fromkeys(_TRAINER_MODULES.values()):
        importlib.import_module(module)
    order = list(_TRAINER_MODULES) + sorted(set(_TRAINERS) - set(_TRAINER_MODULES))
    return {arch: _TRAINERS[arch] for arch in order if arch in _TRAINERS}


def get_trainer(arch: str) -> Trainer:
    """The trainer of ``arch``; an unknown name is an error listing the known ones."""
    if arch not in _TRAINERS and arch in _TRAINER_MODULES:
        importlib.import_module(_TRAINER_MODULES[arch])
    if arch not in _TRAINERS:
        raise LMError(f"unknown architecture {arch!r} (known: {', '.join(trainers())})")
    return _TRAINERS[arch]


def sizes() -> tuple[str, ...]:
    """Every preset name of any architecture, :data:`DEFAULT_SIZE` first."""
    names = [DEFAULT_SIZE] + [s for t in trainers().values() for s in t.presets]
    return tuple(dict.fromkeys(names))
