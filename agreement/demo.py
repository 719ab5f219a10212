"""``agree demo``: the whole study on a generated language, in minutes, with a report.

:func:`run_demo` generates a treebank and a training corpus (:mod:`agreement.synthlang`)
and then runs the same commands a user would type, in this process and in this
order (each writes its own directory and manifest, exactly as on the command line):

    agree corpus    synth/corpus.txt            -> corpus/
    agree extract   synth/treebank.conllu       -> extract/
    agree nonce     extract/                    -> nonce/
    agree train-lm  corpus/ --arch lstm|kn5|unigram -> models/<arch>/
    agree score     nonce/ --model ...          -> score/
    report.md       (:mod:`agreement.report`)

Why the commands and not their library functions: the demo is the README's first
command, so it should exercise the CLI surface users will use next, and its output
directories are then indistinguishable from hand-made ones (same files, same
manifests, whose ``argv`` is the step's own command line). The steps run with the
output directory as working directory and relative paths, so the manifests' paths
stay valid after the temporary directory is renamed to ``--out``.
"""
from __future__ import annotations

import contextlib
import io
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import click

from agreement.errors import AgreeError
from agreement.options import log
from formats.manifest import atomic_output_dir, read_manifest, write_manifest
from agreement.report import ModelInfo, ReportInputs, accuracy, finding as state_finding, write_demo_report
from agreement.synthlang import GrammarConfig, write_synthetic

TIMINGS_FILE = "timings.tsv"
LANG = "synth"   # a language code of its own: no language-specific rule applies to it


#: The LSTM: train-lm's ``small`` preset, narrowed to tied units without dropout and
#: with small batches. What makes a small LSTM learn agreement on this language is
#: the number of updates more than the tokens seen. Measured here (seed 1111, nonce
#: items with attractors): the preset as it is (2 x 200, dropout 0.2, batch 32,
#: 3 epochs of 240k tokens) 56%; 2 x 128 tied, no dropout, batch 16, 2 epochs 95%
#: in less CPU time; tiny size (64k tokens): 2 x 64, batch 4, 2 epochs (982
#: updates) 89%, while 491 updates stayed at chance. The generated text has no
#: rare constructions to overfit in two epochs, so no dropout.
#: One thread: these matrices are tiny (16 x 128), so a second thread gains ~15% on
#: an idle machine, and on a busy one its barriers spin while the other thread
#: waits for a core: measured here, 150 updates took 7 s on one thread every time
#: and 6 to 171 s on two.
THREADS = 1
LSTM_OPTIONS = ("--hidden", "128", "--emb", "128", "--tied", "--dropout", "0", "--batch-size", "16",
                "--threads", str(THREADS))
TINY_LSTM_OPTIONS = ("--hidden", "64", "--emb", "64", "--tied", "--dropout", "0", "--batch-size", "4",
                     "--threads", str(THREADS))


@dataclass(frozen=True)
class DemoConfig:
    """Sizes and training budget of one demo run.

    sentences: treebank sentences (test items come from these);
    corpus_tokens: tokens of LM training text (split 8:1:1 by ``agree corpus``);
    nonce: nonce variants per original item;
    lstm_epochs / lstm_max_steps: the LSTM's training budget (``--epochs`` /
        ``--max-steps`` of train-lm; None = the command's default);
    lstm_options: further ``agree train-lm`` options for the LSTM, as CLI words;
    kn_order: n-gram order of the Kneser-Ney model;
    seed: one seed for the generator, nonce sampling, corpus shuffle and training;
    quiet: no progress lines or bars; grammar: the generator's probabilities.
    The defaults are the ``default`` size."""
    size: str = "default"
    sentences: int = 2000
    corpus_tokens: int = 300_000
    nonce: int = 9
    lstm_epochs: int | None = 2
    lstm_max_steps: int | None = None
    lstm_options: tuple[str, ...] = LSTM_OPTIONS
    kn_order: int = 5
    seed: int = 1111
    quiet: bool = False
    grammar: GrammarConfig = field(default_factory=GrammarConfig)


#: --size presets. ``default``: about a minute on 2 CPU cores (the goal is under 10);
#: ``tiny``: seconds, for the end-to-end test (a quarter of the lexicon, so that the
#: 2 x 64 LSTM learns every word's number from 64k tokens).
PRESETS = {
    "default": {},   # the DemoConfig defaults
    "tiny": dict(sentences=300, corpus_tokens=80_000, nonce=3, lstm_epochs=2, lstm_options=TINY_LSTM_OPTIONS,
                 grammar=GrammarConfig(lexicon=0.25)),
}


