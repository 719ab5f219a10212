"""Training the neural LMs (LSTM, transformer): the paper's recipe, resumable, distributed.

The loop (PyTorch's word_language_model recipe, which Gulordava et al. used):
the training stream is cut into B rows (:mod:`lm.neural_data`) read in BPTT
windows; the LSTM state is carried from window to window (detached, so
gradients stop at the window edge) and reset at each epoch; SGD with gradient
norm clipping; after each epoch the validation perplexity (``<unk>`` targets
excluded) decides: better than before -> ``model.pt`` is rewritten, otherwise
the learning rate is divided by ``lr_decay`` (4). The transformer reads the same
windows without a state, with Adam by default.

Where it writes: into ``out_dir`` (the caller's ``<out>.partial``), which also
holds ``checkpoint.pt``: every ``checkpoint_minutes``, at the end of each epoch,
and on SIGINT/SIGTERM (the loop finishes the current batch, saves, and raises
:class:`lm.train.TrainingInterrupted`). ``resume=True`` loads it and continues
with the same batch, learning rate, carried state and RNG states, so an
interrupted and resumed run ends with the weights of an uninterrupted one.

Distributed: under ``torchrun`` (WORLD_SIZE > 1; the process group is set up by
:func:`init_distributed`) the model is wrapped in DistributedDataParallel; the
stream is cut into world x B rows and each process reads its own B, so an epoch
takes 1/world of the steps. Validation is split the same way and summed. Rank 0
alone writes files. Stop and checkpoint decisions are agreed on by all
processes every SYNC_EVERY steps (one tiny all-reduce), so no process waits
forever in a collective the others never reach.

Threads: on a CPU, torch gets the cores shared out among the processes
(``--threads`` overrides). On a machine whose cores other jobs also use, fewer
threads can be faster: OpenMP threads that wait for a descheduled partner stall
every parallel op (measured here, 2 cores under load: tests/test_train.py took 74 s
with 2 threads, 8 s with 1).
"""
from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
from torch import nn
from tqdm import tqdm

from lm.checkpoint import (check_finite, load_checkpoint, save_checkpoint, save_model, write_config,
                           write_log)
from lm.corpus import Corpus
from lm.distributed import DistInfo, agree, barrier, dist_info, gather
from lm.errors import LMError
from lm.models import LMConfig, build_model, n_parameters
from lm.neural_data import (batchify, build_vocabulary, check_trainable, encode_split,
                            eval_layout, load_vocabulary, row_block, windows)
from lm.softmax_loss import linear_cross_entropy, token_nll
from lm.train import TrainingInterrupted

#: options that may change between an interrupted run and its resumption
RESUMABLE_CHANGES = ("epochs", "max_steps", "checkpoint_minutes", "device", "threads")
#: steps between reading the loss back (and, distributed, agreeing on stop/checkpoint)
SYNC_EVERY = 10


@dataclass(frozen=True)
class TrainOptions:
    """Training hyperparameters (saved in config.json under "training").

    epochs: passes over the training split; max_steps: stop after this many
    optimizer steps in all (None: no limit); batch_size: rows per process;
    bptt: tokens per window (the transformer's context in training);
    lr: initial learning rate; lr_decay: divisor when validation does not
    improve; optimizer: "sgd" (the paper's) or "adam"; clip: gradient norm cap;
    eval_batch_size: validation rows per process; vocab_size: word models, words
    kept besides <eos>/<unk> (None: the corpus vocabulary); sp_vocab_size:
    sentencepiece pieces; checkpoint_minutes: time between checkpoints (0: only
    at epoch ends); device: "auto" | "cpu" | "cuda"; threads: CPU threads per
    process (None: the cores shared out among processes); seed: initialisation,
    dropout and sentencepiece.
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


def resolve_device(name: str, info: DistInfo) -> torch.device:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise LMError("--device cuda requested but CUDA is not available")
        index = info.local_rank if info.world > 1 else torch.cuda.current_device()
        return torch.device("cuda", index)
    if name != "cpu":
        raise LMError(f"unknown device {name!r} (use auto, cpu or cuda)")
    return torch.device("cpu")


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


class _StopFlag:
    """SIGINT/SIGTERM -> finish the batch, checkpoint, stop; a second signal stops at once."""

    def __init__(self, quiet: bool):
        self.set, self.quiet, self._old = False, quiet, {}

    def _handle(self, signum, frame):
        if self.set:
            raise KeyboardInterrupt
        self.set = True
        if not self.quiet:
            print("\nstopping after this batch and saving a checkpoint "
                  "(press Ctrl-C again to stop at once, without one)", file=sys.stderr)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM):
                self._old[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc):
        for s, h in self._old.items():
            signal.signal(s, h)


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
    ``data`` (see :func:`lm.neural_data.eval_layout`), over all processes."""
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


