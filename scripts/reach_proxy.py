"""Reach proxy for issue 41: of a treebank's subject-verb arcs that agree, the share that
are items of an extract (or extract-all language) directory, and why the others are not.

English (EWT): a subject (nsubj, nsubj:pass) with Number, and a finite present verb or
auxiliary that agrees with it in Number: its VERB/AUX head, or a finite AUX child (aux, cop)
of that head. Turkish (BOUN): a finite verb (VerbForm=Fin, or a verb carrying Person) with a
NOUN, PROPN or PRON subject. An arc is reached when an item of relation subj-verb has the
same file, sentence, cue and target (the item id), whatever its feature. Indices are those
of the items: a multiword token (*haven't*, *it's*) is one word, so a subject and verb inside
one token (*it's*) can never be an item (counted as ``one token``).

``--misses N`` runs the relation miner again on the treebank alone and says, for each arc
that is not an item, why: the miner's own counter when the arc was a candidate (``same_spelling``,
``no_alternative``, a filter's name), else the first rule of ``relation_arcs`` that left it out,
read from the words; then prints the counts and N missed arcs, drawn with a fixed seed.

    python scripts/reach_proxy.py ../shared/data/ud/en_ewt OUT/en/items.tsv --rule en --misses 30
"""
import argparse
import csv
import gzip
import random
import sys
from collections import Counter
from pathlib import Path

import conllu

SUBJ = {"nsubj", "nsubj:pass"}


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _feats(word) -> dict:
    return dict(word["feats"] or {})


def _en_targets(words, subj, head):
    """Finite present targets of an English subject that agree with it in Number."""
    number = _feats(subj).get("Number")
    if not number:
        return []
    found = []
    candidates = [head] + [w for w in words if w["head"] == head["id"]
                           and w["deprel"].split(":")[0] in ("aux", "cop")]
    for t in candidates:
        f = _feats(t)
        if t["upos"] in ("VERB", "AUX") and f.get("VerbForm") == "Fin" \
                and f.get("Tense") == "Pres" and f.get("Number") == number:
            found.append(t)
    return found


def _tr_targets(words, subj, head):
    """Turkish finite verbs whose subject is a noun, proper noun or pronoun."""
    if subj["upos"] not in ("NOUN", "PROPN", "PRON"):
        return []
    f = _feats(head)
    if head["upos"] in ("VERB", "AUX") and (f.get("VerbForm") == "Fin"
                                           or ("Person" in f and "VerbForm" not in f)):
        return [head]
    return []


def _node_index(sentence) -> dict:
    """Word id -> 0-based index as the project's reader numbers words: every part of a
    multiword token is the one merged word (treebanks/reader.py)."""
    out, k, end = {}, -1, 0
    for tok in sentence:
        tid = tok["id"]
        if isinstance(tid, tuple) and len(tid) == 3 and tid[1] == "-":
            k += 1
            end = tid[2]
            for j in range(tid[0], tid[2] + 1):
                out[j] = k
        elif isinstance(tid, int) and tid > end:
            k += 1
            out[tid] = k
    return out


def arcs(folder: Path, rule: str):
    """(item-id prefix, sentence words, subject, target) of every arc the rule selects, in file order."""
    pick = _en_targets if rule == "en" else _tr_targets
    for path in sorted(folder.glob("*.conllu*")):
        stem = path.name.split(".conllu")[0]
        with _open(path) as handle:
            for sentence in conllu.parse_incr(handle):
                words = [w for w in sentence if isinstance(w["id"], int)]
                index = _node_index(sentence)
                by_id = {w["id"]: w for w in words}
                for subj in words:
                    if subj["deprel"] not in SUBJ or subj["head"] not in by_id:
                        continue
                    for t in pick(words, subj, by_id[subj["head"]]):
                        sid = sentence.metadata.get("sent_id", "")
                        yield f"{stem}:{sid}:{index[subj['id']]}-{index[t['id']]}", words, subj, t


