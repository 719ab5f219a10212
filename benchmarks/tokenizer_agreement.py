"""How many UD treebank tokens does `lm.corpus.tokenize` reproduce from the raw text?

Every treebank folder under ``../shared/data/ud`` (``.conllu`` and ``.conllu.gz``;
65 treebanks, 64 languages): each sentence's ``# text`` line is tokenised and
compared with the treebank's surface tokens by character span, whitespace
ignored (:mod:`lm.corpus.treebank_tokens`). A multiword token (``della`` =
``di la``) counts as its surface form, as :mod:`treebanks.reader` gives it to
the rest of ``agree``; English is also measured against UD words (``do n't``),
the default ``--clitics split`` and the paper's convention.

Per treebank, share of gold tokens reproduced:

* ``generic``: the generic rules (what a language without rules gets);
* ``rules``: the language's rules (:data:`lm.corpus.lang_rules.RULES`; the same
  as generic for a language without rules);
* ``tune`` / ``check``: the language's rules on the part the rules were written
  against and on the part they were not: dev / test where the treebank has
  both, else the test file's first / second half of sentences;
* ``naive``: ``\\w+`` runs and single punctuation marks, the usual quick tokenizer;
* ``sent. ends``: gold sentence ends reproduced when each document's sentences
  are joined with spaces and re-split.

Rows sorted by the ``rules`` share. Speed: tokens/s of the language tokenizers
over every text, against the naive tokenizer timed on the same texts in
alternation (a ratio survives the machine's load). Last line:
``tokenize: N/64 languages >= 95% ..., TOKENS/S tokens/s, RATIOx naive``.

    PYTHONPATH=. python benchmarks/tokenizer_agreement.py [--lang br] [--errors 10]
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from lm.corpus.tokenize import Tokenizer, get_tokenizer  # noqa: E402  (after the path is set)
from lm.corpus.treebank_tokens import Agreement, GoldSentence, gold_sentences, score, spans  # noqa: E402
from treebanks.reader import expand_paths  # noqa: E402

UD = ROOT.parent / "shared" / "data" / "ud"
TARGET = 0.95
#: Why a language stays below 95% (printed under the table; docs/corpora.md says more).
NOTES = {"ar": "Arabic PUD writes the clitics of a word (conjunctions w-, f-, prepositions b-, l-, k-, the "
               "future s-, suffixed pronouns -h, -hA...) as words of their own with no multiword token. The "
               "rules cut the unambiguous cases (before the article, closed-class hosts, w- before an "
               "imperfective verb); the rest (w- or a pronoun on an open-class word: wzyr 'minister' vs "
               "w+zyr) needs a morphological analyser with a lexicon, beyond rules."}
_NAIVE = re.compile(r"\w+|[^\w\s]")


@dataclass
class Row:
    treebank: str
    lang: str
    sentences: int
    generic: Agreement
    rules: Agreement
    tune: Agreement
    check: Agreement
    parts: str                 #: what tune / check are
    naive: Agreement
    sentence_ends: float
    seconds: float             #: the language tokenizer over every text
    naive_seconds: float
    tokens: int                #: tokens it produced


def parts(folder: Path, words: bool) -> tuple[list[GoldSentence], list[GoldSentence], list[GoldSentence], str]:
    """(all sentences, tune part, check part, what the parts are)."""
    by_split: dict[str, list[GoldSentence]] = {}
    for f in expand_paths(folder):
        split = next((s for s in ("dev", "test", "train") if f"-{s}." in f.name), "other")
        by_split.setdefault(split, []).extend(gold_sentences(f, words=words))
    every = [s for split in sorted(by_split) for s in by_split[split]]
    if "dev" in by_split and "test" in by_split:
        return every, by_split["dev"], by_split["test"], "dev / test"
    half = len(every) // 2
    return every, every[:half], every[half:], "test 1st / 2nd half"


def sentence_ends(sentences: list[GoldSentence], tok: Tokenizer) -> float:
    """Share of gold sentence ends reproduced, re-splitting each document's text."""
    docs: dict[tuple[str, str], list[str]] = {}
    for s in sentences:
        docs.setdefault((s.source.rsplit(":", 1)[0], s.doc), []).append(s.text)
    hit = n_gold = 0
    for texts in docs.values():
        gold, pos = set(), 0
        for t in texts:
            pos += len(re.sub(r"\s", "", t))
            gold.add(pos)
        pred, pos = set(), 0
        for sent in tok.sentences(" ".join(texts)):
            pos += sum(len(w) for w in sent)
            pred.add(pos)
        hit += len(gold & pred)
        n_gold += len(gold)
    return hit / max(n_gold, 1)


