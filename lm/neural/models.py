"""The neural language models: a word-level LSTM (the paper's) and a small causal transformer.

Both expose the same two pieces, which the trainer (:mod:`lm.neural.train`) and
the scorer (:mod:`lm.neural.scorer`) use directly:

- ``model.features(input (B, T) LongTensor, state=None) -> (h (B, T, H), state)``:
  the last hidden layer, after output dropout (a no-op in ``eval()`` mode).
  LSTM: ``state`` is the ``(h, c)`` tuple of ``nn.LSTM``, each (layers, B, H),
  to be carried across BPTT windows; transformer: always ``None`` (it sees only
  the T tokens it is given, T <= ``max_len``).
- ``model.decoder``: ``nn.Linear(H, vocab_size)`` giving the logits; with
  ``tied`` its weight *is* the input embedding's (Press & Wolf 2017), which
  needs ``emb_size == hidden_size``.

``forward(input, state)`` is ``decoder(features(...))``, logits (B, T, V). The
trainer does not call it: it feeds ``features`` and the decoder's weight to a
fused softmax + cross-entropy (:mod:`lm.neural.softmax_loss`) that never holds the
(B*T, V) logits at once.

H (the features' width, the decoder's input) is ``hidden_size`` for both kinds.
A checkpoint stores :meth:`LMConfig.to_dict` beside the ``state_dict``, never a
pickled module; :meth:`LMConfig.from_dict` refuses keys it does not know.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import asdict, dataclass, fields
from typing import Iterator

import torch
from torch import nn

KINDS = ("lstm", "transformer")
TOKENIZERS = ("word", "sentencepiece")


@dataclass
class LMConfig:
    """Architecture of a neural LM (everything needed to rebuild it for its weights).

    kind: "lstm" or "transformer";
    vocab_size: output (and input) vocabulary, <eos> and <unk> included
        (= lines of the model directory's vocab.txt);
    emb_size: input embedding width;
    hidden_size: LSTM units per layer / transformer model width (d_model);
        the width H of ``features`` and the decoder's input;
    layers: LSTM layers / transformer blocks;
    dropout: on embeddings, between layers and on the output (and inside the
        transformer's attention and feed-forward blocks);
    tied: decoder weight = embedding weight (needs emb_size == hidden_size);
    heads: attention heads (transformer only; must divide hidden_size);
    max_len: longest input the transformer reads (its learned positions);
    tokenizer: "word" (vocab.txt is words) or "sentencepiece" (pieces, spm.model).
    """
    kind: str = "lstm"
    vocab_size: int = 50002
    emb_size: int = 650
    hidden_size: int = 650
    layers: int = 2
    dropout: float = 0.2
    tied: bool = False
    heads: int = 4
    max_len: int = 128
    tokenizer: str = "word"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown model kind {self.kind!r} (known: {', '.join(KINDS)})")
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {self.tokenizer!r} "
                             f"(known: {', '.join(TOKENIZERS)})")
        for name in ("vocab_size", "emb_size", "hidden_size", "layers", "heads", "max_len"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1 (got {getattr(self, name)})")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1) (got {self.dropout})")
        if self.tied and self.emb_size != self.hidden_size:
            raise ValueError(f"tied weights need emb_size == hidden_size "
                             f"(got {self.emb_size} and {self.hidden_size})")
        if self.kind == "transformer" and self.hidden_size % self.heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not divisible by "
                             f"heads {self.heads}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "LMConfig":
        """Rebuild from :meth:`to_dict`; unknown keys are an error, not ignored."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown LMConfig keys: {', '.join(unknown)}")
        return cls(**d)


class LSTMLM(nn.Module):
    """Embedding -> dropout -> multi-layer LSTM -> dropout -> linear decoder."""

    def __init__(self, c: LMConfig):
        super().__init__()
        self.config = c
        self.embedding = nn.Embedding(c.vocab_size, c.emb_size)
        self.drop = nn.Dropout(c.dropout)
        # batch_first keeps the public (B, T) layout; nn.LSTM's own dropout acts
        # between layers only, the output dropout is ours.
        self.rnn = nn.LSTM(c.emb_size, c.hidden_size, c.layers, batch_first=True,
                           dropout=c.dropout if c.layers > 1 else 0.0)
        self.decoder = nn.Linear(c.hidden_size, c.vocab_size)
        # The word_language_model recipe's initialisation (uniform +-0.1, zero bias).
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        if c.tied:
            self.decoder.weight = self.embedding.weight

    def features(self, input: torch.Tensor, state=None):
        x = self.drop(self.embedding(input))          # (B, T, E)
        h, state = self.rnn(x, state)                 # (B, T, H); state: 2 x (L, B, H)
        return self.drop(h), state

    def forward(self, input: torch.Tensor, state=None):
        h, state = self.features(input, state)
        return self.decoder(h), state                 # (B, T, V)

    def init_state(self, batch_size: int, device=None):
        """Zero (h, c) for ``batch_size`` streams (what ``state=None`` means)."""
        c = self.config
        z = torch.zeros(c.layers, batch_size, c.hidden_size, device=device)
        return (z, z.clone())


class TransformerLM(nn.Module):
    """Causal pre-norm transformer: embedding (+ projection) + learned positions ->
    blocks -> LayerNorm -> linear decoder."""

    def __init__(self, c: LMConfig):
        super().__init__()
        self.config = c
        self.embedding = nn.Embedding(c.vocab_size, c.emb_size)
        # A projection only when the embedding is narrower/wider than the model.
        self.project = (nn.Linear(c.emb_size, c.hidden_size, bias=False)
                        if c.emb_size != c.hidden_size else nn.Identity())
        self.position = nn.Embedding(c.max_len, c.hidden_size)
        self.drop = nn.Dropout(c.dropout)
        block = nn.TransformerEncoderLayer(
            c.hidden_size, c.heads, dim_feedforward=4 * c.hidden_size, dropout=c.dropout,
            activation="gelu", batch_first=True, norm_first=True)
        # enable_nested_tensor only matters for padding masks, which we never pass
        self.blocks = nn.TransformerEncoder(block, c.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(c.hidden_size)
        self.decoder = nn.Linear(c.hidden_size, c.vocab_size)
        nn.init.normal_(self.embedding.weight, std=0.02)
        nn.init.normal_(self.position.weight, std=0.02)
        nn.init.normal_(self.decoder.weight, std=0.02)
        nn.init.zeros_(self.decoder.bias)
        if c.tied:
            self.decoder.weight = self.embedding.weight

    def features(self, input: torch.Tensor, state=None):
        B, T = input.shape
        if T > self.config.max_len:
            raise ValueError(f"input of {T} tokens is longer than the transformer's "
                             f"max_len {self.config.max_len}")
        pos = torch.arange(T, device=input.device)
        x = self.project(self.embedding(input)) + self.position(pos)   # (B, T, H)
        x = self.drop(x)
        # -inf above the diagonal: position t attends to positions <= t only.
        mask = torch.triu(torch.full((T, T), -math.inf, device=input.device), diagonal=1)
        h = self.blocks(x, mask=mask, is_causal=True)                   # (B, T, H)
        return self.drop(self.norm(h)), None

    def forward(self, input: torch.Tensor, state=None):
        h, _ = self.features(input, state)
        return self.decoder(h), None                  # (B, T, V)


def build_model(config: LMConfig, *, init: bool = True) -> nn.Module:
    """A freshly initialised model (uses torch's global RNG: seed it, or fork it, first);
    with ``init=False`` the weights filled through ``torch.nn.init`` (all of an LSTM's;
    a transformer's attention projections fill theirs themselves) are left as allocated,
    for weights loaded next to replace (``load_state_dict(..., assign=True)``): drawing 65
    million random numbers for the paper's LSTM to throw them away takes longer than
    reading the file."""
    with contextlib.nullcontext() if init else _no_init():
        return LSTMLM(config) if config.kind == "lstm" else TransformerLM(config)


#: the torch.nn.init functions our modules and torch's own reset_parameters call
_INIT_FUNCTIONS = ("uniform_", "normal_", "zeros_", "ones_", "constant_", "kaiming_uniform_",
                   "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "trunc_normal_")


@contextlib.contextmanager
def _no_init() -> Iterator[None]:
    """torch.nn.init's fills as no-ops while modules are built (the way transformers'
    ``no_init_weights`` skips initialising weights it is about to load); restored after."""
    saved = {name: getattr(nn.init, name) for name in _INIT_FUNCTIONS}
    try:
        for name in _INIT_FUNCTIONS:
            setattr(nn.init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, f in saved.items():
            setattr(nn.init, name, f)


def n_parameters(model: nn.Module) -> int:
    """Distinct trainable parameters (a tied weight counts once)."""
    return sum(p.numel() for p in model.parameters())
