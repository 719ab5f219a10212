"""``train_lm``: corpus (or raw text) in, finished model directory out, for every architecture.

Steps: (1) the inputs become a corpus directory: a prepared one is used as it
is; MediaWiki dumps or tokenised text files are prepared by
:func:`lm.corpus.prepare_corpus` into ``<out>/corpus``; (2) the architecture's
trainer writes the model into ``<out>.partial``; (3) ``finalize(dir, metrics)``
(the CLI writes its manifest there) and the directory is renamed to ``<out>``.
A failure leaves ``<out>`` as it was; ``<out>.partial`` survives only when it
holds a checkpoint to resume from (neural models).

Architectures: ``lstm`` and ``transformer`` (:mod:`lm.neural_train`), ``kn5``
(:func:`lm.kenlm_backend.train_kn5`), ``unigram`` (:func:`lm.unigram.train_unigram`).
Presets (``size``) fill in every option not given; see :data:`PRESETS`.
torch is imported only for the neural architectures.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Callable, Sequence

from formats.vocab import read_vocab
from lm.errors import LMError
from formats.files import claim_output, commit_dir, note

ARCHS = ("lstm", "transformer", "kn5", "unigram")
SIZES = ("small", "paper")

#: Per (arch, size): LMConfig fields and TrainOptions fields. "paper" is the
#: recipe of Gulordava et al. (2 x 650 LSTM, dropout 0.2, SGD lr 20 /4 on
#: plateau, BPTT 35, batch 64, clip 0.25, 50k words = the corpus vocabulary,
#: 40 epochs). "small" trains in minutes on 2 CPU cores on ~0.5-1M tokens: 2 x 200
#: units, tied, the 10k most frequent words (a full softmax: the output layer is
#: what costs, and 10k words keep it at a fifth of the paper's), batch 8 (on 0.4M
#: tokens of Wikipedia, after 0.28M tokens seen: valid ppl 403 at batch 32, 278 at
#: batch 8 tied, 289 untied), 3 epochs.
#: Transformers: pre-norm, GELU, learned positions, Adam, 128-token windows.
PRESETS = {
    ("lstm", "paper"): dict(emb_size=650, hidden_size=650, layers=2, dropout=0.2, tied=False,
                            epochs=40, batch_size=64, bptt=35, lr=20.0, clip=0.25,
                            optimizer="sgd", vocab_size=None),
    ("lstm", "small"): dict(emb_size=200, hidden_size=200, layers=2, dropout=0.2, tied=True,
                            epochs=3, batch_size=8, bptt=35, lr=20.0, clip=0.25,
                            optimizer="sgd", vocab_size=10000),
    ("transformer", "paper"): dict(emb_size=512, hidden_size=512, layers=6, heads=8, dropout=0.1,
                                   tied=True, max_len=128, epochs=20, batch_size=32, bptt=128,
                                   lr=5e-4, clip=1.0, optimizer="adam", vocab_size=None),
    ("transformer", "small"): dict(emb_size=256, hidden_size=256, layers=2, heads=4, dropout=0.1,
                                   tied=True, max_len=128, epochs=3, batch_size=16, bptt=128,
                                   lr=1e-3, clip=1.0, optimizer="adam", vocab_size=10000),
}
#: options of the non-neural architectures
#: (vocab_size caps the corpus vocabulary, as for the neural models, so that a
#: 5-gram and a --size small LSTM can be compared on the same words)
OTHER_OPTIONS = {"kn5": ("order", "vocab_size"), "unigram": ("vocab_size",)}


def flag(name: str) -> str:
    """The command-line spelling of an option (``hidden_size`` -> ``--hidden``)."""
    return {"emb_size": "--emb", "hidden_size": "--hidden"}.get(name, "--" + name.replace("_", "-"))


CAPPED_VOCAB = ".vocab-capped.txt"


class TrainingInterrupted(LMError):
    """Training stopped on SIGINT/SIGTERM after saving a checkpoint (resumable)."""


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
             lang: str | None = None, size: str = "paper", seed: int = 1111,
             max_steps: int | None = None, epochs: int | None = None, resume: bool = False,
             quiet: bool = False, finalize: Callable[[Path, dict], None] | None = None,
             on_step: Callable[[int], None] | None = None, force: bool = False,
             **options) -> TrainResult:
    """Train one language model of ``arch`` on ``inputs`` into ``out_dir``.

    inputs: one prepared corpus directory, or MediaWiki dumps / tokenised text
    files (then ``lang`` is required); size: "small" or "paper" presets;
    options: LMConfig / TrainOptions fields overriding the preset (None = not
    given), or ``order`` for kn5. ``finalize(partial_dir, metrics)`` runs just
    before the rename (the CLI writes manifest.json). ``out_dir`` follows the
    --out policy of :mod:`formats.files` (an existing one is replaced only when it is empty
    or an output of ``agree train-lm``, or with ``force``; ``.OUT.lock`` guards OUT and
    OUT.partial against a second run). Raises :class:`LMError`
    (:class:`TrainingInterrupted` on SIGINT, the checkpoint kept).
    """
    if arch not in ARCHS:
        raise LMError(f"unknown architecture {arch!r} (known: {', '.join(ARCHS)})")
    if size not in SIZES:
        raise LMError(f"unknown size {size!r} (known: {', '.join(SIZES)})")
    given = {k: v for k, v in options.items() if v is not None}
    neural = arch in ("lstm", "transformer")
    if neural:
        config, train_options = neural_settings(arch, size, seed=seed, max_steps=max_steps,
                                                epochs=epochs, options=given)
        from lm.distributed import barrier, init_distributed
        info = init_distributed(train_options.device)
    else:
        bad = sorted(set(given) - set(OTHER_OPTIONS[arch]))
        if bad or max_steps is not None or epochs is not None or resume:
            extra = bad + [n for n, v in (("max_steps", max_steps), ("epochs", epochs),
                                          ("resume", resume)) if v is not None and v is not False]
            raise LMError(f"--arch {arch} does not take {', '.join(flag(b) for b in extra)}")
        info, barrier = None, (lambda: None)
    rank0 = info is None or info.rank == 0

    out = Path(out_dir)
    claim = claim_output(out, "train-lm", inputs, force, quiet) if rank0 else contextlib.nullcontext()
    try:
        with claim:
            metrics = _train_locked(inputs, out, arch, neural, lang, seed, quiet, resume, given,
                                    (config, train_options) if neural else None, finalize, on_step,
                                    force, rank0, barrier)
    finally:
        if neural:
            from lm.distributed import shutdown_distributed
            shutdown_distributed()
    return TrainResult(out, arch, metrics)


def _train_locked(inputs, out: Path, arch, neural, lang, seed, quiet, resume, given, settings,
                  finalize, on_step, force, rank0, barrier) -> dict:
    """train_lm's work, with OUT's lock held (rank 0)."""
    from lm.checkpoint import CHECKPOINT_FILE
    work = partial_dir(out)
    if rank0:
        if resume and not (work / CHECKPOINT_FILE).is_file():
            raise LMError(f"nothing to resume: no checkpoint in {work} "
                          f"(run without --resume to start training)")
        if not resume and (work / CHECKPOINT_FILE).is_file():
            raise LMError(f"{work} holds an interrupted training run: continue it with "
                          f"--resume, or delete {work} to start afresh")
        if not resume and work.exists():
            if not (work / PARTIAL_MARKER).is_file():
                # not made by agree: never delete what we did not write
                raise LMError(f"{work} exists and was not made by `agree train-lm`; "
                              "move it away or choose another --out")
            # we hold OUT's lock, so no live run owns it: a failed or killed run's leftovers
            shutil.rmtree(work)
            note(f"removed {work}, left by an earlier run without a checkpoint to resume", quiet)
        made = not work.exists()
        work.mkdir(parents=True, exist_ok=True)
        try:
            (work / PARTIAL_MARKER).write_text("agree train-lm work directory\n", encoding="utf-8")
        except OSError:
            if made:  # e.g. a full disk: leave nothing of ours behind
                shutil.rmtree(work, ignore_errors=True)
            raise
    try:
        corpus = _corpus(inputs, work, lang, seed, quiet, rank0, barrier)
        lang = lang or corpus.lang
        if neural:
            from lm.neural_train import train_neural
            config, train_options = settings
            metrics = train_neural(corpus, work, config, train_options, lang=lang,
                                   resume=resume, quiet=quiet, on_step=on_step)
        elif arch == "kn5":
            from lm.kenlm_backend import train_kn5
            corpus = _capped_vocab(corpus, work, given.get("vocab_size"))
            metrics = train_kn5(corpus, work, quiet=quiet,
                                **{k: v for k, v in given.items() if k == "order"})
        else:
            from lm.unigram import train_unigram
            metrics = train_unigram(_capped_vocab(corpus, work, given.get("vocab_size")), work)
        (work / CAPPED_VOCAB).unlink(missing_ok=True)
        barrier()
        if rank0:
            if finalize is not None:
                finalize(work, metrics)
            (work / CHECKPOINT_FILE).unlink(missing_ok=True)
            (work / PARTIAL_MARKER).unlink(missing_ok=True)
            commit_dir(work, out.resolve(), "train-lm" if finalize is not None else None, force)
    except TrainingInterrupted:
        raise
    except BaseException:
        if rank0 and (work / PARTIAL_MARKER).is_file() and not (work / CHECKPOINT_FILE).is_file():
            shutil.rmtree(work, ignore_errors=True)
        raise
    return metrics


def neural_settings(arch: str, size: str, *, seed: int, max_steps: int | None = None,
                    epochs: int | None = None, options: dict | None = None):
    """(LMConfig, TrainOptions) of a preset with ``options`` (not None) laid over it.

    An option that is neither an LMConfig nor a TrainOptions field is an error.
    ``vocab_size`` here is the word cap of TrainOptions; LMConfig.vocab_size is
    set from the vocabulary actually built.
    """
    from lm.models import LMConfig
    from lm.neural_train import TrainOptions
    model_keys = {f.name for f in fields(LMConfig)} - {"kind", "vocab_size"}
    train_keys = {f.name for f in fields(TrainOptions)} - {"seed", "max_steps"}
    settings = dict(PRESETS[(arch, size)])
    settings.update({k: v for k, v in (options or {}).items() if v is not None})
    unknown = sorted(set(settings) - model_keys - train_keys)
    if unknown:
        raise LMError(f"--arch {arch} does not take {', '.join(flag(u) for u in unknown)}")
    if epochs is not None:
        settings["epochs"] = epochs
    for name in ("epochs", "batch_size", "bptt", "layers", "hidden_size", "emb_size"):
        if name in settings and settings[name] is not None and settings[name] < 1:
            raise LMError(f"{flag(name)} must be at least 1 (got {settings[name]})")
    if max_steps is not None and max_steps < 1:
        raise LMError(f"--max-steps must be at least 1 (got {max_steps})")
    try:
        config = LMConfig(kind=arch, **{k: v for k, v in settings.items() if k in model_keys})
    except ValueError as e:
        raise LMError(f"invalid model settings: {e}") from None
    train_options = TrainOptions(seed=seed, max_steps=max_steps,
                                 **{k: v for k, v in settings.items() if k in train_keys})
    return config, train_options


def _corpus(inputs, work: Path, lang, seed: int, quiet: bool, rank0: bool, barrier):
    """The corpus to train on: a given corpus directory, or one prepared into work/corpus."""
    from lm.corpus import is_corpus_dir, load_corpus, prepare_corpus
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
            raise LMError("--lang is needed to prepare a corpus from dumps or text files")
        prepare_corpus(inputs, target, lang, seed=seed, quiet=quiet)
    barrier()
    return _with_lang(load_corpus(target), lang)


def _with_lang(corpus, lang: str | None):
    """The corpus, its language filled in from --lang (a corpus made by the library
    has no manifest to say it); a contradiction is an error."""
    if lang and corpus.lang and lang != corpus.lang:
        raise LMError(f"{corpus.directory}: a corpus of language {corpus.lang!r}, "
                      f"but --lang {lang}")
    return replace(corpus, lang=lang) if lang and not corpus.lang else corpus


def _capped_vocab(corpus, work: Path, vocab_size: int | None):
    """``corpus`` with its vocabulary cut to <eos>, <unk> and the ``vocab_size`` most
    frequent words (a file in ``work``; the corpus directory is not touched)."""
    if vocab_size is None:
        return corpus
    if vocab_size < 1:
        raise LMError(f"--vocab-size must be at least 1 (got {vocab_size})")
    words = read_vocab(corpus.vocab)[:vocab_size + 2]
    path = work / CAPPED_VOCAB
    path.write_text("".join(w + "\n" for w in words), encoding="utf-8")
    return replace(corpus, vocab=path)
