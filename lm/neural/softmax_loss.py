"""Output layer + softmax + cross-entropy, fused and chunked, for training and evaluation.

Why: with a 50k vocabulary the output layer is most of an LSTM LM's cost. The
textbook ``CrossEntropyLoss(decoder(h), y)`` materialises the (N, V) logits
(N = batch x bptt = 2,240 rows, V = 50k: 448 MB of float32), then a log-softmax
of the same size, then in backward a same-sized gradient of the log-softmax,
each a full pass through main memory and a fresh allocation. Here the logits
exist one chunk of rows at a time in a reused buffer (transposed, see
:func:`_logits_t`), turned in place into ``softmax - onehot`` (the gradient of
the loss w.r.t. the logits), and the three matmuls (logits, grad of h, grad of
W) run on that chunk while it is warm in cache. Same FLOPs, same result up to float rounding; the gradient is computed
in the forward pass, so backward is three multiplications by the incoming
scalar. Measured on 2 CPU cores it is what puts ``agree train-lm`` ahead of the
textbook loop (``benchmarks/bench_train.py``).

Units: losses are natural-log negative log-likelihoods (nats).
"""
from __future__ import annotations

import torch

#: target number of logits (V x rows) per chunk: 4M floats = 16 MB, a block
#: that stays in a CPU's L3 cache while it is turned into the gradient.
CHUNK_ELEMENTS = 1 << 22
#: but at least this many rows: each chunk adds its (V, H) product into the
#: weight gradient, a read and a write of V x H floats, which must stay small
#: against the chunk's own work (2,240 rows, V = 50k, H = 650, one CPU thread:
#: fused loss + gradients 6.66 s with 256-row chunks, 6.34 s with 512, 6.62 s
#: with 1,120, 6.57 s in one block; the textbook F.cross_entropy 7.82 s).
MIN_ROWS = 512


def chunk_rows(n_rows: int, vocab: int, device: torch.device) -> int:
    """Rows per chunk: all of them on a GPU (memory is fast there), a cache-sized
    block of at least MIN_ROWS rows on a CPU."""
    if device.type != "cpu":
        return max(1, n_rows)
    return max(1, min(n_rows, max(MIN_ROWS, CHUNK_ELEMENTS // max(vocab, 1))))


def _logits_t(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
              out: torch.Tensor | None = None) -> torch.Tensor:
    """Transposed logits ``W @ h.T + b``: (V, n), one column per row of h.

    Why transposed: BLAS runs (V, H) @ (H, n) at 84-90 GFLOP/s on one core of
    this machine but the same product as (n, H) @ (H, V) at 50-62, and the
    softmax over a column is as cheap as over a row (reductions over dim 0 of
    a contiguous matrix vectorise across the columns).
    """
    if bias is not None:
        return torch.addmm(bias[:, None], weight, h.t(), out=out)
    return torch.mm(weight, h.t(), out=out)


class _LinearCrossEntropy(torch.autograd.Function):
    """mean_i -log softmax(h_i W^T + b)[y_i], gradients computed in forward."""

    @staticmethod
    def forward(ctx, h, weight, bias, target, rows):
        # h: (N, H), weight: (V, H), bias: (V,) or None, target: (N,) int64
        N, V = h.shape[0], weight.shape[0]
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        need_b = bias is not None and ctx.needs_input_grad[2]
        grad_h = torch.empty_like(h) if need_h else None
        grad_w = torch.zeros_like(weight) if need_w else None
        grad_b = torch.zeros_like(bias) if need_b else None
        total = torch.zeros((), dtype=torch.float32, device=h.device)
        buf = torch.empty((V, min(rows, N)), dtype=h.dtype, device=h.device)
        for s in range(0, N, rows):
            hc, yc = h[s:s + rows], target[s:s + rows]               # (n, H), (n,)
            n = hc.shape[0]
            z = _logits_t(hc, weight, bias, out=buf if n == buf.shape[1] else None)  # (V, n)
            cols = torch.arange(n, device=h.device)
            picked = z[yc, cols]                                     # (n,) target logits
            top = z.amax(0, keepdim=True)                            # (1, n)
            z.sub_(top).exp_()                                       # unnormalised softmax
            norm = z.sum(0, keepdim=True)                            # (1, n)
            total += (norm.log()[0] + top[0] - picked).sum()
            z.div_(norm)                                             # softmax
            z[yc, cols] -= 1.0                                       # softmax - onehot
            if need_h:
                torch.mm(z.t(), weight, out=grad_h[s:s + n])         # (n, H)
            if need_w:
                grad_w.addmm_(z, hc)                                 # (V, H)
            if need_b:
                grad_b += z.sum(1)
        scale = 1.0 / N                                              # mean over rows
        for g in (grad_h, grad_w, grad_b):
            if g is not None:
                g.mul_(scale)
        ctx.grads = (grad_h, grad_w, grad_b)
        return total * scale

    @staticmethod
    def backward(ctx, grad_out):
        grad_h, grad_w, grad_b = ctx.grads
        del ctx.grads
        # grad_out is a scalar (1.0 unless the loss is scaled); in place saves a copy.
        return tuple(None if g is None else g.mul_(grad_out) for g in (grad_h, grad_w, grad_b)) \
            + (None, None)


def linear_cross_entropy(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                         target: torch.Tensor, rows: int | None = None) -> torch.Tensor:
    """Mean cross-entropy (nats) of ``h (N, H) @ weight.T (V, H) + bias`` against ``target (N,)``.

    Differentiable w.r.t. ``h``, ``weight`` and ``bias``; equal to
    ``F.cross_entropy(F.linear(h, weight, bias), target)``.
    """
    if rows is None:
        rows = chunk_rows(h.shape[0], weight.shape[0], h.device)
    if torch.is_grad_enabled() and (h.requires_grad or weight.requires_grad
                                    or (bias is not None and bias.requires_grad)):
        return _LinearCrossEntropy.apply(h, weight, bias, target, rows)
    return token_nll(h, weight, bias, target, rows).mean()


@torch.no_grad()
def token_nll(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
              target: torch.Tensor, rows: int | None = None) -> torch.Tensor:
    """Per-row negative log-likelihood (nats), shape (N,), without gradients."""
    if rows is None:
        rows = chunk_rows(h.shape[0], weight.shape[0], h.device)
    out = torch.empty(h.shape[0], dtype=torch.float32, device=h.device)
    for s in range(0, h.shape[0], rows):
        hc, yc = h[s:s + rows], target[s:s + rows]
        z = _logits_t(hc, weight, bias).float()                        # (V, n)
        cols = torch.arange(hc.shape[0], device=h.device)
        out[s:s + rows] = torch.logsumexp(z, 0) - z[yc, cols]
    return out