def train_neural(corpus: Corpus, out_dir: Path, config: LMConfig, options: TrainOptions, *,
                 lang: str = "", resume: bool = False, quiet: bool = False,
                 on_step=None) -> dict:
    """Train ``config``'s model on ``corpus`` into ``out_dir`` and return its metrics.

    ``config.vocab_size`` is replaced by the size of the vocabulary built here.
    Writes vocab.txt (+ spm.model), model.pt (best validation so far),
    checkpoint.pt, train_log.tsv and, at the end, config.json. ``on_step(step)``
    is called after every optimizer step (tests use it to interrupt).
    Returns ``{"valid_ppl", "valid_tokens", "train_tokens", "steps", "epochs",
    "seconds", "tokens_per_s", "parameters", "device", "world_size"}``.
    """
    out_dir = Path(out_dir)
    info = dist_info()
    device = resolve_device(options.device, info)
    old_threads = torch.get_num_threads()
    if device.type == "cpu":
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        local = int(os.environ.get("LOCAL_WORLD_SIZE", info.world))
        torch.set_num_threads(options.threads or max(1, (cores or 1) // local))
    else:
        torch.backends.cuda.matmul.allow_tf32 = True   # TF32 matmuls: the usual GPU trade
        torch.backends.cudnn.allow_tf32 = True
    try:
        with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
            return _train(corpus, out_dir, config, options, lang, resume, quiet, on_step,
                          device, info)
    finally:
        torch.set_num_threads(old_threads)


def _train(corpus, out_dir, config, options, lang, resume, quiet, on_step, device, info):
    rank0 = info.rank == 0
    if resume:
        vocab = load_vocabulary(out_dir, config.tokenizer)
    else:
        if rank0:
            build_vocabulary(corpus, out_dir, tokenizer=config.tokenizer,
                             vocab_size=options.vocab_size,
                             sp_vocab_size=options.sp_vocab_size, seed=options.seed)
        barrier()
        vocab = load_vocabulary(out_dir, config.tokenizer)
    config = replace(config, vocab_size=len(vocab.tokens))
    stateful = config.kind == "lstm"
    bptt = options.bptt
    if not stateful and bptt > config.max_len:
        raise LMError(f"--bptt {bptt} exceeds the transformer's context --max-len {config.max_len}")

    train_ids, valid_ids = encode_split(corpus.train, vocab), encode_split(corpus.valid, vocab)
    rows = options.batch_size * info.world
    check_trainable(train_ids.numel(), valid_ids.numel() // info.world, rows, bptt,
                    (corpus.train, corpus.valid))
    train = row_block(batchify(train_ids, rows), info.rank, info.world).to(device)   # (B, L)
    eval_rows = max(1, min(options.eval_batch_size, valid_ids.numel() // (2 * info.world)))
    valid, scored = (row_block(t, info.rank, info.world).to(device) for t in
                     eval_layout(valid_ids, eval_rows * info.world, vocab.eos_id))  # (E, Lv+1)
    starts = windows(train.shape[1], bptt)

    torch.manual_seed(options.seed)
    model = build_model(config).to(device)
    if info.rank:
        torch.manual_seed(options.seed + 7919 * info.rank)   # other dropout masks per process
    objective = Objective(model)
    if info.world > 1:
        objective = nn.parallel.DistributedDataParallel(
            objective, device_ids=[device.index] if device.type == "cuda" else None)
    params = list(model.parameters())
    if options.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=options.lr, foreach=True)
    elif options.optimizer == "adam":
        opt = torch.optim.Adam(params, lr=options.lr, foreach=True)
    else:
        raise LMError(f"unknown optimizer {options.optimizer!r} (known: sgd, adam)")

    fixed = {k: v for k, v in asdict(options).items() if k not in RESUMABLE_CHANGES}
    s = {"epoch": 0, "batch": 0, "step": 0, "lr": options.lr, "best": None, "log": [],
         "elapsed": 0.0, "loss_sum": 0.0, "loss_steps": 0, "tokens": 0, "train_time": 0.0}
    state = None
    if resume:
        ckpt = load_checkpoint(out_dir, config=config.to_dict(), options=fixed,
                               corpus_sha256=corpus.sha256, world_size=info.world,
                               may_change=("lr",))
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        s.update(ckpt["progress"])
        if ckpt["options"].get("lr") != options.lr:   # after a divergence: resume with a lower --lr
            s["lr"] = options.lr
        saved_state = ckpt["states"][info.rank]
        state = None if saved_state is None else tuple(t.to(device) for t in saved_state)
        torch.set_rng_state(ckpt["rng"][info.rank])
        if device.type == "cuda" and ckpt["cuda_rng"][info.rank] is not None:
            torch.cuda.set_rng_state(ckpt["cuda_rng"][info.rank], device)
        if not quiet and rank0:
            print(f"resuming at epoch {s['epoch'] + 1}, batch {s['batch']}, step {s['step']}",
                  file=sys.stderr)
    for group in opt.param_groups:
        group["lr"] = s["lr"]

    def checkpoint():
        if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
            check_finite(float("nan"), s["step"], out_dir, "weights")   # never save a broken model
        states = gather(None if state is None else tuple(t.cpu() for t in state), info)
        rngs = gather(torch.get_rng_state(), info)
        cuda_rngs = gather(torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
                           info)
        if rank0:
            save_checkpoint({"config": config.to_dict(), "options": fixed,
                             "corpus_sha256": corpus.sha256, "world_size": info.world,
                             "model": model.state_dict(), "optimizer": opt.state_dict(),
                             "progress": dict(s), "states": states, "rng": rngs,
                             "cuda_rng": cuda_rngs}, out_dir)

    def validate_and_log(epoch_label):
        nll, count = evaluate(model, valid, scored, bptt, vocab.unk_id, stateful, device, info)
        loss = nll / max(count, 1)
        check_finite(loss, s["step"], out_dir)
        tps = s["tokens"] / s["train_time"] if s["train_time"] else 0.0
        train_loss = s["loss_sum"] / max(s["loss_steps"], 1)
        s["log"].append([epoch_label, s["step"], round(train_loss, 4),
                         round(math.exp(min(loss, 700)), 3), round(tps, 1), s["lr"]])
        improved = s["best"] is None or loss < s["best"]
        if improved:
            s["best"], s["valid_tokens"] = loss, count
            if rank0:
                save_model(model, config.to_dict(), out_dir)
        if rank0:
            write_log(out_dir, s["log"])
            if not quiet:
                print(f"epoch {epoch_label}: step {s['step']}, train ppl "
                      f"{math.exp(min(train_loss, 700)):.1f}, "
                      f"valid ppl {math.exp(min(loss, 700)):.2f}, "
                      f"lr {s['lr']:g}, {tps:.0f} tokens/s", file=sys.stderr)
        return improved

    max_steps = options.max_steps
    started = time.monotonic() - s["elapsed"]
    last_ckpt = time.monotonic()
    # Losses are summed on the device and read back every few steps only: a
    # float() per step would stall a GPU's queue.
    pending = torch.zeros((), device=device)

    def flush():
        s["loss_sum"] += float(pending)
        pending.zero_()
        check_finite(s["loss_sum"], s["step"], out_dir)

    objective.train()
    with _StopFlag(quiet or not rank0) as stop:
        while s["epoch"] < options.epochs and (max_steps is None or s["step"] < max_steps):
            if s["batch"] == 0:
                state = None
                s.update(loss_sum=0.0, loss_steps=0, tokens=0, train_time=0.0)
            bar = tqdm(total=len(starts), initial=s["batch"], desc=f"epoch {s['epoch'] + 1}",
                       unit="batch", file=sys.stderr, disable=quiet or not rank0, leave=False,
                       dynamic_ncols=True)
            t0 = time.perf_counter()
            for b in range(s["batch"], len(starts)):
                i = starts[b]
                seq = min(bptt, train.shape[1] - 1 - i)
                x, y = train[:, i:i + seq], train[:, i + 1:i + 1 + seq]           # (B, seq)
                loss, state = train_step(objective, opt, params, x, y,
                                         state if stateful else None, options.clip)
                pending += loss
                s["step"], s["batch"] = s["step"] + 1, b + 1
                s["loss_steps"] += 1
                s["tokens"] += x.numel() * info.world
                if on_step is not None:
                    on_step(s["step"])
                bar.update(1)
                last = b + 1 == len(starts) or (max_steps is not None and s["step"] >= max_steps)
                if s["loss_steps"] % SYNC_EVERY == 0 or last:
                    flush()
                    now = time.perf_counter()
                    s["train_time"] += now - t0
                    t0 = now
                    running = s["loss_sum"] / s["loss_steps"]
                    bar.set_postfix(ppl=f"{math.exp(min(running, 700)):.1f}",
                                    tok_s=f"{s['tokens'] / s['train_time']:.0f}", lr=f"{s['lr']:g}")
                # Stop and checkpoint decisions: every step alone; every SYNC_EVERY
                # steps (the same steps on every process) when distributed.
                if info.world == 1 or s["step"] % SYNC_EVERY == 0:
                    due = (options.checkpoint_minutes > 0 and rank0
                           and time.monotonic() - last_ckpt >= 60 * options.checkpoint_minutes)
                    stop_now, due = agree([float(stop.set), float(due)], device, info)
                    if stop_now or due:
                        flush()
                        s["elapsed"] = time.monotonic() - started
                        checkpoint()
                        last_ckpt = time.monotonic()
                    if stop_now:
                        bar.close()
                        raise TrainingInterrupted(
                            f"training interrupted at epoch {s['epoch'] + 1}, step {s['step']}; "
                            f"checkpoint saved in {out_dir}. Continue with the same command "
                            f"and --resume")
                if max_steps is not None and s["step"] >= max_steps:
                    break
            bar.close()
            if s["batch"] < len(starts):
                break                                       # max_steps reached mid-epoch
            if not validate_and_log(s["epoch"] + 1):
                s["lr"] /= options.lr_decay                 # no better than before: anneal
                for group in opt.param_groups:
                    group["lr"] = s["lr"]
            s["epoch"], s["batch"], state = s["epoch"] + 1, 0, None
            s["elapsed"] = time.monotonic() - started
            checkpoint()
            last_ckpt = time.monotonic()
    if s["batch"] > 0 or s["best"] is None:
        validate_and_log(s["epoch"] + 1)                    # the partial last epoch

    seconds = time.monotonic() - started
    n_train = int(train_ids.numel())
    metrics = {"valid_ppl": math.exp(min(s["best"], 700)), "valid_tokens": int(s["valid_tokens"]),
               "train_tokens": n_train, "steps": s["step"],
               "epochs": round(s["epoch"] + s["batch"] / len(starts), 4),
               "seconds": round(seconds, 1),
               "tokens_per_s": round(s["step"] * rows * bptt / seconds, 1) if seconds else 0.0,
               "parameters": n_parameters(model), "device": device.type,
               "world_size": info.world}
    if rank0:
        write_config(out_dir, config, options, corpus, lang, metrics)
    return metrics

