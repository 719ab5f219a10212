"""The README's per-language table: every shared UD treebank through extract and nonce.

For each language (en, it, de, fr, el, cs, ar) it runs ``extract`` at the default
``--min-count`` (10) and at ``--min-count 5``, then ``nonce`` (9 variants, seed 1)
on the ``--min-count 5`` items, and prints one markdown table row per language:

* constructions / items at each setting;
* ``rejected``: targets whose only other-number form differs in more than number
  (``non_number_difference``, at ``--min-count 5``); arcs with a ``Number=Dual``
  (or other non-Sing/Plur: Ptan, Count...) end excluded (``excluded_value``);
* nonce variants made (originals that got variants); merged multiword content
  positions (farlo, della...) and how many of them got an attested re-spelling;
* content positions left unchanged and why: no other candidate with the same
  POS and features / merged multiword token with no attested re-spelling / merged
  token whose content part is unknown; merged targets keeping their own pair;
* distinct target pairs per item (min / median over the items with variants).

Uses the parse cache in a temporary directory (so the second extract of a
treebank reads it back). Deterministic: same data, same table.

    .venv/bin/python benchmarks/ud_languages.py [--lang el ...]
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.extraction.extract import ExtractConfig, extract_items  # noqa: E402
from nonce.generate import NonceConfig, make_nonce  # noqa: E402

UD = ROOT.parent / "shared" / "data" / "ud"
TREEBANKS = {"en": "en_ewt", "it": "it_isdt", "de": "de_gsd", "fr": "fr_gsd", "el": "el_gdt", "cs": "cs_cac",
             "ar": "ar_pud"}
HEADER = ("lang", "treebank", "sentences", "constr./items (default)", "constr./items (min-count 5)",
          "rejected: not number only", "arcs excluded: Number not Sing/Plur (Dual, Ptan...)",
          "nonce variants (items)", "merged content positions (re-spelled)",
          "positions unchanged: no candidate / merged, no re-spelling / merged, content unknown (of all)",
          "merged targets", "distinct pairs per item (min/median)")


def row(lang: str, path: Path, cache: str) -> tuple[str, ...]:
    default = extract_items([path], ExtractConfig(lang=lang, cache_dir=cache))
    five = extract_items([path], ExtractConfig(lang=lang, min_count=5, cache_dir=cache))
    nonce = make_nonce(five.items, five.paradigms, NonceConfig(n=9, lang=lang), random.Random(1))
    fused = nonce.positions_fused_unchanged
    spread = sorted(k for k, n in nonce.distinct_pairs.items() for _ in range(n))
    return (lang, path.name, str(five.sentences), f"{len(default.report.kept)} / {len(default.items)}",
            f"{len(five.report.kept)} / {len(five.items)}", str(five.filters["non_number_difference"]),
            str(five.filters["excluded_value"]), f"{nonce.variants} ({nonce.with_variants})",
            f"{sum(nonce.positions_fused.values())} ({sum(nonce.positions_fused.values()) - sum(fused.values())})",
            f"{sum(nonce.positions_no_candidate.values())} / {fused.get('no_attested_respelling', 0)} / "
            f"{fused.get('content_part_unknown', 0)} (of {sum(nonce.positions.values())})",
            str(nonce.targets_fused),
            f"{spread[0]} / {statistics.median(spread):g}" if spread else "-")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", action="append", choices=sorted(TREEBANKS), help="only these (repeatable)")
    args = ap.parse_args(argv)
    langs = args.lang or list(TREEBANKS)
    cache = tempfile.mkdtemp(prefix="agree-ud-languages-")
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    t0 = time.perf_counter()
    try:
        for lang in langs:
            path = UD / TREEBANKS[lang]
            if not path.exists():
                print(f"ud_languages: {path} is absent, {lang} skipped", file=sys.stderr)
                continue
            lines.append("| " + " | ".join(row(lang, path, cache)) + " |")
            print(f"{lang} done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