def demo_config(size: str = "default", *, seed: int = 1111, quiet: bool = False, **overrides) -> DemoConfig:
    """The preset ``size`` with ``overrides`` (any :class:`DemoConfig` field)."""
    if size not in PRESETS:
        raise ValueError(f"unknown demo size {size!r} (known: {', '.join(PRESETS)})")
    return DemoConfig(size=size, seed=seed, quiet=quiet, **{**PRESETS[size], **overrides})


@dataclass(frozen=True)
class DemoResult:
    """What a demo run produced.

    out_dir: the output directory; report: its report.md; finding: the report's
    generated sentence; accuracy: model -> {"original", "nonce", "original_attr",
    "nonce_attr"} -> accuracy in % (``_attr``: items with at least one attractor);
    timings: (step, seconds), also in timings.tsv (the one file that differs between
    runs with the same seed, with the manifests' ``seconds`` fields of train-lm);
    wall_s: total wall time in seconds; table: the accuracy table ``agree score`` printed."""
    out_dir: Path
    report: Path
    finding: str
    accuracy: dict
    timings: tuple[tuple[str, float], ...]
    wall_s: float
    table: str = ""


MODELS = (
    ModelInfo("lstm", "LSTM", "lstm"),
    ModelInfo("kn5", "5-gram", "kn5"),
    ModelInfo("unigram", "unigram", "unigram"),
)


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """Scoring with small models: ``n`` torch threads (see THREADS), restored after."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _agree(args: Sequence[str]) -> str:
    """Run one ``agree`` command in this process; returns what it printed on stdout
    (the caller decides whether people see it). Domain errors surface as
    ``click.ClickException`` with the command's own message."""
    from agreement.cli import cli

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            cli.main(args=list(args), prog_name="agree", standalone_mode=False)
    except click.exceptions.Exit as e:   # --help and friends; not used by the demo
        if e.exit_code:
            raise
    return out.getvalue()


def _demo_argv(config: DemoConfig) -> list[str]:
    """The demo's own command line as its manifests record it."""
    return ["demo", "--size", config.size, "--seed", str(config.seed)]


def commands(config: DemoConfig) -> list[list[str]]:
    """The demo's pipeline as ``agree`` argument lists (paths relative to --out)."""
    q = ["--quiet"] if config.quiet else []
    seed = ["--seed", str(config.seed)]
    lstm = ["--size", "small", *seed]
    if config.lstm_epochs is not None:
        lstm += ["--epochs", str(config.lstm_epochs)]
    if config.lstm_max_steps is not None:
        lstm += ["--max-steps", str(config.lstm_max_steps)]
    lstm += list(config.lstm_options)
    return [
        ["corpus", "synth/corpus.txt", "--lang", LANG, *seed, "--out", "corpus", *q],
        ["extract", "synth/treebank.conllu", "--lang", LANG, "--vocab", "corpus", "--out", "extract", *q],
        ["nonce", "extract", "--n", str(config.nonce), "--vocab", "corpus", *seed, "--out", "nonce", *q],
        ["train-lm", "corpus", "--lang", LANG, "--arch", "lstm", *lstm, "--out", "models/lstm", *q],
        ["train-lm", "corpus", "--lang", LANG, "--arch", "kn5", "--order", str(config.kn_order), *seed,
         "--out", "models/kn5", *q],
        ["train-lm", "corpus", "--lang", LANG, "--arch", "unigram", *seed, "--out", "models/unigram", *q],
        ["score", "nonce", *(f"--model={m.name}=models/{m.name}" for m in MODELS), *seed,
         "--out", "score", *q],
    ]


