"""The normalisation ablation of docs/normalization.md: how each ``--normalize`` changes
whole-sentence accuracy, per model, on BLiMP and on a release sample, and how often it
reverses the sum's choice.

Each model scores each data set once (``score_items(method="sentence")``, the sums
``agree score --method sentence`` writes); every normalisation is then applied to those
sums (:func:`agreement.scoring.normalize.normalized`, what ``--normalize`` applies), so
the columns differ by the normalisation alone. Models: ``gguf:smollm2-135m`` and
``gguf:gemma3-270m`` on llama.cpp (the default path), and agree's word unigram
(``--unigram LANG=DIR``, also SLOR's unigram; where a language has none, SLOR is left
out). Data: the first ``--blimp-pairs`` pairs of each of BLiMP's 16 agreement paradigms;
a seeded sample of a release's originals, ``--release-pairs`` at most per language.

Accuracy is over the decidable pairs (a tie is neither right nor wrong); ``rev`` is the
share of pairs whose choice differs from the sum's.

    .venv/bin/python benchmarks/normalization_table.py --release /tmp/h44/release \\
        --unigram en=/tmp/h44/en-unigram it=/tmp/h44/it-unigram --md table.md
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from agreement.scoring.normalize import NORMALIZATIONS, normalized  # noqa: E402
from agreement.scoring.score import score_items, sentence_pair  # noqa: E402
from bench_peers import pairs_file  # noqa: E402
from formats.testsets import load_testset  # noqa: E402
from formats.testsets.blimp import read_blimp  # noqa: E402
from lm.gguf.llamacpp import load_llamacpp  # noqa: E402
from lm.gguf.packaged import installed, packaged_path  # noqa: E402
from lm.load import load_model  # noqa: E402


def release_sample(release: Path, per: int, seed: int) -> dict[str, list]:
    """Language -> a seeded sample of at most ``per`` of its originals."""
    out = {}
    for lang_dir in sorted(p for p in release.iterdir() if (p / "items.tsv").is_file()):
        items = sorted((it for it in load_testset(lang_dir).items if it.variant == 0),
                       key=lambda it: (it.item_id, it.perturbation))
        if items:
            out[lang_dir.name] = random.Random(f"{seed}-{lang_dir.name}").sample(items, min(per, len(items)))
    return out


def choices(name: str, raw: np.ndarray, items, scorer, unigram) -> np.ndarray:
    """Per pair: 1 right, 0 wrong, NaN undecidable, under normalisation ``name``."""
    sentences = [s for it in items for s in sentence_pair(it)]
    v = normalized(name, raw, sentences, pieces=scorer.sentence_pieces, unigram=unigram)
    out = (v[:, 0] > v[:, 1]).astype(float)
    out[(v[:, 0] == v[:, 1]) | np.isnan(v).any(axis=1)] = np.nan
    return out


def evaluate(scorer, items, unigram, is_unigram: bool) -> dict:
    t0 = time.perf_counter()
    t = score_items(items, [scorer], method="sentence")
    raw = np.stack([t.logp_correct, t.logp_wrong], axis=1)
    row = {"pairs": len(items), "seconds": time.perf_counter() - t0}
    base = None
    for name in NORMALIZATIONS:
        if name == "slor" and (unigram is None or is_unigram):
            continue   # no unigram for the language; or the unigram against itself: 0 / words
        c = choices(name, raw, items, scorer, unigram)
        base = c if name == "sum" else base
        row[name] = {"acc": float(np.nanmean(c)), "undecidable": int(np.isnan(c).sum()),
                     "rev": float(np.mean((c != base) & ~(np.isnan(c) & np.isnan(base))))}
    return row


def markdown(results: list[dict]) -> str:
    head = "| data | model | pairs | " + " | ".join(NORMALIZATIONS) + " |"
    lines = [head, "|" + "---|" * (3 + len(NORMALIZATIONS))]
    for r in results:
        cells = []
        for name in NORMALIZATIONS:
            v = r.get(name)
            cells.append("n/a" if v is None else f"{100 * v['acc']:.1f}" +
                         ("" if name == "sum" else f" (rev {100 * v['rev']:.1f})"))
        lines.append(f"| {r['data']} | {r['model']} | {r['pairs']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blimp-pairs", type=int, default=50)
    ap.add_argument("--release", type=Path)
    ap.add_argument("--release-pairs", type=int, default=40, help="originals per language at most")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"])
    ap.add_argument("--unigram", nargs="*", default=[], metavar="LANG=DIR")
    ap.add_argument("--md", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/agree-normalization"))
    args = ap.parse_args()
    unigrams = {k: load_model(v) for k, v in (u.split("=", 1) for u in args.unigram)}
    data = {"BLiMP": {"en": read_blimp(pairs_file(args.work / f"blimp-{args.blimp_pairs}", args.blimp_pairs))}}
    if args.release:
        data["release"] = release_sample(args.release, args.release_pairs, args.seed)
    models = [m for m in args.models if installed(m)]
    results = []
    for label, by_lang in data.items():
        for m in models:
            scorer = load_llamacpp(packaged_path(m), threads=args.threads)
            rows = {lang: evaluate(scorer, items, unigrams.get(lang), False) for lang, items in by_lang.items()}
            scorer.close()
            results.append(pooled(label, m, rows))
            if label == "release":   # with SLOR: the languages that have a unigram, apart
                results += [{"data": f"{label} ({lang})", "model": m, **rows[lang]}
                            for lang in unigrams if lang in rows]
            print(f"{label} {m}: {results[-1]['pairs']} pairs, {results[-1]['seconds']:.0f} s", file=sys.stderr)
        for lang, uni in unigrams.items():
            if lang in by_lang:
                results.append({"data": f"{label} ({lang})" if label != "BLiMP" else label,
                                "model": f"unigram ({lang})", **evaluate(uni, by_lang[lang], None, True)})
    table = markdown(results)
    print(table)
    if args.md:
        args.md.write_text(table, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def pooled(label: str, model: str, rows: dict) -> dict:
    """One row over every language: accuracies and reversals weighted by pairs."""
    n = sum(r["pairs"] for r in rows.values())
    out = {"data": label, "model": model, "pairs": n, "seconds": sum(r["seconds"] for r in rows.values()),
           "languages": sorted(rows)}
    for name in NORMALIZATIONS:
        have = [r for r in rows.values() if name in r]
        if len(have) == len(rows):
            dec = {k: r["pairs"] - r[name]["undecidable"] for k, r in rows.items()}
            out[name] = {"acc": sum(r[name]["acc"] * dec[k] for k, r in rows.items()) / max(sum(dec.values()), 1),
                         "rev": sum(r[name]["rev"] * r["pairs"] for r in rows.values()) / n,
                         "undecidable": sum(r[name]["undecidable"] for r in rows.values())}
    return out


if __name__ == "__main__":
    main()
