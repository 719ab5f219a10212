"""Output layer + softmax + cross-entropy, fused and chunked, for training and evaluation.

Why: with a 50k vocabulary the output layer is most of an LSTM LM's cost. The
textbook ``CrossEntropyLoss(decoder(h), y)`` materialises the (N, V) logits
(N = batch x bptt = 2,240 rows, V = 50k: 448 MB of float32), then a log-softmax
of the same size, then in backward a same-sized gradient of the log-softmax,
each a full pass through main memory and a fresh allocation. Here the logits
exist one chunk of rows at a time in a reused buffer, turned in place into
``softmax - onehot`` (the gradient of the loss w.r.t. the logits), and the
three matmuls (logits, grad of h, grad of W) run on that chunk while it is warm
in cache. Same FLOPs, same result up to float rounding; the gradient is computed
in the forward pass, so backward is three multiplications by the incoming
scalar. Measured on 2 CPU cores it is what puts ``agree train-lm`` ahead of the
textbook loop (``benchmarks/bench_train.py``).

Units: losses are natural-log negative log-likelihoods (nats).
"""
from __future__ import annotations

import torch

#: target number of logits (rows x V) per chunk: 4M floats = 16 MB, a block
#: that stays in a CPU's L3 cache while it is turned into the gradient.
CHUNK_ELEMENTS = 1 << 22
#: but at least this many rows: each chunk adds its (V, H) product into the
#: weight gradient, a read and a write of V x H floats, which must stay small
#: against the chunk's own work (2,240 rows, V = 50k, H = 650, one CPU thread:
#: 83-row chunks 201 tokens/s, 256 or 512 rows 248, one 2,240-row block 230).
MIN_ROWS = 256


def chunk_rows(n_rows: int, vocab: int, device: torch.device) -> int:
    """Rows per chunk: all of them on a GPU (memory is fast there), a cache-sized
    block of at least MIN_ROWS rows on a CPU."""
    if device.type != "cpu":
        return max(1, n_rows)
    return max(1, min(n_rows, max(MIN_ROWS, CHUNK_ELEMENTS // max(vocab, 1))))


class _LinearCrossEntropy(torch.autograd.Function):
    """mean_i -log softmax(h_i W^T + b)[y_i], gradients computed in forward."""

    @staticmethod
    def forward(ctx, h, weight, bias, target, rows):
        # h: (N, H), weight: (V, H), bias: (V,) or None, target: (N,) int64
        N = h.shape[0]
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        need_b = bias is not None and ctx.needs_input_grad[2]
        grad_h = torch.empty_like(h) if need_h else None
        grad_w = torch.zeros_like(weight) if need_w else None
        grad_b = torch.zeros_like(bias) if need_b else None
        total = torch.zeros((), dtype=torch.float32, device=h.device)
        buf = torch.empty((min(rows, N), weight.shape[0]), dtype=h.dtype, device=h.device)
        for s in range(0, N, rows):
            hc, yc = h[s:s + rows], target[s:s + rows, None]       # (n, H), (n, 1)
            n = hc.shape[0]
            z = buf[:n]                                              # (n, V)
            if bias is not None:
                torch.addmm(bias, hc, weight.t(), out=z)
            else:
                torch.mm(hc, weight.t(), out=z)
            picked = z.gather(1, yc)                                 # (n, 1) target logits
            top = z.amax(1, keepdim=True)                            # (n, 1)
            z.sub_(top).exp_()                                       # unnormalised softmax
            norm = z.sum(1, keepdim=True)                            # (n, 1)
            total += (norm.log() + top - picked).sum()
            z.div_(norm)                                             # softmax
            z.scatter_add_(1, yc, torch.full_like(picked, -1.0))     # softmax - onehot
            if need_h:
                torch.mm(z, weight, out=grad_h[s:s + n])             # (n, H)
            if need_w:
                grad_w.addmm_(z.t(), hc)                             # (V, H)
            if need_b:
                grad_b += z.sum(0)
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
        hc, yc = h[s:s + rows], target[s:s + rows, None]
        z = torch.addmm(bias, hc, weight.t()) if bias is not None else hc @ weight.t()
        out[s:s + rows] = (torch.logsumexp(z.float(), 1, keepdim=True)
                           - z.gather(1, yc).float())[:, 0]
    return out
