"""Hugging Face causal models opened (:class:`lm.open_hooks.HookedModel`): the residual
stream after each decoder block, the MLP units (the input of the MLP's output
projection) and the attention heads (the input of the attention output projection,
split into ``num_attention_heads`` slices).

The modules are found by the names the common architectures give them
(:data:`BLOCKS`, :data:`MLP_OUT`, :data:`HEAD_OUT`: Llama/Mistral/Qwen/SmolLM, GPT-2,
GPT-NeoX); a model without them cannot be opened. Llama-family models
(:data:`SKIPPING`, whose body adds nothing to its input embeddings but rotary
positions) start a pass at any block from given hidden states: their decoder blocks
are handed to the body's own forward as ``inputs_embeds`` with its block list cut
(:meth:`OpenHF.run_from`), so an intervention at block ``l`` runs blocks ``l``.. only.

What the model reads is what the scorer reads (:mod:`lm.pieces`, the scorer's
convention: BOS, then the text as written); both forms must be one piece there.
"""
from __future__ import annotations

import contextlib

import torch

from lm.base import TargetQuery
from lm.hf.causal import HFCausalScorer
from lm.open import ItemInput, single_piece_input
from lm.open_hooks import HookedModel
from lm.pieces import spaces_of

#: where the decoder blocks are, on the body (``model.base_model``)
BLOCKS = ("layers", "h", "blocks")
#: per block, the module whose input is the MLP's hidden units
MLP_OUT = ("mlp.down_proj", "mlp.c_proj", "mlp.dense_4h_to_h", "mlp.fc2")
#: per block, the module whose input is the concatenated attention heads
HEAD_OUT = ("self_attn.o_proj", "attn.c_proj", "attention.dense", "self_attn.dense")
#: model types whose body may start at any block from ``inputs_embeds``
SKIPPING = ("llama", "mistral", "qwen2", "qwen3")


def _get(module, path: str):
    for part in path.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def _find(block, paths) -> str | None:
    return next((p for p in paths if _get(block, p) is not None), None)


class OpenHF(HookedModel):
    """A :class:`lm.hf.causal.HFCausalScorer` opened."""

    def __init__(self, scorer, blocks_attr: str):
        self.scorer, self.kind, self.name = scorer, scorer.kind, scorer.name
        self.body = scorer.model.base_model
        self.device = scorer.device
        self.blocks_attr = blocks_attr
        self.blocks = list(getattr(self.body, blocks_attr))
        mlp, heads = _find(self.blocks[0], MLP_OUT), _find(self.blocks[0], HEAD_OUT)
        self.mlp_out = [_get(b, mlp) for b in self.blocks] if mlp else None
        self.head_out = [_get(b, heads) for b in self.blocks] if heads else None
        cfg = scorer.model.config
        self.n_heads = int(getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_head", 0) or 0)
        if self.n_heads < 1:
            self.head_out = None
        self.d_model = int(getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd"))
        self.pad_id = scorer.pad_id
        self.out_w, self.out_b = scorer.runner.weight, scorer.runner.bias
        self.max_positions = scorer.max_positions
        self.skips = getattr(cfg, "model_type", "") in SKIPPING and blocks_attr == "layers"

    def encode(self, query: TargetQuery) -> ItemInput | str:
        s, t = self.scorer, query.index
        flags = spaces_of(query.words, query.space_after)[:t + 1]
        encs = [s.try_encoded(tuple(query.words[:t]) + (form,), flags) for form in query.candidates]
        if encs[0] is None or encs[1] is None:
            return "the tokenizer cannot encode it"
        good, bad = encs
        head = [p for p, w in enumerate(good.owner) if w != t]
        if list(good.ids[:len(head)]) != list(bad.ids[:len(head)]):
            return "the forms change the pieces before them"
        if self.max_positions is not None and len(good.ids) > self.max_positions:
            return "longer than the model's context"
        wrong = [i for i, w in zip(bad.ids, bad.owner) if w == t]
        return single_piece_input(good.ids, good.owner, t, wrong)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.body.get_input_embeddings()(ids)

    def final(self, ids: torch.Tensor) -> torch.Tensor:
        return self.body(input_ids=ids, use_cache=False).last_hidden_state

    def run_from(self, start: int, hidden: torch.Tensor) -> torch.Tensor:
        with self._cut(start):
            return self.body(inputs_embeds=hidden, use_cache=False).last_hidden_state

    @contextlib.contextmanager
    def _cut(self, start: int):
        """The body's block list without its first ``start`` blocks, for one pass."""
        whole = getattr(self.body, self.blocks_attr)
        setattr(self.body, self.blocks_attr, torch.nn.ModuleList(self.blocks[start:]))
        try:
            yield
        finally:
            setattr(self.body, self.blocks_attr, whole)


def open_scorer(scorer) -> OpenHF | None:
    """A transformers causal scorer opened; None for anything else (lm.load.open_model
    refuses it)."""
    if not isinstance(scorer, HFCausalScorer):
        return None
    body = scorer.model.base_model
    attr = next((a for a in BLOCKS if isinstance(getattr(body, a, None), torch.nn.ModuleList)), None)
    return None if attr is None else OpenHF(scorer, attr)
