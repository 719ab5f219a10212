"""Check: are llama.cpp's CPU log-probs of one sentence the same bits when it is decoded in
two or three calls (an opening, then the rest on its cache) as in one call?

If they were, a pair's shared opening (everything before the target) could be decoded once
and each sentence's rest on top of it, with every score still depending on its sentence
alone (batch invariant), halving the long runs' work. Measured per model on the first
``--per-lang`` original items of each listed language of a release (both sentences; cuts at
the target's first piece, at half of it, and at two fixed points).

Measured 2026-11-28 (60 items of it, de, uk, tr, ar, fr; 1 thread): SmolLM2-135M (Q4_1)
360 of 360 decodes identical bits; Gemma 3 270M (Q4_K_M) 89 of 360, up to 1.06 nats per
token apart. So the opening is not shared on the default path: for Gemma the bits depend
on how many tokens a call holds, and one call per sentence is the only split-free rule.

    .venv/bin/python benchmarks/gguf_split_check.py /tmp/release --models smollm2-135m gemma3-270m
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.scoring.score import sentence_pair  # noqa: E402
from formats.release import read_release  # noqa: E402
from lm.gguf.llamacpp import load_llamacpp  # noqa: E402
from lm.gguf.llamacpp_decode import _decode  # noqa: E402
from lm.gguf.packaged import packaged_path  # noqa: E402


def pairs_of(release: Path, langs: list[str], per_lang: int):
    """(target index, (good words, bad words)) of the first originals of each language."""
    out = []
    for lang in langs:
        originals = (it for it in read_release(release / lang) if it.variant == 0)
        for _, it in zip(range(per_lang), originals):
            out.append((it.target_index, sentence_pair(it)))
    return out


def token_logprobs(scorer, ids: list[int], cuts: list[int]) -> np.ndarray:
    """Log-probs of tokens 1.. of ``ids``, decoded in calls split at ``cuts`` on one cache."""
    lane = scorer._lanes[0]
    lane.lc.llama_memory_clear(lane.mem, True)
    out = np.full(len(ids) - 1, np.nan)
    reqs = [[(ids[p + 1], out, p)] for p in range(len(ids) - 1)]
    bounds = [0, *cuts, len(ids) - 1]
    for a, b in zip(bounds, bounds[1:]):
        _decode(lane, [([0], a, list(ids[a:b]), reqs[a:b])])
    return out


def check(name: str, pairs) -> tuple[int, int, float]:
    scorer = load_llamacpp(str(packaged_path(name)), threads=1)
    same = n = 0
    worst = 0.0
    for t, sentences in pairs:
        for words in sentences:
            enc = scorer.try_encoded(words)
            ids = list(enc.ids)
            whole = token_logprobs(scorer, ids, [])
            k = next((p for p, w in enumerate(enc.owner) if w is not None and w >= t and p > 0), len(ids) // 2)
            for cuts in ([k], [max(1, k // 2)], [3, 7] if len(ids) > 9 else [2]):
                split = token_logprobs(scorer, ids, cuts)
                worst = max(worst, float(np.nanmax(np.abs(split - whole))))
                same += int(np.array_equal(split, whole))
                n += 1
    scorer.close()
    return same, n, worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("release", type=Path, help="an agree extract-all output directory")
    ap.add_argument("--langs", nargs="+", default=["it", "de", "uk", "tr", "ar", "fr"])
    ap.add_argument("--per-lang", type=int, default=10)
    ap.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"])
    args = ap.parse_args()
    pairs = pairs_of(args.release, args.langs, args.per_lang)
    for name in args.models:
        same, n, worst = check(name, pairs)
        print(f"gguf_split_check {name}: {same}/{n} split decodes identical bits, largest |diff| {worst:.3g} nats/token")
    return 0


if __name__ == "__main__":
    sys.exit(main())
