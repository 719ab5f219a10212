"""The files of a neural model directory, and the training checkpoint that resumes it.

``model.pt``: ``{"state_dict": ..., "config": LMConfig.to_dict()}``, tensors on
the CPU, loadable with ``torch.load(..., weights_only=True)``.

``checkpoint.pt`` (in the ``<out>.partial`` directory only; removed when the
model directory is complete): everything :mod:`lm.neural.train` needs to go on
exactly where it stopped: weights, optimizer, learning rate, epoch, batch within
the epoch, global step, the carried LSTM state and the RNG state of every
process, the best validation loss so far, the training log, plus the model
configuration, the training options and the corpus checksum, which a resume
must match (so that a checkpoint of another run is refused, not silently
continued). Plain containers and tensors only, so ``weights_only=True`` loads it.
"""
from __future__ import annotations

import io
import json
import math
import os
import pickle
import zipfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import torch

from lm.errors import FieldError, LMError, literal
from lm.training.trainers import CHECKPOINT_FILE  # noqa: F401  (one name, handed on)
from formats.digests import sha256_of
from formats.files import named
from formats.vocab import VOCAB_CHECKSUM

MODEL_FILE = "model.pt"
LOG_FILE = "train_log.tsv"
LOG_HEADER = "epoch\tstep\ttrain_loss\tvalid_ppl\ttokens_per_s\tlr\n"
FORMAT = "agree-train-lm-checkpoint/1"


@dataclass
class Progress:
    """Where a training run is: the checkpoint's "progress" entry, saved as ``asdict``
    (the field names are the stored keys: keep them, or old checkpoints stop resuming).

    epoch: epochs completed; batch: batches done of the current epoch; step: optimizer
    steps in all; lr: the learning rate now; best: the best validation loss so far
    (nats per scored token; None before the first validation); valid_tokens: the
    targets that validation scored; log: the train_log.tsv rows; elapsed: seconds of
    training up to the last checkpoint; loss_sum, loss_steps, tokens, train_time: the
    current epoch's summed training loss, its steps, the tokens read and the seconds
    spent on them (all processes).
    """
    epoch: int = 0
    batch: int = 0
    step: int = 0
    lr: float = 0.0
    best: float | None = None
    valid_tokens: int | None = None
    log: list = field(default_factory=list)
    elapsed: float = 0.0
    loss_sum: float = 0.0
    loss_steps: int = 0
    tokens: int = 0
    train_time: float = 0.0

    @classmethod
    def from_dict(cls, entry, path: Path) -> "Progress":
        """The progress of a loaded checkpoint; an entry this version does not know is an
        error, never dropped (valid_tokens may be missing: it is set at the first validation)."""
        names = {f.name for f in fields(cls)}
        if not isinstance(entry, dict):
            raise LMError(f"{path}: the checkpoint has no progress entry")
        unknown = sorted(set(entry) - names)
        missing = sorted(names - set(entry) - {"valid_tokens"})
        if unknown or missing:
            raise LMError(f"{path}: the checkpoint's progress entry does not match this version "
                          f"of agree (unknown: {', '.join(unknown) or 'none'}; missing: "
                          f"{', '.join(missing) or 'none'})")
        return cls(**entry)


def _cpu(obj):
    """Tensors (nested in tuples/lists/dicts) moved to the CPU, detached."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cpu(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _cpu(v) for k, v in obj.items()}
    return obj


def _save(obj, path: Path) -> None:
    """torch.save through a temporary file and a rename: never a half-written file.

    Serialised in memory first and written with a plain file write, so that a full
    disk or a missing permission is an OSError naming the file (torch's own writer
    reports it as an opaque RuntimeError)."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(buffer.getbuffer())
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise named(e, path) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_finite(loss: float, step: int, directory: Path, what: str = "loss") -> None:
    """Stop a diverged run (NaN or infinite loss or weights) before it saves a broken model."""
    if math.isfinite(loss):
        return
    if (Path(directory) / CHECKPOINT_FILE).is_file():
        hint = (f"the last good checkpoint in {literal(directory)} can be resumed with a "
                f"lower {{lr}}")
    else:
        hint = "no checkpoint was saved before it; start again with a lower {lr}"
    raise FieldError(f"training diverged at step {step} ({what} {loss}); {hint}")


def save_model(model: torch.nn.Module, config_dict: dict, directory: Path) -> None:
    save_weights(model.state_dict(), config_dict, directory)


