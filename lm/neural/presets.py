"""The neural architectures' settings and presets, registered for training (torch-free).

``lstm`` and ``transformer`` are trained by :mod:`lm.neural.train`; this module holds
what may be read without torch (``agree train-lm --help`` lists the presets): the
training options (:class:`TrainOptions`, saved in config.json under "training"), the
presets, and their registration in :mod:`lm.training.trainers`.

Presets: "paper" is the recipe of Gulordava et al. (2 x 650 LSTM, dropout 0.2, SGD lr
20 /4 on plateau, BPTT 35, batch 64, clip 0.25, 50k words = the corpus vocabulary, 40
epochs). "small" trains in minutes on 2 CPU cores on ~0.5-1M tokens: 2 x 200 units,
tied, the 10k most frequent words (a full softmax: the output layer is what costs, and
10k words keep it at a fifth of the paper's), batch 8 (on 0.4M tokens of Wikipedia,
after 0.28M tokens seen: valid ppl 403 at batch 32, 278 at batch 8 tied, 289 untied),
3 epochs. Transformers: pre-norm, GELU, learned positions, Adam, 128-token windows.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from lm.errors import FieldError, LMError
from lm.training.trainers import Trainer, get_trainer, register_trainer
from lm.training.snapshots import Schedule

#: the LMConfig fields (lm.neural.models) a user sets; kind and vocab_size come from the
#: architecture and the vocabulary built (a test checks this list against LMConfig)
MODEL_SETTINGS = ("emb_size", "hidden_size", "layers", "dropout", "tied", "heads", "max_len",
                  "tokenizer")
#: settings that must be at least 1 when given
POSITIVE_SETTINGS = ("epochs", "max_steps", "batch_size", "bptt", "layers", "hidden_size",
                     "emb_size")


@dataclass(frozen=True)
class TrainOptions:
    """Training hyperparameters (saved in config.json under "training").

    epochs: passes over the training split; max_steps: stop after this many
    optimizer steps in all (None: no limit); batch_size: sequences (rows of the
    training stream, ``bptt`` tokens each) per forward pass and optimizer step, per
    process; bptt: tokens per window (the transformer's context in training);
    lr: initial learning rate; lr_decay: divisor when validation does not
    improve; optimizer: "sgd" (the paper's) or "adam"; clip: gradient norm cap;
    eval_batch_size: validation rows per process; vocab_size: word models, words
    kept besides <eos>/<unk> (None: the corpus vocabulary); sp_vocab_size:
    sentencepiece pieces; checkpoint_minutes: time between checkpoints (0: only
    at epoch ends); device: see :mod:`lm.device`; threads: CPU threads per
    process (None: the cores shared out among processes); seed: initialisation,
    dropout and sentencepiece; snapshot_every, snapshot_tokens: a snapshot every so many
    optimizer steps, or training tokens (None: none; see :mod:`lm.training.snapshots`).
    """
    epochs: int = 40
    max_steps: int | None = None
    batch_size: int = 64
    bptt: int = 35
    lr: float = 20.0
    lr_decay: float = 4.0
    optimizer: str = "sgd"
    clip: float = 0.25
    eval_batch_size: int = 16
    vocab_size: int | None = None
    sp_vocab_size: int = 8000
    checkpoint_minutes: float = 10.0
    device: str = "auto"
    threads: int | None = None
    seed: int = 1111
    snapshot_every: int | None = None
    snapshot_tokens: int | None = None


#: every setting of the neural trainers -> its default (None for a model setting:
#: LMConfig's default; the presets set the ones that matter)
DEFAULTS = {**{name: None for name in MODEL_SETTINGS},
            **{f.name: f.default for f in fields(TrainOptions) if f.name != "seed"}}

PRESETS = {
    "lstm": {
        "paper": dict(emb_size=650, hidden_size=650, layers=2, dropout=0.2, tied=False,
                      epochs=40, batch_size=64, bptt=35, lr=20.0, clip=0.25,
                      optimizer="sgd", vocab_size=None),
        "small": dict(emb_size=200, hidden_size=200, layers=2, dropout=0.2, tied=True,
                      epochs=3, batch_size=8, bptt=35, lr=20.0, clip=0.25,
                      optimizer="sgd", vocab_size=10000),
    },
    "transformer": {
        "paper": dict(emb_size=512, hidden_size=512, layers=6, heads=8, dropout=0.1,
                      tied=True, max_len=128, epochs=20, batch_size=32, bptt=128,
                      lr=5e-4, clip=1.0, optimizer="adam", vocab_size=None),
        "small": dict(emb_size=256, hidden_size=256, layers=2, heads=4, dropout=0.1,
                      tied=True, max_len=128, epochs=3, batch_size=16, bptt=128,
                      lr=1e-3, clip=1.0, optimizer="adam", vocab_size=10000),
    },
}


def neural_configs(arch: str, settings: dict, seed: int):
    """(LMConfig, TrainOptions) of ``settings`` (as :meth:`lm.training.trainers.Trainer.settings`
    gives them). LMConfig.vocab_size is set later, from the vocabulary actually built;
    ``vocab_size`` here is the word cap of TrainOptions."""
    from lm.neural.models import LMConfig  # lazy: heavy (torch); this module is read for --help

    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise FieldError(f"{{arch}} {arch} does not take "
                         + ", ".join("{" + name + "}" for name in unknown))
    for name in POSITIVE_SETTINGS:
        if settings.get(name) is not None and settings[name] < 1:
            raise FieldError(f"{{{name}}} must be at least 1 (got {settings[name]})")
    Schedule.of(settings.get("snapshot_every"), settings.get("snapshot_tokens"))
    model = {k: settings[k] for k in MODEL_SETTINGS if settings.get(k) is not None}
    try:
        config = LMConfig(kind=arch, **model)
    except ValueError as e:
        raise LMError(f"invalid model settings: {e}") from None
    options = TrainOptions(seed=seed, **{k: v for k, v in settings.items()
                                         if k not in MODEL_SETTINGS})
    _check_memory(config, options)
    return config, options


def _check_memory(config, options) -> None:
    """Sizes that cannot fit are refused before anything is written or built; the
    vocabulary is not known yet (a lower bound is used: the pieces asked for, or none
    for words), so :mod:`lm.neural.train` checks again once it is built."""
    from lm.neural.budget import check_training_memory, device_memory  # lazy: with torch, as LMConfig above
    from lm.device import resolve_device

    vocab = options.sp_vocab_size if config.tokenizer == "sentencepiece" else 2
    available, on_gpu = device_memory(resolve_device(options.device))
    check_training_memory(config, options, vocab, available, on_gpu, vocab_known=vocab > 2)


def neural_settings(arch: str, size: str, *, seed: int, max_steps: int | None = None,
                    epochs: int | None = None, options: dict | None = None):
    """(LMConfig, TrainOptions) of the preset ``size`` with ``options`` (None = not
    given) laid over it, as ``agree train-lm`` would train them."""
    given = {**(options or {}), "max_steps": max_steps, "epochs": epochs}
    return neural_configs(arch, get_trainer(arch).settings(size, given), seed)


for _arch in PRESETS:
    register_trainer(Trainer(arch=_arch, train="lm.neural.train:train_model",
                             check="lm.neural.presets:neural_configs", defaults=DEFAULTS,
                             presets=PRESETS[_arch], checkpointed=True))
