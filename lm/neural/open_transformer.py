"""agree's transformer opened (:class:`lm.open_hooks.HookedModel`): the residual stream
after each block and the MLP units (the input of ``linear2``, after the GELU).

The attention heads are not reachable: ``nn.MultiheadAttention`` applies its output
projection inside one fused function, with no module call between the heads and
the projection, so this model has no ``heads`` site. Torch's fused encoder-layer
path (which would also skip the MLP's module calls) is switched off while the model
is opened and read (:func:`_slow_path`).
"""
from __future__ import annotations

import contextlib
import math

import torch

from lm.base import TargetQuery
from lm.open import ItemInput
from lm.open_hooks import HookedModel
from lm.neural.item_input import neural_input
from lm.neural.scorer import NeuralScorer


@contextlib.contextmanager
def _slow_path():
    """Torch's MHA/encoder fast path off (it bypasses the sub-modules the hooks sit on)."""
    was = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(was)


class OpenTransformer(HookedModel):
    """A :class:`lm.neural.scorer.NeuralScorer` of kind transformer, opened."""

    skips = True

    def __init__(self, scorer):
        self.scorer, self.kind, self.name = scorer, "transformer", scorer.name
        self.net = scorer.model
        self.device = scorer.device
        self.blocks = list(self.net.blocks.layers)
        self.mlp_out = [b.linear2 for b in self.blocks]
        self.head_out = None
        self.d_model = self.net.config.hidden_size
        self.pad_id = scorer.eos_id
        self.out_w, self.out_b = (w.detach().float() for w in scorer.output_layer())

    def encode(self, query: TargetQuery) -> ItemInput | str:
        inp = neural_input(self.scorer, query)
        if isinstance(inp, ItemInput) and len(inp) > self.net.config.max_len:
            return "longer than the model's context"
        return inp

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device)
        return self.net.project(self.net.embedding(ids)) + self.net.position(pos)

    def final(self, ids: torch.Tensor) -> torch.Tensor:
        with _slow_path():
            return self.net.features(ids)[0]

    def run_from(self, start: int, hidden: torch.Tensor) -> torch.Tensor:
        T = hidden.shape[1]
        mask = torch.triu(torch.full((T, T), -math.inf, device=hidden.device), diagonal=1)
        with _slow_path():
            for block in self.blocks[start:]:
                hidden = block(hidden, src_mask=mask, is_causal=True)
            return self.net.norm(hidden)


def open_scorer(scorer) -> OpenTransformer | None:
    """agree's transformer scorer opened; None for anything else (lm.load.open_model
    refuses it)."""
    if not isinstance(scorer, NeuralScorer) or scorer.kind != "transformer":
        return None
    return OpenTransformer(scorer)