def save_weights(state_dict: dict, config_dict: dict, directory: Path) -> None:
    """``model.pt`` (``{"state_dict", "config"}``), written whole or not at all; a full
    disk is an OSError naming the file, never torch's opaque RuntimeError."""
    _save({"state_dict": _cpu(state_dict), "config": dict(config_dict)}, Path(directory) / MODEL_FILE)


def save_checkpoint(state: dict, directory: Path) -> None:
    _save(_cpu({"format": FORMAT, **state}), Path(directory) / CHECKPOINT_FILE)


def load_checkpoint(directory: Path, *, config: dict, options: dict, corpus_sha256: str,
                    world_size: int, may_change: tuple = ()) -> dict:
    """The checkpoint in ``directory``, checked against what this run would train.

    Raises LMError when there is none, when it is unreadable or not ours, or when
    it was written for another model, other options, another corpus or another
    number of processes. Options in ``may_change`` (lr, after a divergence) may differ.
    Its "progress" entry is returned as a :class:`Progress`.
    """
    path = Path(directory) / CHECKPOINT_FILE
    if not path.is_file():
        raise FieldError(f"nothing to resume: {literal(path)} does not exist "
                         f"(run without {{resume}} to start training)")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, OSError, ValueError, pickle.UnpicklingError,
            zipfile.BadZipFile) as e:
        raise LMError(f"{path}: unreadable checkpoint ({load_failure(e)})") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise LMError(f"{path}: not a checkpoint of `agree train-lm` (format "
                      f"{ckpt.get('format') if isinstance(ckpt, dict) else type(ckpt).__name__!r}, "
                      f"expected {FORMAT!r})")
    wrong = _differences("model", ckpt.get("config", {}), config) \
        + _differences("option", {k: v for k, v in ckpt.get("options", {}).items() if k not in may_change},
                       {k: v for k, v in options.items() if k not in may_change})
    if ckpt.get("corpus_sha256") != corpus_sha256:
        wrong.append("the corpus (sha256 differs)")
    if ckpt.get("world_size") != world_size:
        wrong.append(f"the number of processes ({ckpt.get('world_size')} then, {world_size} now)")
    if wrong:
        raise FieldError(f"{literal(path)}: the checkpoint belongs to another training run; it "
                         f"differs in {literal('; '.join(wrong))}. Resume with the original "
                         "settings and {resume}, or start afresh without {resume}")
    return {**ckpt, "progress": Progress.from_dict(ckpt.get("progress"), path)}


def load_failure(e: BaseException) -> str:
    """Why torch.load failed, in one line (never torch's advice to unpickle the file anyway)."""
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    if first.startswith("Weights only load failed"):
        return "not a file torch.save wrote, or damaged"
    return first


def _differences(what: str, saved: dict, now: dict) -> list[str]:
    return [f"{what} {k} ({saved.get(k)!r} then, {now.get(k)!r} now)"
            for k in sorted(set(saved) | set(now)) if saved.get(k) != now.get(k)]


def write_log(out_dir: Path, rows: list) -> None:
    """``train_log.tsv``: one row per validation (epoch end, and a partial last epoch)."""
    text = LOG_HEADER + "".join("\t".join(str(v) for v in r) + "\n" for r in rows)
    tmp = out_dir / f".{LOG_FILE}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out_dir / LOG_FILE)


def write_config(out_dir: Path, config, options, corpus, lang: str, metrics: dict) -> None:
    """``config.json``: kind and every field of ``config`` (an LMConfig) at the top
    level (what :func:`lm.load.load_model` and the scorer read), ``options`` (the
    TrainOptions) under "training", seed, the corpus checksum, language, and the
    metrics that do not depend on timing (so that the same seed gives the same file)."""
    training = {k: v for k, v in asdict(options).items() if k not in ("device", "threads")
                # no snapshot settings: left out, so that such a config.json is as it always was
                and not (k.startswith("snapshot_") and v is None)}
    data = {**config.to_dict(), "training": training, "seed": options.seed,
            "corpus_sha256": corpus.sha256, "lang": lang or corpus.lang,
            VOCAB_CHECKSUM: sha256_of(out_dir / "vocab.txt"),
            "metrics": {k: v for k, v in metrics.items() if k not in ("seconds", "tokens_per_s")}}
    tmp = out_dir / ".config.json.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out_dir / "config.json")

