"""``train_lm``: corpus (or raw text) in, finished model directory out, for every architecture.

Steps: (1) the inputs become a corpus directory: a prepared one is used as it
is; MediaWiki dumps or tokenised text files are prepared by
:func:`lm.corpus.prepare.prepare_corpus` into ``<out>/corpus``; (2) the architecture's
trainer writes the model into ``<out>.partial``; (3) ``finalize(dir, metrics)``
(the CLI writes its manifest there) and the directory is renamed to ``<out>``.
A failure leaves ``<out>`` as it was; ``<out>.partial`` survives only when it
holds a checkpoint to resume from (neural models).

Architectures, their settings and presets (``size``) come from the training
registry (:mod:`lm.training.trainers`), where each backend registers its trainer; this
module knows none of them by name. Errors about settings name them as fields
(:class:`lm.errors.FieldError`); the CLI spells them as its options.
torch is imported only by the trainers that need it.
"""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

from formats.files import claim_output, commit_dir
from formats.vocab import read_vocab
from lm.corpus.prepare import is_corpus_dir, load_corpus, prepare_corpus
from lm.errors import FieldError, LMError, TrainingInterrupted, literal
from lm.training.interrupt import StopFlag
from lm.training.trainers import CHECKPOINT_FILE, DEFAULT_SIZE, Trainer, TrainRun, get_trainer

log = logging.getLogger(__name__)

CAPPED_VOCAB = ".vocab-capped.txt"


@dataclass(frozen=True)
class TrainResult:
    """out_dir: the finished model directory; kind: its config.json kind;
    metrics: the trainer's figures (``valid_ppl`` excluding <unk>, ``valid_tokens``, ...)."""
    out_dir: Path
    kind: str
    metrics: dict = field(default_factory=dict)


#: written into OUT.partial when agree creates it, so only agree's own work directories are removed
PARTIAL_MARKER = ".agree-partial"


def partial_dir(out_dir: str | os.PathLike) -> Path:
    """Where ``out_dir`` is built (and kept for --resume after an interruption)."""
    out = Path(out_dir)
    return out.with_name(out.name + ".partial")


def train_lm(inputs: Sequence[str | os.PathLike], out_dir: str | os.PathLike, *, arch: str,
             lang: str | None = None, size: str = DEFAULT_SIZE, seed: int = 1111,
             max_steps: int | None = None, epochs: int | None = None, resume: bool = False,
             finalize: Callable[[Path, dict], None] | None = None,
             on_step: Callable[[int], None] | None = None, force: bool = False,
             on_snapshot: Callable[[Path, dict], None] | None = None,
             **options) -> TrainResult:
    """Train one language model of ``arch`` on ``inputs`` into ``out_dir``.

    inputs: one prepared corpus directory, or MediaWiki dumps / tokenised text
    files (then ``lang`` is required); size: a preset of :mod:`lm.training.trainers`;
    max_steps, epochs, options: the architecture's settings overriding the preset
    (None = not given). ``finalize(partial_dir, metrics)`` runs just
    before the rename (the CLI writes manifest.json); ``on_snapshot(directory, metrics)``
    the same for each snapshot (``snapshot_every``/``snapshot_tokens``, checkpointed
    architectures only; :mod:`lm.training.snapshots`). ``out_dir`` follows the
    --out policy of :mod:`formats.files` (an existing one is replaced only when it is empty
    or an output of ``agree train-lm``, or with ``force``; ``.OUT.lock`` guards OUT and
    OUT.partial against a second run). Raises :class:`LMError`
    (:class:`TrainingInterrupted` on SIGINT or SIGTERM, the checkpoint kept: for a
    checkpointed architecture, also when the signal came before its first step).
    """
    trainer = get_trainer(arch)
    snapshots = any(options.get(k) is not None for k in ("snapshot_every", "snapshot_tokens"))
    if snapshots and not trainer.checkpointed:
        raise FieldError(f"{{arch}} {arch} is not trained in steps, so it takes no "
                         f"{{snapshot_every}} (snapshots are for the neural architectures)")
    settings = trainer.settings(size, {**options, "max_steps": max_steps, "epochs": epochs})
    if resume and not trainer.checkpointed:
        raise FieldError(f"{{arch}} {arch} does not take {{resume}}")
    # A checkpointed run saves a checkpoint on Ctrl-C from here on, even before its first
    # step (torch takes seconds to load, a corpus and its vocabulary longer):
    # lm.training.interrupt. Other trainers stop at once.
    flag = StopFlag(announce=os.environ.get("RANK", "0") == "0") if trainer.checkpointed \
        else contextlib.nullcontext()
    with flag as stop:
        run = TrainRun(arch=arch, seed=seed, lang=lang or "", resume=resume,
                       on_step=on_step, on_snapshot=on_snapshot, stop=stop)
        return _train(inputs, out_dir, trainer, settings, run, finalize, force)


