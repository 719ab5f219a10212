"""``agree train-lm``: corpus, dump or text -> LSTM, transformer, 5-gram KN or unigram model.

The architectures, the presets (``--size``) and their settings come from the training
registry (:mod:`lm.training.trainers`); the help text lists the presets from there. The
library names settings as fields (``emb_size``); this command's options carry those
names, so the CLI edge (:func:`agreement.cli.spell_fields`) writes them as options in
error messages.
"""
from __future__ import annotations

import logging
import os

import click

from agreement.options import (CPUS, DROPOUT, LANG, LEARNING_RATE, NON_NEGATIVE, POSITIVE, POSITIVE_INT,
                               SIZE, Number, device_option, out_option, pass_run, quiet_option, seed_option)
from lm.kenlm.scorer import MAX_ORDER, MIN_ORDER
from lm.errors import LMError
from lm.training.trainers import DEFAULT_ARCH, DEFAULT_SIZE, sizes, trainers
from lm.training.snapshots import Schedule, parse_schedule
from lm.training.train_dir import train_lm_to_dir

log = logging.getLogger(__name__)


class SnapshotEvery(click.ParamType):
    """``N`` optimizer steps or ``N-tokens`` (k/M/G allowed), at least 1, as a
    :class:`lm.training.snapshots.Schedule`."""
    name = "snapshot interval"

    def convert(self, value, param, ctx):
        if isinstance(value, Schedule):
            return value
        try:
            return parse_schedule(value)
        except LMError as e:
            self.fail(str(e).replace("snapshot_every", "N"), param, ctx)


@click.command("train-lm")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--lang", type=LANG, help="Language of dumps/text files (needed to prepare a corpus; "
                             "a corpus directory knows its own).")
@click.option("--arch", type=click.Choice(list(trainers())), default=DEFAULT_ARCH,
              show_default=True, help="Model architecture.")
@click.option("--size", type=click.Choice(sizes()), default=DEFAULT_SIZE, show_default=True,
              help="Preset: a named set of the architecture's settings (listed below); "
                   "paper = Gulordava et al.'s recipe, small = minutes on a CPU. An option "
                   "given overrides its preset value.")
@click.option("--epochs", type=POSITIVE_INT, help="Passes over the training split (preset).")
@click.option("--max-steps", type=POSITIVE_INT, help="Stop after this many optimizer steps.")
@click.option("--batch-size", type=SIZE,
              help="Sequences per forward pass (as score's --batch-size): rows of the training "
                   "stream, --bptt tokens each, per optimizer step and process (preset).")
@click.option("--bptt", type=SIZE, help="Tokens per truncated-backprop window (preset).")
@click.option("--lr", type=LEARNING_RATE, help="Initial learning rate (preset), divided by 4 "
                                       "when validation perplexity does not improve.")
@click.option("--clip", type=NON_NEGATIVE, help="Gradient norm clipping (preset).")
@click.option("--emb", "emb_size", type=SIZE, help="Embedding size.")
@click.option("--hidden", "hidden_size", type=SIZE, help="Hidden units per layer / model width.")
@click.option("--layers", type=SIZE, help="LSTM layers / transformer blocks.")
@click.option("--dropout", type=DROPOUT, help="Dropout (preset).")
@click.option("--tied/--no-tied", default=None, help="Tie decoder and embedding weights "
                                                     "(needs --emb = --hidden).")
@click.option("--heads", type=SIZE, help="Transformer attention heads.")
@click.option("--max-len", type=SIZE, help="Transformer context length (>= --bptt).")
@click.option("--vocab-size", type=SIZE, help="Word models: keep this many most frequent "
                                                      "words (none: the corpus vocabulary).")
@click.option("--tokenizer", type=click.Choice(["word", "sentencepiece"]), help="Word-level "
              "(default) or sentencepiece subwords trained on the training split.")
@click.option("--sp-vocab-size", type=SIZE, help="Sentencepiece pieces.")
@click.option("--order", type=Number(int, min=MIN_ORDER, max=MAX_ORDER, why="the orders KenLM's build_binary "
              "takes"), help="kn5: n-gram order.")
@click.option("--checkpoint-minutes", type=POSITIVE, help="Minutes between checkpoints (also "
                                                       "at each epoch end and on Ctrl-C).")