def measure(folder: Path, lang: str, clitics: str = "keep") -> Row:
    """One treebank. English: ``keep`` compares surface tokens, ``split`` UD words."""
    words = lang == "en" and clitics == "split"
    every, tune, check, what = parts(folder, words)
    tok = get_tokenizer(lang, clitics)
    texts = [s.text for s in every]
    t0 = time.perf_counter()
    naive = [_NAIVE.findall(t) for t in texts]
    t1 = time.perf_counter()
    pred = [tok.tokenize(t) for t in texts]
    t2 = time.perf_counter()
    by_text = dict(zip(map(id, every), pred))
    generic = Tokenizer("generic")
    return Row(folder.name + (" (UD words: do n't)" if words else ""), lang, len(every),
               score(every, [generic.tokenize(t) for t in texts]), score(every, pred),
               score(tune, [by_text[id(s)] for s in tune]), score(check, [by_text[id(s)] for s in check]),
               what, score(every, naive), sentence_ends(every, tok), t2 - t1, t1 - t0, sum(map(len, pred)))


def show_errors(folder: Path, lang: str, n: int) -> None:
    """The first ``n`` sentences of the tune part the language's rules get wrong."""
    _, tune, _, _ = parts(folder, False)
    tok, shown = get_tokenizer(lang, "keep"), 0
    for s in tune:
        pred = tok.tokenize(s.text)
        (gs, _), (ps, _) = spans(s.tokens), spans(pred)
        if gs != ps and shown < n:
            shown += 1
            print("   ", s.text[:150])
            print("     gold:", [g for g, sp in zip(s.tokens, sorted(gs)) if sp not in ps][:8])
            print("     pred:", [p for p, sp in zip(pred, sorted(ps)) if sp not in gs][:8])


def pct(a: Agreement | float) -> str:
    return f"{100 * (a.recall if isinstance(a, Agreement) else a):.1f}"


def table(rows: list[Row]) -> list[str]:
    lines = ["| treebank | lang | sentences | gold tokens | generic % | rules % | tune % | check % | tune / check "
             "| naive % | precision % | sent. ends % | spaced tokens |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r.rules.recall, r.treebank)):
        lines.append(f"| {r.treebank} | {r.lang} | {r.sentences} | {r.rules.gold} | {pct(r.generic)} | "
                     f"{pct(r.rules)} | {pct(r.tune)} | {pct(r.check)} | {r.parts} | {pct(r.naive)} | "
                     f"{100 * r.rules.precision:.1f} | {pct(r.sentence_ends)} | {r.rules.spaced} |")
    return lines


def by_language(rows: list[Row], field: str) -> dict[str, float]:
    """Share per language, pooling its treebanks (Italian: ISDT and ParTUT)."""
    hit: dict[str, list[int]] = {}
    for r in rows:
        a = getattr(r, field)
        h = hit.setdefault(r.lang, [0, 0])
        h[0] += a.reproduced
        h[1] += a.gold
    return {lang: h / max(g, 1) for lang, (h, g) in hit.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lang", action="append", help="only this language code (repeatable)")
    ap.add_argument("--errors", type=int, default=0, help="print N mis-tokenised sentences per treebank")
    args = ap.parse_args(argv)
    if not UD.exists():
        print(f"tokenize: skipped, {UD} is absent")
        return 0
    load = os.getloadavg()[0]
    rows, extra = [], []
    for folder in sorted(p for p in UD.iterdir() if p.is_dir()):
        lang = folder.name.split("_")[0]
        if args.lang and lang not in args.lang:
            continue
        print(f"{folder.name} ...", file=sys.stderr, flush=True)
        rows.append(measure(folder, lang))
        if lang == "en":
            extra.append(measure(folder, lang, "split"))
        if args.errors:
            print(f"{folder.name}:")
            show_errors(folder, lang, args.errors)
    if not rows:
        print("tokenize: no treebank measured")
        return 1
    print("\n".join(table(rows)))
    for r in extra:
        print(f"{r.treebank}: rules {pct(r.rules)} % (tune {pct(r.tune)}, check {pct(r.check)}), "
              f"naive {pct(r.naive)} %")
    generic, ours = by_language(rows, "generic"), by_language(rows, "rules")
    for lang in sorted(ours, key=ours.get):
        if ours[lang] < TARGET:
            print(f"{lang} below 95% ({pct(ours[lang])} %): {NOTES.get(lang, 'no note')}")
    speed = sum(r.tokens for r in rows) / sum(r.seconds for r in rows)
    ratio = sum(r.naive_seconds for r in rows) / sum(r.seconds for r in rows)
    print(f"load average {load:.2f} at start; {len(rows)} treebanks, {len(ours)} languages")
    print(f"tokenize: {sum(v >= TARGET for v in ours.values())}/{len(ours)} languages >= 95% tokens "
          f"reproduced (generic rules: {sum(v >= TARGET for v in generic.values())}), {speed:,.0f} tokens/s, "
          f"{ratio:.2f}x naive")
    return 0


if __name__ == "__main__":
    sys.exit(main())