def run_demo(out_dir: str | os.PathLike, config: DemoConfig = DemoConfig(),
             force: bool = False) -> DemoResult:
    """Run the pipeline into ``out_dir`` (atomically: it appears whole or not at all)
    and write ``report.md`` there. Progress lines go to stderr unless ``config.quiet``."""
    start = time.perf_counter()
    quiet = config.quiet
    timings: list[tuple[str, float]] = []
    steps = commands(config)
    n_steps = len(steps) + 2
    out_dir = Path(out_dir).resolve()
    table = ""
    with atomic_output_dir(out_dir, "demo", (), force, quiet) as tmp, contextlib.chdir(tmp), \
            _torch_threads(THREADS):
        t = time.perf_counter()
        log(f"[1/{n_steps}] generating the language: {config.sentences} treebank sentences, "
            f"{config.corpus_tokens} corpus tokens (seed {config.seed})", quiet)
        synth = write_synthetic("synth", seed=config.seed, sentences=config.sentences,
                                corpus_tokens=config.corpus_tokens, config=config.grammar)
        write_manifest("synth", "demo:synthlang", [], {"seed": config.seed, "sentences": config.sentences,
                                                       "corpus_tokens": config.corpus_tokens,
                                                       "grammar": asdict(config.grammar)},
                       argv=_demo_argv(config), counts={"corpus_sentences": synth.corpus_sentences,
                                                        "corpus_tokens": synth.corpus_tokens})
        timings.append(("generate the language", time.perf_counter() - t))
        for i, args in enumerate(steps, start=2):
            t = time.perf_counter()
            log(f"[{i}/{n_steps}] agree {' '.join(a for a in args if a != '--quiet')}", quiet)
            printed = _agree(args)
            if args[0] == "score":
                table = printed
            elif printed and not quiet:
                click.echo(printed.rstrip("\n"), err=True)
            if args[0] == "extract" and not read_manifest("extract")["counts"]["items"]:
                raise AgreeError(f"the generated treebank ({config.sentences} sentences) gave no agreement "
                                 "items: generate more sentences or a grammar with modified subjects")
            label = f"agree {args[0]}" + (f" {args[args.index('--arch') + 1]}" if "--arch" in args else "")
            timings.append((label, time.perf_counter() - t))
            log(f"      {timings[-1][1]:.1f} s", quiet)
        t = time.perf_counter()
        log(f"[{n_steps}/{n_steps}] writing report.md", quiet)
        models = tuple(ModelInfo(m.name, m.label, m.kind, _model_detail(Path("models") / m.name))
                       for m in MODELS)
        inputs = ReportInputs(
            scored=Path("score/items.tsv"), testset=Path("nonce/items.tsv"), score_dir=Path("score"),
            models=models, setting=tuple(_setting(config, synth)),
            commands=(f"# synth/: agree demo --size {config.size} --seed {config.seed} "
                      "(agreement.synthlang.write_synthetic)",
                      *("agree " + " ".join(a for a in args if a != "--quiet") for args in steps)),
            timings=Path(TIMINGS_FILE))
        results = write_demo_report(inputs, "report.md")
        finding = state_finding(results, models)
        acc = {m.name: {f"{c}{'_attr' if a else ''}": accuracy(results, m.name, c, attracted=a)
                        for c in ("original", "nonce") for a in (False, True)} for m in MODELS}
        write_manifest(".", "demo", [], _parameters(config), argv=_demo_argv(config), accuracy=acc,
                       finding=finding)
        timings.append(("report", time.perf_counter() - t))
        wall = time.perf_counter() - start
        Path(TIMINGS_FILE).write_text("step\tseconds\n" + "".join(f"{k}\t{v:.1f}\n" for k, v in timings)
                                      + f"total (wall)\t{wall:.1f}\n", encoding="utf-8")
    wall = time.perf_counter() - start
    log(f"done in {wall:.0f} s: {out_dir / 'report.md'}", quiet)
    log(finding, quiet)
    return DemoResult(out_dir, out_dir / "report.md", finding, acc, tuple(timings), wall, table)


def _parameters(config: DemoConfig) -> dict:
    params = asdict(config)
    params.pop("quiet")
    return params


def _setting(config: DemoConfig, synth) -> list[str]:
    lines = [f"A generated language (`agreement/synthlang.py`, seed {config.seed}, size `{config.size}`): "
             f"{config.sentences} treebank sentences (`synth/treebank.conllu`) and "
             f"{synth.corpus_tokens} tokens of training text in {synth.corpus_sentences} other sentences "
             f"(`synth/corpus.txt`, split 8:1:1 by `agree corpus`)."]
    for name, what in (("extract", "agree extract"), ("nonce", "agree nonce")):
        try:
            counts = read_manifest(name).get("counts", {})
        except OSError:
            continue
        shown = ", ".join(f"{k} {v}" for k, v in counts.items() if isinstance(v, (int, float)))
        if shown:
            lines.append(f"`{what}`: {shown}.")
    return lines


def _model_detail(model_dir: Path) -> str:
    """Size and validation perplexity of a trained model, from its files."""
    import json

    parts = []
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if "layers" in config and "hidden_size" in config:
        parts.append(f"{config['layers']} x {config['hidden_size']} units")
    if "order" in config:
        parts.append(f"order {config['order']}")
    training = config.get("training") or {}
    if "epochs" in training:
        parts.append(f"{training['epochs']} epochs")
    metrics = config.get("metrics") or {}
    try:
        metrics = {**metrics, **(read_manifest(model_dir).get("metrics") or {})}
    except OSError:
        pass
    if metrics.get("valid_ppl") is not None:
        parts.append(f"validation perplexity {float(metrics['valid_ppl']):.2f}")
    return ", ".join(parts)