@click.option("--snapshot-every", type=SnapshotEvery(), metavar="N|N-tokens",
              help="lstm/transformer: also keep the model every N optimizer steps, or every N "
                   "training tokens (2M-tokens, 500k-tokens), as OUT/snapshots/step-NNNNNN/ (a "
                   "complete model directory: steps, tokens seen and validation perplexity in "
                   "its config.json and manifest.json), for `agree score --curve OUT`.")
@click.option("--resume", is_flag=True, help="Continue an interrupted run from its checkpoint "
                                             "in OUT.partial (same command otherwise).")
@device_option
@click.option("--threads", type=CPUS, help="CPU threads per process (default: all cores).")
@seed_option
@quiet_option
@out_option
@pass_run("train-lm")
def train_lm(run, inputs, lang, arch, size, epochs, max_steps, resume, snapshot_every, **options):
    """Train a language model.

    Train a language model on a corpus directory (`agree corpus`), MediaWiki
    dumps or tokenised text files (one sentence per line; prepared into
    OUT/corpus first). Neural models train into OUT.partial (checkpointed; Ctrl-C
    saves and stops, --resume continues) and appear as OUT when done: config.json,
    model.pt, vocab.txt, train_log.tsv, manifest.json. Multi-process:
    `torchrun --nproc_per_node N -m agreement.cli train-lm ...`.

    \b
    Example:
      agree train-lm wiki.xml.bz2 --lang en --arch lstm --size small --out en-lstm
      agree train-lm en-corpus --arch kn5 --out en-kn5
      agree train-lm kind-it.txt --lang it --arch transformer --size small \\
        --tokenizer sentencepiece --out it-tf
      agree train-lm wiki.xml.bz2 --lang en --size small --snapshot-every 200 --out en-lstm
      agree score ../shared/data/colorlessgreen/English/generated --model en-lstm --curve \\
        --out en-curve
    """
    # Ctrl-C: lm.training.train saves a checkpoint and raises TrainingInterrupted, which the
    # CLI edge reports as one "Interrupted: ..." line with exit code 130.
    if snapshot_every is not None:   # one option, two library settings: steps or tokens
        options.update(snapshot_every=snapshot_every.steps, snapshot_tokens=snapshot_every.tokens)
    result = train_lm_to_dir(run, inputs, arch=arch, lang=lang, size=size, epochs=epochs, max_steps=max_steps,
                             resume=resume, **options)
    m = result.metrics
    if os.environ.get("RANK", "0") == "0":   # torchrun: one report, from rank 0
        log.info(f"{arch}: validation perplexity {m['valid_ppl']:.2f} over {m['valid_tokens']} tokens "
                 f"(<unk> excluded) -> {run.out}")


def presets_help(command: click.Command) -> str:
    """The presets and defaults of every architecture, as this command's options (for
    ``--help``; read from the registry, so the help never disagrees with training)."""
    flags = {p.name: p for p in command.params if isinstance(p, click.Option)}

    def spell(name, value):
        option = flags.get(name)
        if isinstance(value, bool) and option is not None and option.secondary_opts:
            return option.opts[0] if value else option.secondary_opts[0]
        shown = "none" if value is None else f"{value:g}" if isinstance(value, float) else value
        return f"{option.opts[0] if option is not None else name} {shown}"

    lines = ["Presets (--size) and defaults, by architecture:"]
    for arch, trainer in trainers().items():
        in_presets = {name for preset in trainer.presets.values() for name in preset}
        entries = [(f"{arch} {size}:", preset) for size, preset in trainer.presets.items()]
        rest = {k: v for k, v in trainer.defaults.items() if k not in in_presets and k in flags
                and (v is not None or not trainer.presets)}
        entries.append((f"{arch}, every size:" if trainer.presets else f"{arch}:", rest))
        for label, settings in entries:
            lines += _packed([label] + [spell(k, v) + "," for k, v in settings.items()])
    return "\b\n" + "\n".join(lines).rstrip(",")


def _packed(words: list[str], width: int = 78) -> list[str]:
    """``words`` in lines of at most ``width`` characters, indented, never split."""
    lines = ["  " + words[0]]
    for word in words[1:]:
        if len(lines[-1]) + 1 + len(word) > width:
            lines.append("      " + word)
        else:
            lines[-1] += " " + word
    lines = [line.rstrip(",") if i == len(lines) - 1 else line for i, line in enumerate(lines)]
    return lines


train_lm.epilog = presets_help(train_lm)
