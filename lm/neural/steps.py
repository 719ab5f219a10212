"""The step-level pieces of neural training (:mod:`lm.neural.train` runs them): the
objective DistributedDataParallel wraps, one optimizer step and the validation pass
(the SIGINT/SIGTERM flag that turns Ctrl-C into "finish the batch, checkpoint, stop" is
torch-free: :mod:`lm.training.interrupt`)."""
from __future__ import annotations

import torch
from torch import nn

from lm.training.distributed import DistInfo, agree
from lm.neural.data import windows
from lm.neural.softmax_loss import linear_cross_entropy, token_nll


class Objective(nn.Module):
    """Mean training loss (nats) of one window: what DistributedDataParallel wraps."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x, y, state):
        h, state = self.model.features(x, state)                   # (B, T, H)
        dec = self.model.decoder
        loss = linear_cross_entropy(h.reshape(-1, h.shape[-1]), dec.weight, dec.bias,
                                    y.reshape(-1))
        return loss, state


def _detach(state):
    return None if state is None else tuple(s.detach() for s in state)


def train_step(objective: nn.Module, opt: torch.optim.Optimizer, params: list, x: torch.Tensor,
               y: torch.Tensor, state, clip: float):
    """One optimizer step on window ``x -> y`` (B, T); returns (loss tensor, new state).

    The carried LSTM state is detached first: gradients stop at the window edge.
    """
    opt.zero_grad(set_to_none=True)
    loss, state = objective(x, y, _detach(state))
    loss.backward()
    if clip > 0:
        # foreach: one fused kernel over all gradients instead of one per tensor
        nn.utils.clip_grad_norm_(params, clip, foreach=True)
    opt.step()
    return loss.detach(), state


@torch.no_grad()
def evaluate(model: nn.Module, data: torch.Tensor, scored: torch.Tensor, bptt: int, unk_id: int,
             stateful: bool, device: torch.device, info: DistInfo) -> tuple[float, int]:
    """Summed NLL (nats) and count of the scored, non-<unk> targets of (rows, L+1)
    ``data`` (see :func:`lm.neural.data.eval_layout`), over all processes."""
    model.eval()
    total, count, state = 0.0, 0, None
    for i in windows(data.shape[1], bptt):
        seq = min(bptt, data.shape[1] - 1 - i)
        x, y = data[:, i:i + seq], data[:, i + 1:i + 1 + seq]       # (E, seq)
        h, state = model.features(x, state if stateful else None)
        nll = token_nll(h.reshape(-1, h.shape[-1]), model.decoder.weight, model.decoder.bias,
                        y.reshape(-1))
        keep = (y.reshape(-1) != unk_id) & scored[:, i:i + seq].reshape(-1)
        total += float(nll[keep].sum())
        count += int(keep.sum())
    model.train()
    total, count = agree([total, count], device, info, op="sum")
    return total, int(count)