def _train(inputs, out_dir, trainer: Trainer, settings: dict, run: TrainRun, finalize,
           force: bool) -> TrainResult:
    """train_lm once its settings are known: checked, then trained under OUT's lock."""
    arch, seed = run.arch, run.seed
    if trainer.check is not None:
        trainer.function("check")(arch, settings, seed)   # refused before anything is written
    if trainer.checkpointed:
        from lm.training.distributed import barrier, init_distributed  # lazy: heavy (torch)
        info = init_distributed(settings.get("device", "auto"))
    else:
        info, barrier = None, (lambda: None)
    rank0 = info is None or info.rank == 0
    out = Path(out_dir)
    claim = claim_output(out, "train-lm", inputs, force) if rank0 else contextlib.nullcontext()
    try:
        with claim:
            metrics = _train_locked(_Job(inputs, out, trainer, settings, run, finalize, force,
                                         rank0, barrier))
    finally:
        if trainer.checkpointed:
            from lm.training.distributed import shutdown_distributed  # lazy: heavy (torch)
            shutdown_distributed()
    return TrainResult(out, arch, metrics)


@dataclass(frozen=True)
class _Job:
    """One train_lm call, as its steps need it."""
    inputs: Sequence
    out: Path
    trainer: Trainer
    settings: dict
    run: TrainRun
    finalize: Callable[[Path, dict], None] | None
    force: bool
    rank0: bool
    barrier: Callable[[], None]


def _train_locked(job: _Job) -> dict:
    """train_lm's work, with OUT's lock held (rank 0)."""
    work = partial_dir(job.out)
    before = _listing(work) if job.rank0 and job.run.resume else None
    if job.rank0:
        _prepare_work_dir(work, job.run.resume)
    try:
        corpus = _corpus(job.inputs, work, job.run.lang, job.run.seed, job.rank0, job.barrier)
        run = replace(job.run, lang=job.run.lang or corpus.lang)
        if job.trainer.capped_vocab:
            corpus = _capped_vocab(corpus, work, job.settings.get("vocab_size"))
        metrics = job.trainer.function("train")(corpus, work, job.settings, run)
        (work / CAPPED_VOCAB).unlink(missing_ok=True)
        job.barrier()
        if job.rank0:
            if job.finalize is not None:
                job.finalize(work, metrics)
            (work / CHECKPOINT_FILE).unlink(missing_ok=True)
            (work / PARTIAL_MARKER).unlink(missing_ok=True)
            commit_dir(work, job.out.resolve(), "train-lm" if job.finalize is not None else None,
                       job.force)
    except TrainingInterrupted:
        raise
    except BaseException:
        if before is not None:
            _undo_failed_resume(work, before)
        elif job.rank0 and (work / PARTIAL_MARKER).is_file() \
                and not (work / CHECKPOINT_FILE).is_file():
            shutil.rmtree(work, ignore_errors=True)
        raise
    return metrics


def _listing(work: Path) -> tuple[frozenset, tuple | None]:
    """OUT.partial as a resume finds it: its entries and its checkpoint's identity."""
    try:
        names = frozenset(os.listdir(work))
        st = (work / CHECKPOINT_FILE).stat()
    except OSError:
        return frozenset(), None
    return names, (st.st_ino, st.st_size, st.st_mtime_ns)


