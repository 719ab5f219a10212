"""What a training run writes as it goes (:class:`Persistence`, a part of
:class:`lm.neural.train._Training`): snapshots (``snapshots/step-N/``, complete model
directories for learning curves) and checkpoints (``checkpoint.pt``, every process's
state and RNG, for an exact resume)."""
from __future__ import annotations

import math
import time
from dataclasses import asdict

import torch

from lm.neural.checkpoint import check_finite, save_checkpoint
from lm.neural.snapshots import write_snapshot
from lm.neural.steps import evaluate
from lm.training.distributed import gather


class Persistence:
    """Snapshots and checkpoints of a training run; the run supplies the model, the
    optimizer, ``progress`` and the rest of :class:`lm.neural.train._Training`'s fields."""

    def snapshot(self) -> None:
        """snapshots/step-N/ (rank 0): the weights now, with the validation perplexity now.
        Validation draws no random numbers (eval mode), so the training stream is as it
        would be without snapshots; its time is not counted as training time."""
        p, started = self.progress, time.perf_counter()
        nll, count = evaluate(self.model, self.valid, self.scored, self.bptt, self.vocab.unk_id,
                              self.stateful, self.device, self.info)
        check_finite(nll / max(count, 1), p.step, self.out_dir)
        self.snapshots += 1
        metrics = {"valid_ppl": math.exp(min(nll / max(count, 1), 700)), "valid_tokens": int(count),
                   **self.position(), "snapshot": self.snapshots}
        if self.rank0:
            write_snapshot(self.out_dir, self.model, self.config, self.options, self.corpus,
                           self.lang, metrics, self.on_snapshot)
        self.t0 += time.perf_counter() - started

    def checkpoint(self) -> None:
        """checkpoint.pt (rank 0), with every process's state and RNG; never of a broken model."""
        p, info, device = self.progress, self.info, self.device
        p.elapsed = time.monotonic() - self.started
        if not all(bool(torch.isfinite(w).all()) for w in self.model.parameters()):
            check_finite(float("nan"), p.step, self.out_dir, "weights")
        states = gather(None if self.state is None else tuple(t.cpu() for t in self.state), info)
        rngs = gather(torch.get_rng_state(), info)
        cuda_rngs = gather(torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
                           info)
        if self.rank0:
            save_checkpoint({"config": self.config.to_dict(), "options": self.fixed,
                             "corpus_sha256": self.corpus.sha256, "world_size": info.world,
                             "model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                             "progress": asdict(p), "states": states, "rng": rngs,
                             "cuda_rng": cuda_rngs}, self.out_dir)
        self.last_ckpt = time.monotonic()
