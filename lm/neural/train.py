"""Training the neural LMs (LSTM, transformer): the paper's recipe, resumable, distributed.

The loop (PyTorch's word_language_model recipe, which Gulordava et al. used):
the training stream is cut into B rows (:mod:`lm.neural.data`) read in BPTT
windows; the LSTM state is carried from window to window (detached, so
gradients stop at the window edge) and reset at each epoch; SGD with gradient
norm clipping; after each epoch the validation perplexity (``<unk>`` targets
excluded) decides: better than before -> ``model.pt`` is rewritten, otherwise
the learning rate is divided by ``lr_decay`` (4). The transformer reads the same
windows without a state, with Adam by default.

Where it writes: into ``out_dir`` (the caller's ``<out>.partial``), which also
holds ``checkpoint.pt``: every ``checkpoint_minutes``, at the end of each epoch,
and on SIGINT/SIGTERM (the loop finishes the current batch, saves, and raises
:class:`lm.errors.TrainingInterrupted`; a signal during the set-up saves step 0 once
the model is built: :mod:`lm.training.interrupt`). ``resume=True`` loads it and continues
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

import contextlib
import logging
import math
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from formats.resources import human_count
from treebanks.progress import progress
from lm.neural.budget import check_training_memory, device_memory
from lm.neural.checkpoint import Progress, check_finite, load_checkpoint, save_model, write_config, write_log
from lm.corpus.prepare import Corpus
from lm.device import resolve_device
from lm.training.distributed import DistInfo, agree, barrier, dist_info
from lm.errors import FieldError, LMError, TrainingInterrupted, literal
from lm.neural.models import LMConfig, build_model, n_parameters
from lm.neural.data import build_vocabulary, load_vocabulary, training_data
from lm.neural.presets import TrainOptions, neural_configs
from lm.training.trainers import TrainRun
from lm.neural.snapshots import restore_series
from lm.neural.persist import Persistence
from lm.neural.steps import Objective, evaluate, train_step
from lm.training.interrupt import StopFlag
from lm.training.snapshots import Schedule

log = logging.getLogger(__name__)

#: options that may change between an interrupted run and its resumption
RESUMABLE_CHANGES = ("epochs", "max_steps", "checkpoint_minutes", "device", "threads")
#: steps between reading the loss back (and, distributed, agreeing on stop/checkpoint)
SYNC_EVERY = 10


def train_model(corpus: Corpus, out_dir: Path, settings: dict, run: TrainRun) -> dict:
    """The registered trainer of ``lstm`` and ``transformer`` (see :mod:`lm.training.trainers`)."""
    config, options = neural_configs(run.arch, settings, run.seed)
    return train_neural(corpus, out_dir, config, options, lang=run.lang, resume=run.resume,
                        on_step=run.on_step, on_snapshot=run.on_snapshot, stop=run.stop)


def train_neural(corpus: Corpus, out_dir: Path, config: LMConfig, options: TrainOptions, *,
                 lang: str = "", resume: bool = False, on_step=None, on_snapshot=None,
                 stop: StopFlag | None = None) -> dict:
    """Train ``config``'s model on ``corpus`` into ``out_dir`` and return its metrics.

    ``config.vocab_size`` is replaced by the size of the vocabulary built here.
    Writes vocab.txt (+ spm.model), model.pt (best validation so far),
    checkpoint.pt, train_log.tsv, snapshots/ (with ``options.snapshot_every`` or
    ``snapshot_tokens``; ``on_snapshot(directory, metrics)`` adds to each before its
    rename) and, at the end, config.json. ``on_step(step)`` is called after every
    optimizer step (tests use it to interrupt). ``stop``: the SIGINT/SIGTERM flag the
    caller holds (:func:`lm.training.train.train_lm` raises it before torch is loaded);
    None: one is raised here, before the set-up. A signal during the set-up saves a
    checkpoint of step 0 once the model is built (resumable like any other).
    Returns ``{"valid_ppl", "valid_tokens", "train_tokens", "steps", "tokens_seen",
    "epochs", "seconds", "tokens_per_s", "parameters", "device", "world_size"}`` (and
    ``"snapshots"``, how many were made, when they were asked for).
    """
    out_dir = Path(out_dir)
    info = dist_info()
    device = resolve_device(options.device, local_rank=info.local_rank if info.world > 1 else None)
    old_threads = torch.get_num_threads()
    if device.type == "cpu":
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        local = int(os.environ.get("LOCAL_WORLD_SIZE", info.world))
        torch.set_num_threads(options.threads or max(1, (cores or 1) // local))
    else:
        torch.backends.cuda.matmul.allow_tf32 = True   # TF32 matmuls: the usual GPU trade
        torch.backends.cudnn.allow_tf32 = True
    flag = stop if stop is not None else StopFlag(announce=info.rank == 0)
    try:
        with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []), \
                (contextlib.nullcontext() if stop is not None else flag):
            training = _Training.set_up(corpus, out_dir, config, options, resume, device, info,
                                        on_step=on_step, on_snapshot=on_snapshot)
            return training.run(lang, flag)
    finally:
        torch.set_num_threads(old_threads)


@dataclass(eq=False)
class _Training(Persistence):
    """One training run: set up once (:meth:`set_up`), then epochs (:meth:`epoch`),
    each ending in a validation (:meth:`validate`) and a checkpoint (:meth:`checkpoint`).
    ``progress`` is all that changes from step to step besides the weights, the
    optimizer, the carried LSTM ``state`` and the RNG: what a checkpoint saves."""

    corpus: Corpus
    out_dir: Path
    config: LMConfig
    options: TrainOptions
    device: torch.device
    info: DistInfo
    vocab: object                    # lm.neural.data.Vocabulary
    model: nn.Module
    objective: nn.Module             # the model's loss, wrapped for DDP when distributed
    opt: torch.optim.Optimizer
    train: torch.Tensor              # (B, L) training rows of this process
    valid: torch.Tensor              # (E, Lv+1) validation rows of this process
    scored: torch.Tensor             # (E, Lv) which validation targets it scores
    starts: list                     # window starts in the training rows
    n_train: int                     # training tokens (all processes)
    on_step: Callable[[int], None] | None = None
    on_snapshot: Callable[[Path, dict], None] | None = None

    def __post_init__(self):
        self.params = list(self.model.parameters())
        self.rank0 = self.info.rank == 0
        self.stateful = self.config.kind == "lstm"
        self.bptt, self.max_steps = self.options.bptt, self.options.max_steps
        self.fixed = {k: v for k, v in asdict(self.options).items() if k not in RESUMABLE_CHANGES}
        self.progress = Progress(lr=self.options.lr)
        self.state = None                # the LSTM state carried from window to window
        self.started = self.last_ckpt = time.monotonic()
        self.t0 = time.perf_counter()    # start of the stretch whose time is not yet counted
        # Losses are summed on the device and read back every few steps only: a
        # float() per step would stall a GPU's queue.
        self.pending = torch.zeros((), device=self.device)
        self.schedule = Schedule.of(self.options.snapshot_every, self.options.snapshot_tokens)
        self.snapshots, self.lang = 0, ""    # snapshots made so far; the corpus language
        # training tokens of one epoch (all processes): what tokens_seen counts
        rows, width = self.train.shape[0] * self.info.world, self.train.shape[1]
        self.epoch_tokens = sum(rows * min(self.bptt, width - 1 - i) for i in self.starts)

    @classmethod
    def set_up(cls, corpus, out_dir: Path, config: LMConfig, options: TrainOptions, resume: bool,
               device: torch.device, info: DistInfo, **hooks) -> "_Training":
        """Vocabulary, data, model and optimizer (and, with ``resume``, the checkpoint)."""
        if not resume and info.rank == 0:
            build_vocabulary(corpus, out_dir, tokenizer=config.tokenizer,
                             vocab_size=options.vocab_size,
                             sp_vocab_size=options.sp_vocab_size, seed=options.seed)
        if not resume:
            barrier()
        vocab = load_vocabulary(out_dir, config.tokenizer)
        config = replace(config, vocab_size=len(vocab.tokens))
        check_training_memory(config, options, len(vocab.tokens), *device_memory(device))
        if config.kind != "lstm" and options.bptt > config.max_len:
            raise FieldError(f"{{bptt}} {options.bptt} exceeds the transformer's context "
                             f"{{max_len}} {config.max_len}")
        data = training_data(corpus, vocab, options, device, info)
        torch.manual_seed(options.seed)
        model = build_model(config).to(device)
        if info.rank:
            torch.manual_seed(options.seed + 7919 * info.rank)   # other dropout masks per process
        objective = Objective(model)
        if info.world > 1:
            objective = nn.parallel.DistributedDataParallel(
                objective, device_ids=[device.index] if device.type == "cuda" else None)
        optimizers = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
        if options.optimizer not in optimizers:
            raise LMError(f"unknown optimizer {options.optimizer!r} (known: sgd, adam)")
        opt = optimizers[options.optimizer](list(model.parameters()), lr=options.lr, foreach=True)
        training = cls(corpus, out_dir, config, options, device, info, vocab, model, objective,
                       opt, **data, **hooks)
        if resume:
            training.resume()
        training.set_lr(training.progress.lr)
        return training

    def resume(self) -> None:
        """Weights, optimizer, progress, carried state and RNG from the checkpoint."""
        ckpt = load_checkpoint(self.out_dir, config=self.config.to_dict(), options=self.fixed,
                               corpus_sha256=self.corpus.sha256, world_size=self.info.world,
                               may_change=("lr",))
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["optimizer"])
        self.progress = ckpt["progress"]
        if ckpt["options"].get("lr") != self.options.lr:   # after a divergence: a lower lr
            self.progress.lr = self.options.lr
        rank = self.info.rank
        saved = ckpt["states"][rank]
        self.state = None if saved is None else tuple(t.to(self.device) for t in saved)
        torch.set_rng_state(ckpt["rng"][rank])
        if self.device.type == "cuda" and ckpt["cuda_rng"][rank] is not None:
            torch.cuda.set_rng_state(ckpt["cuda_rng"][rank], self.device)
        p = self.progress
        if self.schedule is not None:
            self.snapshots = restore_series(self.out_dir, p.step, self.rank0)
        if self.rank0:
            log.info(f"resuming at epoch {p.epoch + 1}, batch {p.batch}, step {p.step}")

    def set_lr(self, lr: float) -> None:
        self.progress.lr = lr
        for group in self.opt.param_groups:
            group["lr"] = lr

    def run(self, lang: str, stop: StopFlag) -> dict:
        """Epochs until ``epochs`` or ``max_steps``; then the metrics (and config.json).
        A signal that came during the set-up stops it before its first step, with a
        checkpoint of where it starts."""
        p, options = self.progress, self.options
        self.lang = lang
        self.started = time.monotonic() - p.elapsed
        self.objective.train()
        self.stop_or_checkpoint(stop, scheduled=False)
        stop.training = True
        self.announce()
        while p.epoch < options.epochs and (self.max_steps is None or p.step < self.max_steps):
            if not self.epoch(stop):
                break                                   # max_steps reached mid-epoch
            if not self.validate(p.epoch + 1):
                self.set_lr(p.lr / options.lr_decay)    # no better than before: anneal
            p.epoch, p.batch, self.state = p.epoch + 1, 0, None
            self.checkpoint()
        if p.batch > 0 or p.best is None:
            self.validate(p.epoch + 1)                      # the partial last epoch
        metrics = self.metrics()
        if self.rank0:
            write_config(self.out_dir, self.config, options, self.corpus, lang, metrics)
        return metrics

    def announce(self) -> None:
        """How much training lies ahead, said before it starts (the progress bars show
        one epoch at a time): the steps planned and their tokens."""
        if not self.rank0:
            return
        n, o = len(self.starts), self.options
        planned = o.epochs * n if self.max_steps is None else min(o.epochs * n, self.max_steps)
        log.info(f"training {human_count(n_parameters(self.model))} parameters: {human_count(planned)} steps "
                 f"({human_count(o.epochs)} epochs of {n:,} batches"
                 + (f", at most {human_count(self.max_steps)} steps" if self.max_steps is not None else "")
                 + f"), {human_count(planned * o.batch_size * self.info.world * self.bptt)} tokens")

    def epoch(self, stop: StopFlag) -> bool:
        """The batches left of the current epoch; False when max_steps ends it early."""
        p = self.progress
        if p.batch == 0:
            self.state = None
            p.loss_sum, p.loss_steps, p.tokens, p.train_time = 0.0, 0, 0, 0.0
        n = len(self.starts)
        bar = progress(log, total=n, initial=p.batch, desc=f"epoch {p.epoch + 1}", unit="batch", leave=False,
                       show=self.rank0)
        self.t0 = time.perf_counter()
        try:
            for b in range(p.batch, n):
                before = self.tokens_seen()
                self.step(b)
                if self.schedule is not None and self.schedule.due(p.step, before,
                                                                   self.tokens_seen()):
                    self.snapshot()
                bar.update(1)
                last = b + 1 == n or (self.max_steps is not None and p.step >= self.max_steps)
                if p.loss_steps % SYNC_EVERY == 0 or last:
                    self.report(bar)
                self.stop_or_checkpoint(stop)
                if self.max_steps is not None and p.step >= self.max_steps:
                    break
        finally:
            bar.close()
        return p.batch == n

    def step(self, b: int) -> None:
        """Optimizer step on window ``b`` of the training rows."""
        p, train = self.progress, self.train
        i = self.starts[b]
        seq = min(self.bptt, train.shape[1] - 1 - i)
        x, y = train[:, i:i + seq], train[:, i + 1:i + 1 + seq]            # (B, seq)
        loss, self.state = train_step(self.objective, self.opt, self.params, x, y,
                                      self.state if self.stateful else None, self.options.clip)
        self.pending += loss
        p.step, p.batch = p.step + 1, b + 1
        p.loss_steps += 1
        p.tokens += x.numel() * self.info.world
        if self.on_step is not None:
            self.on_step(p.step)

    def report(self, bar) -> None:
        """Read the summed loss back; the bar's running perplexity and throughput."""
        p = self.progress
        self.flush()
        now = time.perf_counter()
        p.train_time += now - self.t0
        self.t0 = now
        running = p.loss_sum / p.loss_steps
        bar.set_postfix(ppl=f"{math.exp(min(running, 700)):.1f}",
                        tok_s=f"{p.tokens / p.train_time:.0f}", lr=f"{p.lr:g}")

    def flush(self) -> None:
        self.progress.loss_sum += float(self.pending)
        self.pending.zero_()
        check_finite(self.progress.loss_sum, self.progress.step, self.out_dir)

    def stop_or_checkpoint(self, stop: StopFlag, scheduled: bool = True) -> None:
        """Stop and checkpoint decisions: every step alone; every SYNC_EVERY steps (the
        same steps on every process) when distributed. ``scheduled`` False: only a
        signal's (before the first step of this process)."""
        p, options = self.progress, self.options
        if self.info.world > 1 and p.step % SYNC_EVERY:
            return
        due = (scheduled and options.checkpoint_minutes > 0 and self.rank0
               and time.monotonic() - self.last_ckpt >= 60 * options.checkpoint_minutes)
        stop_now, due = agree([float(stop.set), float(due)], self.device, self.info)
        if stop_now or due:
            self.flush()
            self.checkpoint()
        if stop_now:
            where = f"at epoch {p.epoch + 1}, step {p.step}" if p.step else "before its first step"
            raise TrainingInterrupted(
                f"training interrupted {where}; checkpoint saved in {literal(self.out_dir)}. "
                f"Continue with the same command and {{resume}}", signum=stop.signum)

    def validate(self, epoch_label) -> bool:
        """Validation loss, a train_log.tsv row, model.pt when better; True when better."""
        p = self.progress
        nll, count = evaluate(self.model, self.valid, self.scored, self.bptt, self.vocab.unk_id,
                              self.stateful, self.device, self.info)
        if not count:   # every target <unk>: a perplexity over nothing, never written as 1 or NaN
            raise LMError(f"{self.corpus.valid}: no known tokens to compute a perplexity on")
        loss = nll / count
        check_finite(loss, p.step, self.out_dir)
        tps = p.tokens / p.train_time if p.train_time else 0.0
        train_loss = p.loss_sum / max(p.loss_steps, 1)
        p.log.append([epoch_label, p.step, round(train_loss, 4),
                      round(math.exp(min(loss, 700)), 3), round(tps, 1), p.lr])
        improved = p.best is None or loss < p.best
        if improved:
            p.best, p.valid_tokens = loss, count
            if self.rank0:
                save_model(self.model, self.config.to_dict(), self.out_dir)
        if self.rank0:
            write_log(self.out_dir, p.log)
            log.info(f"epoch {epoch_label}: step {p.step}, train ppl {math.exp(min(train_loss, 700)):.1f}, "
                     f"valid ppl {math.exp(min(loss, 700)):.2f}, lr {p.lr:g}, {tps:.0f} tokens/s")
        return improved

    def tokens_seen(self) -> int:
        """Training tokens read so far, all processes (epochs done, then this epoch's)."""
        p = self.progress
        return p.epoch * self.epoch_tokens + (p.tokens if p.batch > 0 else 0)

    def metrics(self) -> dict:
        p = self.progress
        seconds = time.monotonic() - self.started
        rows = self.options.batch_size * self.info.world
        return {"valid_ppl": math.exp(min(p.best, 700)), "valid_tokens": int(p.valid_tokens),
                **self.position(), "seconds": round(seconds, 1),
                "tokens_per_s": round(p.step * rows * self.bptt / seconds, 1) if seconds else 0.0,
                **({"snapshots": self.snapshots} if self.schedule is not None else {})}

    def position(self) -> dict:
        """Where the run stands, without timings (the final metrics and every snapshot's)."""
        p = self.progress
        return {"train_tokens": self.n_train, "steps": p.step, "tokens_seen": self.tokens_seen(),
                "epochs": round(p.epoch + p.batch / len(self.starts), 4),
                "parameters": n_parameters(self.model), "device": self.device.type,
                "world_size": self.info.world}
