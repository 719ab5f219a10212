"""A stacked ``nn.LSTM`` stepped with its own weights, for reading many prefixes at once.

The scorer reads its items one time step at a time, one row per distinct prefix
(:mod:`lm.neural.prefixes`). Calling ``nn.LSTM`` at every step would compute, at every
step, the first layer's input projection ``W_ih x + b`` of every row, although it depends
on the word alone, and test items are made of few words. Here that projection is
computed once per distinct word of a batch and gathered, and each layer above takes
``[input, h]`` through one matrix product (``K = 2H``) instead of two. The paper's
Italian set with a 2 x 650 LSTM: 13,929 rows but 6,305 distinct words in its batches of
512, 14% less arithmetic; reading it takes a fifth less time than ``nn.LSTM`` step by
step (1.6 against 2.0 s on one thread, alternated).

The formula is ``nn.LSTM``'s (gates i, f, g, o in torch's order)::

    gates = W_ih x + b_ih + W_hh h + b_hh;  c' = f * c + i * g;  h' = o * tanh(c')

its figures the same to about 1e-7, not bit for bit: on a CPU ``nn.LSTM`` runs oneDNN's
fused cell, whose sums and sigmoid are its own (tests compare at 1e-5).

**Hook points** (``agree inspect``, in the manner of TransformerLens's
``blocks.{l}.hook_...``): each layer's states as they leave the cell are named
``layers.{l}.hook_c`` and ``layers.{l}.hook_h``. A hook given to :meth:`SteppedLSTM.step`
under one of those names is called with the state (rows, H) and the time step, and
returns the state the network carries on with (the recurrence, the layer above, the
output), or None to leave it as it is (a hook that only reads). ``hook_c`` runs first;
``h`` is computed from the cell's own ``c``, so a changed ``c`` shows in ``h`` from the
next step on. Without hooks a step runs exactly the ops it runs for scoring.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import torch
from torch import nn

#: the states of every layer: [(h, c)], each (rows, H)
State = list[tuple[torch.Tensor, torch.Tensor]]
#: a hook: (the state as it leaves the cell (rows, H), the time step) -> its replacement or None
Hook = Callable[[torch.Tensor, int], "torch.Tensor | None"]
#: the states a layer names, in the order their hooks run
HOOKED = ("c", "h")


def hook_point(layer: int, what: str) -> str:
    """The name of layer ``layer``'s ``h`` or ``c`` as it leaves the cell."""
    return f"layers.{layer}.hook_{what}"


def lstm_cell_(gates: torch.Tensor, c: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """One step from pre-activation ``gates`` (rows, 4H), used up, and the cell state
    (rows, H) before it (None: zero, the fresh state). Returns (h', c')."""
    H = gates.shape[1] // 4
    gates[:, :2 * H].sigmoid_()           # i, f
    gates[:, 2 * H:3 * H].tanh_()         # g
    gates[:, 3 * H:].sigmoid_()           # o
    i, f, g, o = gates.chunk(4, 1)
    c = i.mul(g) if c is None else f.mul(c).addcmul_(i, g)
    return o.mul(torch.tanh(c)), c


@dataclass(frozen=True)
class SteppedLSTM:
    """A unidirectional ``nn.LSTM``'s weights laid out for :meth:`step`."""
    hidden: int
    w_ih0: torch.Tensor           #: (4H, E) the first layer's input weights
    bias: list[torch.Tensor]      #: per layer, b_ih + b_hh (4H,)
    w_hh0_t: torch.Tensor         #: (H, 4H) the first layer's recurrent weights, transposed
    w_cat_t: list[torch.Tensor]   #: per layer above the first, [W_ih W_hh] transposed (2H, 4H)

    @classmethod
    def of(cls, rnn: nn.LSTM) -> "SteppedLSTM":
        if rnn.bidirectional or rnn.proj_size or rnn.mode != "LSTM":
            raise ValueError("SteppedLSTM reads unidirectional LSTMs without projections")
        H = rnn.hidden_size

        def get(name: str, layer: int) -> torch.Tensor:
            w = getattr(rnn, f"{name}_l{layer}", None)
            like = rnn.weight_hh_l0
            return w.detach() if w is not None else torch.zeros(4 * H, device=like.device, dtype=like.dtype)

        layers = range(rnn.num_layers)
        return cls(hidden=H, w_ih0=get("weight_ih", 0),
                   bias=[get("bias_ih", k) + get("bias_hh", k) for k in layers],
                   w_hh0_t=get("weight_hh", 0).t(),
                   w_cat_t=[None] + [torch.cat([get("weight_ih", k), get("weight_hh", k)], 1).t().contiguous()
                                     for k in layers[1:]])

    @property
    def layers(self) -> int:
        return len(self.bias)

    def hook_points(self) -> list[str]:
        """Every hook point's name, layer by layer (module docstring)."""
        return [hook_point(k, what) for k in range(self.layers) for what in HOOKED]

    def input_gates(self, x: torch.Tensor, layer: int = 0) -> torch.Tensor:
        """Layer ``layer``'s ``W_ih x + b_ih + b_hh`` for (n, in) inputs (the embeddings
        for layer 0, the layer below's h above it): (n, 4H)."""
        if layer == 0:
            return torch.addmm(self.bias[0], x, self.w_ih0.t())
        return torch.addmm(self.bias[layer], x, self.w_cat_t[layer][:self.hidden])

    def step(self, gates: torch.Tensor, state: State | None, hooks: dict[str, Hook] | None = None,
             t: int = 0, layers: range | None = None) -> tuple[torch.Tensor, State]:
        """One time step of ``layers`` (default: all): ``gates`` the rows' :meth:`input_gates`
        of the first of them (used up), ``state`` the rows' states of those layers before
        the step (None: fresh), ``hooks`` by hook point, ``t`` the step they are told.
        Returns (the last layer's h, the states of ``layers``)."""
        H = self.hidden
        layers = range(self.layers) if layers is None else layers
        out: State = []
        h = None
        for k in layers:
            before = state[k - layers.start] if state is not None else None
            if k == layers.start:
                if before is not None:
                    gates.addmm_(before[0], self.w_hh0_t if k == 0 else self.w_cat_t[k][H:])
            elif before is None:    # h before is zero: its half of the product adds nothing
                gates = torch.addmm(self.bias[k], h, self.w_cat_t[k][:H])
            else:
                gates = torch.addmm(self.bias[k], torch.cat([h, before[0]], 1), self.w_cat_t[k])
            h, c = lstm_cell_(gates, before[1] if before is not None else None)
            if hooks:
                c = _call(hooks.get(hook_point(k, "c")), c, t)
                h = _call(hooks.get(hook_point(k, "h")), h, t)
            out.append((h, c))
        return h, out


def _call(hook: Hook | None, value: torch.Tensor, t: int) -> torch.Tensor:
    """The value a hook leaves (itself when there is no hook or it returns None)."""
    if hook is None:
        return value
    changed = hook(value, t)
    return value if changed is None else changed


def gather_state(state: State, parents: Sequence[int]) -> State:
    """Each row's state taken from its parent's row (no copy where every row keeps its own)."""
    n = len(parents)
    if all(p == r for r, p in enumerate(parents)):
        return [(h[:n], c[:n]) for h, c in state]
    index = torch.tensor(parents, device=state[0][0].device)
    return [(h.index_select(0, index), c.index_select(0, index)) for h, c in state]