def item_arcs(items: Path) -> set:
    csv.field_size_limit(sys.maxsize)
    with open(items, encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return {r["item_id"].rsplit(":", 1)[0] for r in rows
                if r.get("relation") == "subj-verb" and r.get("variant", "0") == "0"}


def _mined_reasons(folder: Path, lang: str) -> dict:
    """Arc id -> the miner's counter for every subject-verb candidate arc (``items`` when it
    became one), from the miner's own steps on ``folder`` alone."""
    from agreement.extraction.config import ExtractConfig
    from agreement.extraction.item_builder import Attractors, ItemBuilder, default_filters
    from agreement.extraction.relation_arcs import find_candidates
    from agreement.extraction.relation_filters import morphology_wrong_forms, relation_filters, with_filters
    from agreement.extraction.relations import _pooled, relation_arcs, wrong_values
    from agreement.extraction.itemtools import file_stem
    from treebanks.cache import load_columns
    from treebanks.reinflect import Reinflector
    config = ExtractConfig(mode="relations", lang=lang, relations=("subj-verb",))
    tb, _ = load_columns(sorted(folder.glob("*.conllu*")), workers=1)
    pooled = _pooled(tb, [], None, config)
    counts: dict = {}
    from collections import defaultdict
    counts = defaultdict(Counter)
    cands = find_candidates(tb, config.relations, config.features, 1, None, counts, Counter())
    model = Reinflector.train(pooled.table.counts, None)
    builder = ItemBuilder(morphology_wrong_forms(pooled, model, config.alt, wrong_values, {}),
                          with_filters(default_filters(None), relation_filters(model, lang)),
                          Attractors(pooled.table), counts)
    out = {}
    for arc in relation_arcs(tb, cands):
        before = Counter(counts[arc.group])
        builder.item(arc)
        changed = [k for k, v in counts[arc.group].items() if v != before.get(k, 0)]
        key = f"{file_stem(arc.sentence.source)}:{arc.sentence.sent_id}:{arc.cue}-{arc.target}"
        reason = f"{arc.features[0]}: {changed[0]}" if changed else "?"
        if not out.get(key, "").endswith("items"):
            out[key] = f"{out[key]}, {reason}" if key in out else reason
    return out


def _rule_reason(words, subj, target) -> str:
    """The first rule of relation_arcs that leaves the arc out, read from the words."""
    by_id = {w["id"]: w for w in words}
    head = by_id[subj["head"]]
    children = lambda w, rels: [c for c in words if c["head"] == w["id"] and c["deprel"] in rels]
    sf, tf = _feats(subj), _feats(target)
    if target is not head:
        hf = _feats(head)
        if head["upos"] in ("VERB", "AUX") and hf.get("VerbForm", "Fin") == "Fin":
            return "auxiliary of a finite head"
    if [c for c in words if c["head"] == subj["id"] and c["deprel"].split(":")[0] == "conj"]:
        return "coordinated"
    if {"Rel", "Int"} & set(sf.get("PronType", "").split(",")):
        return "relative_or_interrogative"
    if children(head, {"expl", "expl:subj", "expl:impers"}):
        return "expletive"
    if children(subj, {"fixed"}) or children(target, {"fixed"}):
        return "fixed"
    if target is not head and len(children(head, SUBJ)) > 1:
        return "several_subjects"
    if tf.get("VerbForm") not in (None, "Fin"):
        return f"target VerbForm={tf.get('VerbForm')}"
    return "not a candidate (other)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebank", type=Path)
    parser.add_argument("items", type=Path)
    parser.add_argument("--rule", choices=("en", "tr"), required=True)
    parser.add_argument("--misses", type=int, default=0, help="say why arcs are missed and print this many")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    wanted = list(arcs(args.treebank, args.rule))
    have = item_arcs(args.items)
    reached = sum(1 for a, *_ in wanted if a in have)
    share = 100 * reached / len(wanted) if wanted else 0.0
    print(f"reach_proxy {args.rule}: {reached} of {len(wanted)} arcs are items ({share:.1f}%)")
    if not args.misses:
        return
    mined = _mined_reasons(args.treebank, args.rule)
    missed = []
    for key, words, subj, target in wanted:
        if key in have:
            continue
        a, b = key.rsplit(":", 1)[1].split("-")
        why = "one token" if a == b else mined.get(key) or _rule_reason(words, subj, target)
        missed.append((why, key, words, subj, target))
    for why, n in Counter(m[0] for m in missed).most_common():
        print(f"{n:6d}  {why}")
    for why, key, words, subj, target in random.Random(args.seed).sample(missed, min(args.misses, len(missed))):
        text = " ".join(f"[{w['form']}]" if w is subj or w is target else w["form"] for w in words)
        print(f"- {why} | {subj['form']} -> {target['form']} ({target['lemma']} {target['feats']}) | {text}")


if __name__ == "__main__":
    main()
