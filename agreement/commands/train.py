"""``agree train-lm``: corpus, dump or text -> LSTM, transformer, 5-gram KN or unigram model."""
from __future__ import annotations

import os

import click

from agreement.options import (invocation_argv, DROPOUT, NON_NEGATIVE, POSITIVE, POSITIVE_INT, log, out_option, quiet_option,
                                seed_option)

ARCHS = ("lstm", "transformer", "kn5", "unigram")


@click.command("train-lm")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--lang", help="Language of dumps/text files (needed to prepare a corpus; "
                             "a corpus directory knows its own).")
@click.option("--arch", type=click.Choice(ARCHS), default="lstm", show_default=True,
              help="Model architecture.")
@click.option("--size", type=click.Choice(["small", "paper"]), default="paper", show_default=True,
              help="Preset: paper = Gulordava et al.'s recipe (2x650 LSTM, 50k words, 40 "
                   "epochs); small = minutes on a CPU (2x200 LSTM, 10k words, 3 epochs).")
@click.option("--epochs", type=POSITIVE_INT, help="Passes over the training split (preset).")
@click.option("--max-steps", type=POSITIVE_INT, help="Stop after this many optimizer steps.")
@click.option("--batch-size", type=POSITIVE_INT, help="Batch rows per process (preset: 64 paper).")
@click.option("--bptt", type=POSITIVE_INT, help="Tokens per truncated-backprop window (35).")
@click.option("--lr", type=POSITIVE, help="Initial learning rate (LSTM SGD: 20), divided by 4 "
                                       "when validation perplexity does not improve.")
@click.option("--clip", type=NON_NEGATIVE, help="Gradient norm clipping (0.25).")
@click.option("--emb", "emb_size", type=POSITIVE_INT, help="Embedding size.")
@click.option("--hidden", "hidden_size", type=POSITIVE_INT, help="Hidden units per layer / model width.")
@click.option("--layers", type=POSITIVE_INT, help="LSTM layers / transformer blocks.")
@click.option("--dropout", type=DROPOUT, help="Dropout (0.2).")
@click.option("--tied/--no-tied", default=None, help="Tie decoder and embedding weights "
                                                     "(needs --emb = --hidden).")
@click.option("--heads", type=POSITIVE_INT, help="Transformer attention heads.")
@click.option("--max-len", type=POSITIVE_INT, help="Transformer context length (>= --bptt).")
@click.option("--vocab-size", type=POSITIVE_INT, help="Word models: keep this many most frequent words "
                                             "(small: 10000; paper: the corpus's 50k).")
@click.option("--tokenizer", type=click.Choice(["word", "sentencepiece"]), help="Word-level "
              "(default) or sentencepiece subwords trained on the training split.")
@click.option("--sp-vocab-size", type=POSITIVE_INT, help="Sentencepiece pieces (8000).")
@click.option("--order", type=POSITIVE_INT, help="kn5: n-gram order (5).")
@click.option("--checkpoint-minutes", type=POSITIVE, help="Minutes between checkpoints (10; "
                                                       "also at each epoch end and on Ctrl-C).")
@click.option("--resume", is_flag=True, help="Continue an interrupted run from its checkpoint "
                                             "in OUT.partial (same command otherwise).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), help="auto: CUDA if present.")
@click.option("--threads", type=POSITIVE_INT, help="CPU threads per process (default: all cores).")
@seed_option
@quiet_option
@out_option
def train_lm(inputs, lang, arch, size, epochs, max_steps, resume, seed, quiet, out, force, **options):
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
    """
    from lm.train_dir import train_lm_to_dir  # lazy: lm.train is imported only when training

    # Ctrl-C: lm.train saves a checkpoint and raises TrainingInterrupted, which the
    # CLI edge reports as one "Interrupted: ..." line with exit code 130.
    result = train_lm_to_dir(out, inputs, arch=arch, lang=lang, size=size, epochs=epochs, max_steps=max_steps,
                             seed=seed, resume=resume, argv=invocation_argv(), force=force, quiet=quiet,
                             **options)
    m = result.metrics
    quiet = quiet or os.environ.get("RANK", "0") != "0"   # torchrun: one report, from rank 0
    log(f"{arch}: validation perplexity {m['valid_ppl']:.2f} over {m['valid_tokens']} tokens "
        f"(<unk> excluded) -> {out}", quiet)
