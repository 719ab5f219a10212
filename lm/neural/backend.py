"""agree's neural models as backends (kinds ``lstm`` and ``transformer``, model
directories written by ``agree train-lm``): their load options and their records.

torch is imported only when such a model is loaded or opened (:func:`_load`, the
openers), so that naming the backends (:data:`lm.load.BACKENDS`) costs nothing.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from lm.backends import Backend
from lm.heavy_import import import_heavy


@dataclass(frozen=True)
class NeuralOptions:
    """How a neural model is loaded (:class:`lm.neural.scorer.NeuralScorer`).

    device       cpu, cuda, cuda:N or auto (:mod:`lm.device`)
    batch_size   sequences per forward pass
    carry_state  the released code's habit: one stream, the state never reset (LSTM)
    word_end     a subword model's word-end factor (False: the plain product of pieces)
    """
    device: str = "auto"
    batch_size: int = 512
    carry_state: bool = False
    word_end: bool = True


def _load(path: Path, config: dict, options: NeuralOptions):
    # torch comes with the scorer's module, imported with the collector paused (lm.heavy_import)
    return import_heavy("lm.neural.load").load_neural(path, config, **asdict(options))


def _open_lstm(scorer):
    from lm.neural.open_lstm import open_scorer  # torch: already in, with the scorer
    return open_scorer(scorer)


def _open_transformer(scorer):
    from lm.neural.open_transformer import open_scorer  # torch: already in, with the scorer
    return open_scorer(scorer)


LSTM = Backend("lstm", NeuralOptions, _load, opener=_open_lstm)
TRANSFORMER = Backend("transformer", NeuralOptions, _load, opener=_open_transformer)