def _undo_failed_resume(work: Path, before: tuple[frozenset, tuple | None]) -> None:
    """A resume that failed before saving a new checkpoint (an unreadable, empty or
    foreign one) leaves OUT.partial as it was: what it added (the marker, a prepared
    corpus) is removed. After a new checkpoint, the progress it holds is kept."""
    names, checkpoint = before
    now, current = _listing(work)
    if checkpoint is None or current != checkpoint:
        return
    for name in now - names:
        path = work / name
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)


def _prepare_work_dir(work: Path, resume: bool) -> None:
    """OUT.partial, ready: kept for a resume, an earlier failed run's leftovers removed."""
    if resume and not (work / CHECKPOINT_FILE).is_file():
        raise FieldError(f"nothing to resume: no checkpoint in {literal(work)} "
                         f"(run without {{resume}} to start training)")
    if not resume and (work / CHECKPOINT_FILE).is_file():
        raise FieldError(f"{literal(work)} holds an interrupted training run: continue it "
                         f"with {{resume}}, or delete {literal(work)} to start afresh")
    if not resume and work.exists():
        if not (work / PARTIAL_MARKER).is_file():
            # not made by agree: never delete what we did not write
            raise LMError(f"{work} exists and was not made by `agree train-lm`; "
                          "move it away or choose another output directory")
        # we hold OUT's lock, so no live run owns it: a failed or killed run's leftovers
        shutil.rmtree(work)
        log.info(f"removed {work}, left by an earlier run without a checkpoint to resume")
    made = not work.exists()
    work.mkdir(parents=True, exist_ok=True)
    try:
        (work / PARTIAL_MARKER).write_text("agree train-lm work directory\n", encoding="utf-8")
    except OSError:
        if made:  # e.g. a full disk: leave nothing of ours behind
            shutil.rmtree(work, ignore_errors=True)
        raise


def _corpus(inputs, work: Path, lang, seed: int, rank0: bool, barrier):
    """The corpus to train on: a given corpus directory, or one prepared into work/corpus."""
    inputs = [Path(p) for p in inputs]
    if not inputs:
        raise LMError("no input given (a corpus directory, dumps or text files)")
    if len(inputs) == 1 and is_corpus_dir(inputs[0]):
        return _with_lang(load_corpus(inputs[0]), lang)
    for p in inputs:
        if p.is_dir():
            raise LMError(f"{p}: a directory but not a corpus directory (train.txt, valid.txt, "
                          f"test.txt, vocab.txt); make one with `agree corpus`")
    target = work / "corpus"
    if rank0 and not is_corpus_dir(target):
        if not lang:
            raise FieldError("{lang} is needed to prepare a corpus from dumps or text files")
        prepare_corpus(inputs, target, lang, seed=seed)
    barrier()
    return _with_lang(load_corpus(target), lang)


def _with_lang(corpus, lang: str | None):
    """The corpus, its language filled in from --lang (a corpus made by the library
    has no manifest to say it); a contradiction is an error."""
    if lang and corpus.lang and lang != corpus.lang:
        raise FieldError(f"{literal(corpus.directory)}: a corpus of language "
                         f"{literal(repr(corpus.lang))}, but {{lang}} {literal(lang)}")
    return replace(corpus, lang=lang) if lang and not corpus.lang else corpus


def _capped_vocab(corpus, work: Path, vocab_size: int | None):
    """``corpus`` with its vocabulary cut to <eos>, <unk> and the ``vocab_size`` most
    frequent words (a file in ``work``; the corpus directory is not touched)."""
    if vocab_size is None:
        return corpus
    if vocab_size < 1:
        raise FieldError(f"{{vocab_size}} must be at least 1 (got {vocab_size})")
    words = read_vocab(corpus.vocab)[:vocab_size + 2]
    path = work / CAPPED_VOCAB
    path.write_text("".join(w + "\n" for w in words), encoding="utf-8")
    return replace(corpus, vocab=path)
