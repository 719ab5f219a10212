"""Relation mining on every UD language of ../shared/data/ud: items, nonce, validity, time.

For each language (the folders grouped by the code before ``_``: Italian's two
treebanks are one language, their paradigms pooled), in one process:

1. ``extract_items(..., ExtractConfig(mode="relations"))`` (the parse cache in a
   temporary directory, filled by a first pass whose time is reported apart);
2. ``make_nonce`` (9 variants, seed 1) on its items and pooled paradigms;
3. :func:`agreement.extraction.validity.check_items` on originals and variants.

It prints a markdown table, one row per language: sentences; items by relation
and feature (sv = subj-verb, sp = subj-pred, dn = det-noun, an = adj-noun; N/P/G =
Number/Person/Gender); the share scored by whole sentence; wrong forms found in
another file of the language; the share of items with nonce variants; the
validity shares (wrong form contrasting the feature only or as the closest rule
allows; nonce words and target pairs keeping the features); seconds; the reason
when there are no items. Then the totals against issue 34's targets, the peak
memory (ru_maxrss) and the load average.

Baseline (the benchmarks' convention: a naive way, in the same process,
alternated): the candidate arcs of every language found by a per-word Python loop
over the sentences (:func:`naive_candidates`, the same rules written plainly),
against the array miner (:func:`agreement.extraction.relation_arcs.find_candidates`);
both must give the same (relation, cue, target, feature, value) rows (checked).

    .venv/bin/python benchmarks/ud_relations.py [--lang cs ...] [--no-baseline]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.extraction.extract import ExtractConfig, extract_items  # noqa: E402
from agreement.extraction.relation_arcs import (RELATION_FEATURES, RELATIONS, SUBJECT_RELATIONS,  # noqa: E402
                                                VALUES, find_candidates)
from agreement.extraction.relations import reason_text  # noqa: E402
from agreement.extraction.validity import check_items  # noqa: E402
from nonce.generate import NonceConfig, make_nonce  # noqa: E402
from treebanks.cache import load_columns  # noqa: E402
from treebanks.features import parse_feats  # noqa: E402
from treebanks.reader import expand_paths  # noqa: E402

UD = ROOT.parent / "shared" / "data" / "ud"
CELLS = [(r, f) for r in RELATIONS for f in ("Number", "Person", "Gender") if f in RELATION_FEATURES[r]]
SHORT = {"subj-verb": "sv", "subj-pred": "sp", "det-noun": "dn", "adj-noun": "an"}
HEADER = ("lang", "sentences", "items", *[f"{SHORT[r]}-{f[0]}" for r, f in CELLS], "by sentence",
          "wrong from other file", "with nonce", "wrong: contrast only / closest", "nonce words / pairs kept",
          "s", "reason (no items)")


def languages(only=None) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = defaultdict(list)
    for d in sorted(p for p in UD.iterdir() if p.is_dir()):
        code = d.name.split("_")[0]
        if not only or code in only:
            out[code].append(d)
    return dict(out)


def row(lang: str, dirs: list[Path], cache: str) -> tuple[list[str], Counter, dict]:
    t0 = time.perf_counter()
    r = extract_items(dirs, ExtractConfig(mode="relations", lang=lang, cache_dir=cache, workers=1))
    nonce = make_nonce(r.items, r.paradigms, NonceConfig(n=9, lang=lang), random.Random(1))
    seconds = time.perf_counter() - t0
    v = check_items(nonce.items, r.paradigms)
    cells = Counter((it.relation, it.feature.split("[")[0]) for it in r.items)
    n = len(r.items)
    pct = lambda k, of: f"{k / of:.0%}" if of else "-"  # noqa: E731
    share = lambda c: "-" if v.share(c) is None else f"{v.share(c):.1%}"  # noqa: E731
    cols = [lang, str(r.sentences), str(n), *[str(cells[c]) for c in CELLS],
            pct(sum(it.scoring == "sentence" for it in r.items), n),
            pct(sum(it.wrong_source != it.item_id.split(":")[0] for it in r.items), n),
            pct(nonce.with_variants, n),
            f"{share('wrong_exact')} / {share('wrong_closest')}", f"{share('words_kept')} / {share('pair_kept')}",
            f"{seconds:.2f}", reason_text(r.reason)]
    stats = {"items": n, "with_variants": nonce.with_variants, "variants": nonce.variants, "seconds": seconds,
             "validity": v, "sv_number": cells[("subj-verb", "Number")]}
    return cols, cells, stats


def naive_candidates(tb, relations=RELATIONS, features=tuple(VALUES)) -> set:
    """The rules of :mod:`agreement.extraction.relation_arcs`, a Python loop per word."""
    parsed: dict[str, dict] = {}
    rows = set()
    for s in range(len(tb)):
        toks = tb.sentence(s).tokens
        base = int(tb.starts[s])
        fe = [parsed.setdefault(t.feats, parse_feats(t.feats)) for t in toks]
        children = defaultdict(list)
        subjects = defaultdict(list)
        for t in toks:
            if t.head >= 0:
                children[t.head].append(t.deprel)
                if t.deprel in ("nsubj", "nsubj:pass"):
                    subjects[t.head].append(t.index)
        for rel, c, tgt, pred, several in _naive_arcs(toks, fe, subjects):
            if rel not in relations or _naive_excluded(rel, c, tgt, pred, several, fe, children):
                continue
            for feature in RELATION_FEATURES[rel]:
                if feature not in features:
                    continue
                cv = fe[c].get(feature)
                layer = fe[tgt].get(f"{feature}[subj]") if rel in SUBJECT_RELATIONS else None
                carried = f"{feature}[subj]" if layer is not None else feature
                tv = layer if layer is not None else fe[tgt].get(feature)
                if cv is not None and cv == tv and cv in VALUES[feature]:
                    rows.add((rel, base + c, base + tgt, feature, carried, cv))
    return rows


def _verbform(d):
    vf = set(d.get("VerbForm", "").split(",")) - {""}
    return (not vf or "Fin" in vf), bool(vf & {"Part", "PartRes", "PartPres", "PartPast"})


def _layered(d):
    return any(f"{f}[subj]" in d for f in VALUES)


def _verbal_target(tok, d):
    finite, part = _verbform(d)
    return tok.upos in ("VERB", "AUX") and (finite or _layered(d)) and not part


def _naive_arcs(toks, fe, subjects):
    for t in toks:
        d = fe[t.index]
        if t.head < 0:
            continue
        h = toks[t.head]
        if t.deprel in ("nsubj", "nsubj:pass"):
            if _verbal_target(h, fe[h.index]):
                yield "subj-verb", t.index, h.index, h.index, False
            if h.upos == "ADJ" or _verbform(fe[h.index])[1]:
                yield "subj-pred", t.index, h.index, h.index, False
        if (t.deprel.split(":")[0] in ("aux", "cop") and t.upos == "AUX" and _verbal_target(t, d)
                and subjects[t.head] and not _verbal_target(h, fe[h.index])):
            yield "subj-verb", subjects[t.head][-1], t.index, t.head, len(subjects[t.head]) > 1
        if t.deprel in ("det", "det:poss", "det:def", "det:art", "det:predet") and t.upos == "DET" \
                and h.upos == "NOUN":
            yield "det-noun", t.head, t.index, t.head, False
        if t.deprel.split(":")[0] == "amod" and t.upos == "ADJ" and h.upos == "NOUN":
            yield "adj-noun", t.head, t.index, t.head, False


def _naive_excluded(rel, c, tgt, pred, several, fe, children) -> bool:
    fixed = any(d.split(":")[0] == "fixed" for d in children[c] + children[tgt])
    if rel not in SUBJECT_RELATIONS:
        return fixed
    prontype = set(fe[c].get("PronType", "").split(","))
    return (any(d.split(":")[0] == "conj" for d in children[c]) or bool(prontype & {"Rel", "Int"})
            or any(d in ("expl", "expl:subj", "expl:impers") for d in children[pred]) or fixed
            or any(d in ("nummod:gov", "det:numgov") for d in children[c])
            or (fe[c].get("Case") == "Erg" and not _layered(fe[tgt])) or several)


def baseline(langs: dict, cache: str) -> tuple[float, float, int]:
    """Best-of-two seconds of the array miner and of the per-word loop over all
    languages (alternated), and the languages whose candidate rows differ."""
    fast, slow, differ = [], [], 0
    tbs = [load_columns(expand_paths(d), cache_dir=cache, workers=1)[0] for d in langs.values()]
    for _ in range(2):
        t = time.perf_counter()
        got = []
        for tb in tbs:
            c = find_candidates(tb, RELATIONS, tuple(VALUES), 1, None, defaultdict(Counter), Counter())
            got.append(set(zip(map(RELATIONS.__getitem__, c.relation.tolist()), c.cue.tolist(), c.target.tolist(),
                               c.feature, c.carried, c.value)))
        fast.append(time.perf_counter() - t)
        t = time.perf_counter()
        naive = [naive_candidates(tb) for tb in tbs]
        slow.append(time.perf_counter() - t)
        differ = sum(a != b for a, b in zip(got, naive))
    return min(fast), min(slow), differ


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", action="append", help="only these language codes (repeatable)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the per-word loop baseline")
    args = ap.parse_args(argv)
    if not UD.exists():
        print(f"ud_relations: {UD} is absent", file=sys.stderr)
        return 1
    langs = languages(args.lang)
    cache = tempfile.mkdtemp(prefix="agree-ud-relations-")
    try:
        t = time.perf_counter()
        for dirs in langs.values():  # fill the parse cache: the rows then time mining and nonce
            load_columns(expand_paths(dirs), cache_dir=cache, workers=1)
        cold = time.perf_counter() - t
        lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
        totals, stats = Counter(), {}
        for lang, dirs in langs.items():
            cols, cells, stats[lang] = row(lang, dirs, cache)
            totals.update(cells)
            lines.append("| " + " | ".join(cols) + " |")
            print(f"{lang}: {cols[2]} items ({stats[lang]['seconds']:.1f} s)", file=sys.stderr)
        base = None if args.no_baseline else baseline(langs, cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print("\n".join(lines))
    report(langs, totals, stats, cold, base)
    return 0


def report(langs, totals, stats, cold, base) -> None:
    items = sum(s["items"] for s in stats.values())
    seconds = sum(s["seconds"] for s in stats.values())
    with_variants = sum(s["with_variants"] for s in stats.values())
    print(f"\nlanguages {len(langs)}: >= 100 items {sum(s['items'] >= 100 for s in stats.values())} "
          f"(target 44), >= 30 items {sum(s['items'] >= 30 for s in stats.values())} (target 48), none "
          f"{sum(s['items'] == 0 for s in stats.values())}")
    print(f"items {items} (target 100,000); subj-verb Number {totals[('subj-verb', 'Number')]} (target 15,000); "
          f"with nonce variants {with_variants} ({with_variants / max(items, 1):.1%}; target 90%), "
          f"variants {sum(s['variants'] for s in stats.values())}")
    print("items by relation and feature: " + ", ".join(f"{r} {f} {totals[(r, f)]}" for r, f in CELLS))
    checks = Counter()
    n_items = n_var = 0
    for s in stats.values():
        checks.update(s["validity"].passed)
        n_items += s["validity"].items
        n_var += s["validity"].variants
    print("validity, all languages: " + ", ".join(
        f"{k} {checks[k] / (n_items if k.startswith(('correct', 'wrong')) else n_var):.2%}"
        for k in ("correct_is_token", "wrong_attested", "wrong_exact", "wrong_closest", "words_kept", "pair_kept")))
    print(f"parse (cold, 1 process) {cold:.1f} s; mining + nonce {seconds:.1f} s in 1 process; peak memory "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; load average "
          f"{os.getloadavg()[0]:.2f}")
    if base is None:
        print(f"ud_relations: {items / seconds:.0f} items/s (mining + nonce), no baseline run")
        return
    fast, slow, differ = base
    print(f"candidate arcs: arrays {fast:.2f} s, per-word loop {slow:.2f} s (best of 2, alternated); "
          f"languages whose rows differ: {differ}")
    print(f"ud_relations: {items / seconds:.0f} items/s (mining + nonce), {slow / fast:.1f}x per-word loop (arcs)")


if __name__ == "__main__":
    sys.exit(main())
