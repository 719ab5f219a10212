"""LSTM LM training speed: `agree train-lm`'s step against the textbook loop, same model and data.

Two configurations (BPTT 35, random token data, SGD lr 20, clip 0.25, dropout 0.2):
  small: 2 x 200 LSTM, tied, 10k vocabulary, batch 8 (the --size small preset)
  paper: 2 x 650 LSTM, 50k vocabulary, batch 64 (Gulordava et al.'s model)

The reference is PyTorch's word_language_model recipe written out here:
nn.Embedding + nn.LSTM (time-major) + nn.Linear, CrossEntropyLoss on the
(T*B, V) logits, backward, clip_grad_norm_, and an SGD update ``p -= lr * grad``.
Ours is :func:`lm.neural.train.train_step` on :func:`lm.neural.models.build_model`
(the fused chunked softmax of :mod:`lm.neural.softmax_loss`). Both get the same
initial weights and the same windows; steps alternate (reference, ours, ...)
so that load from other processes hits both alike, and each side's figure is
its median step time.

Figure of merit: achieved FLOP/s = tokens/s x training FLOPs per token, with
forward FLOPs per token = sum over layers 8 H (in + H) (the four gates' two
matmuls) + 2 H V (the output layer), and training ~ 3 x forward (the backward
pass does two matmuls per forward one); against the machine's matmul FLOP/s,
timed on a large torch.matmul in the same run.

    .venv/bin/python benchmarks/bench_train.py [--quick] [--threads N]

Last line: ``train: N tokens/s, Rx reference`` (the paper configuration).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lm.neural.models import LMConfig, build_model  # noqa: E402
from lm.neural.train import Objective, train_step  # noqa: E402

CONFIGS = {"small": dict(vocab=10002, hidden=200, batch=8, tied=True),
           "paper": dict(vocab=50002, hidden=650, batch=64, tied=False)}
BPTT, LR, CLIP, LAYERS, DROPOUT = 35, 20.0, 0.25, 2, 0.2


class ReferenceLM(nn.Module):
    """The word_language_model RNNModel, LSTM case, time-major (T, B)."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout, tie_weights=False):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        return self.decoder(output).view(-1, self.decoder.out_features), hidden


def reference_step(model, criterion, x, y, hidden):
    """x, y: (T, B). The recipe's train() body."""
    hidden = tuple(h.detach() for h in hidden) if hidden is not None else None
    model.zero_grad()
    output, hidden = model(x, hidden)
    loss = criterion(output, y.reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-LR)
    return loss.item(), hidden


def matmul_flops(n: int, repeats: int = 5) -> float:
    """FLOP/s of an (n, n) @ (n, n) float32 torch.matmul, the fastest of ``repeats``
    (the machine's attainable rate; slower repeats are other processes' doing)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 / best


def flops_per_token(vocab: int, hidden: int) -> float:
    forward = LAYERS * 8 * hidden * (hidden + hidden) + 2 * hidden * vocab
    return 3 * forward


def bench(name: str, vocab: int, hidden: int, batch: int, tied: bool, steps: int,
          warmup: int) -> dict:
    torch.manual_seed(0)
    config = LMConfig(kind="lstm", vocab_size=vocab, emb_size=hidden, hidden_size=hidden,
                      layers=LAYERS, dropout=DROPOUT, tied=tied)
    ours = build_model(config)
    ref = ReferenceLM(vocab, hidden, hidden, LAYERS, DROPOUT, tie_weights=tied)
    # the same initial weights (the LSTM parameter names are the same in both)
    ref.encoder.load_state_dict(ours.embedding.state_dict())
    ref.rnn.load_state_dict(ours.rnn.state_dict())
    ref.decoder.load_state_dict(ours.decoder.state_dict())
    objective, params = Objective(ours), list(ours.parameters())
    opt = torch.optim.SGD(params, lr=LR, foreach=True)
    criterion = nn.CrossEntropyLoss()
    n = (warmup + steps) * BPTT + 1
    data = torch.randint(vocab, (batch, n), generator=torch.Generator().manual_seed(1))  # (B, n)
    times = {"reference": [], "ours": []}
    h_ref = h_ours = None
    for k in range(warmup + steps):
        i = k * BPTT
        x, y = data[:, i:i + BPTT], data[:, i + 1:i + 1 + BPTT]       # (B, T)
        xt, yt = x.t().contiguous(), y.t().contiguous()                # (T, B): the recipe's
        t = time.perf_counter()
        _, h_ref = reference_step(ref, criterion, xt, yt, h_ref)        # .item() syncs
        t_ref = time.perf_counter() - t
        t = time.perf_counter()
        loss, h_ours = train_step(objective, opt, params, x, y, h_ours, CLIP)
        float(loss)                                                     # the same sync
        t_ours = time.perf_counter() - t
        if k >= warmup:
            times["reference"].append(t_ref)
            times["ours"].append(t_ours)
    tokens = batch * BPTT
    out = {"name": name, "vocab": vocab, "hidden": hidden, "batch": batch, "tied": tied}
    for side in times:
        out[side] = tokens / statistics.median(times[side])
    out["ratio"] = out["ours"] / out["reference"]
    out["flops"] = out["ours"] * flops_per_token(vocab, hidden)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps (about a minute)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    peak = matmul_flops(2048 if args.quick else 4096)
    print(f"threads: {threads}")
    plan = {"small": (30, 5) if args.quick else (100, 10),
            "paper": (2, 1) if args.quick else (5, 1)}
    results = {}
    for name, c in CONFIGS.items():
        steps, warmup = plan[name]
        r = bench(name, c["vocab"], c["hidden"], c["batch"], c["tied"], steps, warmup)
        results[name] = r
        print(f"{name}: {r['hidden']} units{', tied' if r['tied'] else ''}, {r['vocab']} words, "
              f"batch {r['batch']}, bptt {BPTT}: "
              f"reference {r['reference']:.0f} tokens/s, ours {r['ours']:.0f} tokens/s "
              f"({r['ratio']:.2f}x)")
    peak = max(peak, matmul_flops(2048 if args.quick else 4096))    # once more, after
    print(f"matmul (fp32), best of before and after: {peak / 1e9:.1f} GFLOP/s")
    for r in results.values():
        print(f"{r['name']}: achieved {r['flops'] / 1e9:.1f} GFLOP/s = "
              f"{100 * r['flops'] / peak:.0f}% of matmul")
    p = results["paper"]
    print(f"train: {p['ours']:.0f} tokens/s, {p['ratio']:.2f}x reference")


if __name__ == "__main__":
    main()
