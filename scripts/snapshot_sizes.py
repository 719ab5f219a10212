"""Disk used by one snapshot of each neural preset (``agree train-lm --snapshot-every``).

A snapshot is a complete model directory: model.pt (the weights, float32), vocab.txt,
config.json and manifest.json. model.pt is measured exactly here, by saving each preset's
model as the trainer does; the vocabulary is the preset's word cap (10k) or, without one,
``agree corpus``'s default of 50k words (+ <eos>, <unk>); vocab.txt is measured on a real
corpus vocabulary when one is given, else estimated at 8 bytes a word.

    .venv/bin/python scripts/snapshot_sizes.py [CORPUS_DIR]
"""
from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from formats.vocab import read_vocab
from lm.neural.checkpoint import save_model
from lm.neural.models import build_model, n_parameters
from lm.neural.presets import PRESETS, neural_settings

#: words in an `agree corpus` vocabulary (its --vocab-size default), besides <eos> and <unk>
CORPUS_WORDS = 50000


def vocab_bytes(words: int, corpus: Path | None) -> int:
    if corpus is None:
        return 8 * words
    vocab = read_vocab(corpus / "vocab.txt")[:words]
    return sum(len(w.encode("utf-8")) + 1 for w in vocab)


def main(corpus: Path | None) -> None:
    print("arch\tsize\tvocabulary\tparameters\tmodel.pt MB\tsnapshot MB")
    for arch, presets in PRESETS.items():
        for size in presets:
            config, options = neural_settings(arch, size, seed=1)
            words = (options.vocab_size or CORPUS_WORDS) + 2
            config = replace(config, vocab_size=words)
            model = build_model(config)
            with tempfile.TemporaryDirectory() as tmp:
                save_model(model, config.to_dict(), Path(tmp))
                weights = (Path(tmp) / "model.pt").stat().st_size
            total = weights + vocab_bytes(words, corpus) + 8_000   # config.json + manifest.json
            print(f"{arch}\t{size}\t{words}\t{n_parameters(model)}\t{weights / 1e6:.1f}\t{total / 1e6:.1f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
