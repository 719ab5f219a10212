"""Count the ways nonce variants of an ``agree extract-all`` release break, per language.

    python scripts/nonce_patterns.py RELEASE UD_DIR [--only fr,it] > patterns.tsv

Columns (counts over the release's nonce variants, flagged or not, unless said):

- ``variants``, ``flagged``: perturbation ``nonce`` / ``nonce_same_prefix``;
- ``elision_checked``, ``elision_bad``, ``elision_unsure``: a function word whose next
  word was replaced, in a language :func:`treebanks.sounds.render_before` knows (en a/an,
  fr/it/ca elision and articles, el final ν): the word it would write differs
  (``bad``) or cannot be decided (``unsure``: French h, Catalan i/u);
- ``gender_checked``, ``gender_bad``: a determiner with Gender before a replaced noun
  that has no analysis with that Gender;
- ``adj_checked``, ``adj_ending_bad``: (de, nl) a replaced adjective with another
  ending than the original's (*ein richtiger* -> *ein richtige*);
- ``verbs_changed``, ``verb_frame_bad``, ``target_frame_bad``: replaced verbs (tokens, any
  position; and targets) whose new lemma does not take the frame the original verb
  has in its sentence (:func:`nonce.frames.Frames.fits`);
- ``target_scored``, ``same_prefix``: target-scored variants, and those whose words
  before the target are the original's;
- ``orig_checked``, ``orig_wrong_rewritten``, ``orig_wrong_unwritable``: originals whose
  target stands before a word, and those whose wrong form the renderer would write
  otherwise (another form or spacing: *l'apport* -> *les apport*) or not at all.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from agreement.extraction.itemtools import file_stem
from agreement.extraction.languages import find_languages
from formats.items import read_items
from nonce.frames import frames_for_files, verb_class
from nonce.vowels import ending_class
from treebanks.cache import default_cache_dir
from treebanks.features import parse_feats
from treebanks.paradigms import ParadigmTable
from treebanks.sounds import base_lang, is_elided, render_before

SOUND_LANGS = ("ca", "el", "en", "fr", "it")
COLUMNS = ("variants", "flagged", "elision_checked", "elision_bad", "elision_unsure", "gender_checked",
           "gender_bad", "adj_checked", "adj_ending_bad", "verbs_changed", "verb_frame_bad", "target_frame_bad",
           "target_scored", "same_prefix", "orig_checked", "orig_wrong_rewritten", "orig_wrong_unwritable")


def _analysis(table: ParadigmTable, form: str, upos: str, feats: str):
    for a, _ in table.analyses(form):
        if a.upos == upos and a.feats == feats:
            return a
    return None


def _wrong_feats(item) -> str:
    feats = parse_feats(item.feats[item.target_index])
    feats[item.feature.split("[")[0]] = item.wrong_value
    return "|".join(f"{k}={v}" for k, v in sorted(feats.items(), key=lambda kv: kv[0].lower()))


def _original(item, lang: str, c: Counter) -> None:
    t = item.target_index
    if t + 1 >= len(item.tokens) or lang not in SOUND_LANGS:
        return
    c["orig_checked"] += 1
    glued = is_elided(item.correct)
    w = render_before(item.wrong, item.tokens[t + 1], lang, feats=_wrong_feats(item), space_after=not glued)
    if w is None:
        c["orig_wrong_unwritable"] += 1
    elif w.form != item.wrong or w.space_after == glued:
        c["orig_wrong_rewritten"] += 1


def _variant(row: dict, orig, lang: str, table: ParadigmTable, frames, c: Counter) -> None:
    toks, t = row["tokens"], orig.target_index
    c["variants" if row["perturbation"] == "nonce" else "flagged"] += 1
    if row["scoring"] == "target":
        c["target_scored"] += 1
        c["same_prefix"] += toks[:t] == list(orig.tokens[:t])
    ctx = frames.of_item(orig) if frames is not None else None
    for j, (new, old) in enumerate(zip(toks, orig.tokens)):
        if new == old:
            continue
        upos, feats = orig.pos[j], orig.feats[j]
        if j > 0 and lang in SOUND_LANGS and toks[j - 1] == orig.tokens[j - 1] and orig.pos[j - 1] not in (
                "NOUN", "VERB", "ADJ", "PROPN", "NUM", "ADV", "PUNCT"):
            before = toks[j - 1]
            w = render_before(before, new, lang, feats=orig.feats[j - 1])
            ref = render_before(before, old, lang, feats=orig.feats[j - 1])
            if ref is not None and ref.form.lower() == before.lower():  # a word the renderer reads
                c["elision_checked"] += 1
                c["elision_unsure"] += w is None
                c["elision_bad"] += w is not None and w.form.lower() != before.lower()
        if upos == "NOUN" and j > 0 and orig.pos[j - 1] == "DET":
            g_det = parse_feats(orig.feats[j - 1]).get("Gender")
            genders = {parse_feats(a.feats).get("Gender") for a, _ in table.analyses(new) if a.upos == "NOUN"}
            genders.discard(None)
            if g_det and "," not in g_det and genders:  # a noun of both genders fits either (le/la mémoire)
                c["gender_checked"] += 1
                c["gender_bad"] += not any(g_det in g.split(",") for g in genders)
        if upos == "ADJ" and lang in ("de", "nl"):
            c["adj_checked"] += 1
            c["adj_ending_bad"] += ending_class(new, "ADJ", lang) != ending_class(old, "ADJ", lang)
        if upos == "VERB" and ctx is not None:
            c["verbs_changed"] += 1
            a = _analysis(table, new, "VERB", feats)
            bad = a is not None and not frames.fits(a.lemma, "VERB", verb_class(feats), ctx.sigs[j], j == t)
            c["verb_frame_bad"] += bad
            c["target_frame_bad"] += bad and j == t


def count_language(lang_dir: Path, lang, c: Counter) -> None:
    code = base_lang(lang_dir.name)
    originals = {it.item_id: it for it in read_items(lang_dir)}
    table = ParadigmTable.load(lang_dir)
    frames = frames_for_files(lang.files, originals.values(), file_stem, default_cache_dir(), 1) if lang else None
    for it in originals.values():
        _original(it, code, c)
    with open(lang_dir / "pairs.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["variant"] and row["item_id"] in originals:
                _variant(row, originals[row["item_id"]], code, table, frames, c)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("ud_dir", type=Path)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    langs = {lang.code: lang for lang in find_languages(args.ud_dir).languages}
    only = [x for x in args.only.split(",") if x]
    print("lang\t" + "\t".join(COLUMNS))
    total = Counter()
    for d in sorted(p for p in args.release.iterdir() if (p / "pairs.jsonl").is_file()):
        if only and d.name not in only:
            continue
        c = Counter()
        count_language(d, langs.get(d.name), c)
        total.update(c)
        print(d.name + "\t" + "\t".join(str(c[k]) for k in COLUMNS), flush=True)
    print("ALL\t" + "\t".join(str(total[k]) for k in COLUMNS))


if __name__ == "__main__":
    sys.exit(main())
