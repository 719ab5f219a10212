"""Reach proxy for issue 41: of a treebank's subject-verb arcs that agree, the share that
are items of an extract (or extract-all language) directory.

English (EWT): a subject (nsubj, nsubj:pass) with Number, and a finite present verb or
auxiliary that agrees with it in Number: its VERB/AUX head, or a finite AUX child (aux, cop)
of that head. Turkish (BOUN): a finite verb (VerbForm=Fin, or a verb carrying Person) with a
NOUN, PROPN or PRON subject. An arc is reached when an item of relation subj-verb has the
same file, sentence, cue and target (the item id), whatever its feature.

    python scripts/reach_proxy.py ../shared/data/ud/en_ewt OUT/en/items.tsv --rule en
"""
import argparse
import csv
import gzip
import sys
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


def arcs(folder: Path, rule: str):
    """(item-id prefix) of every arc the rule selects, in file order."""
    pick = _en_targets if rule == "en" else _tr_targets
    for path in sorted(folder.glob("*.conllu*")):
        stem = path.name.split(".conllu")[0]
        with _open(path) as handle:
            for sentence in conllu.parse_incr(handle):
                words = [w for w in sentence if isinstance(w["id"], int)]
                index = {w["id"]: i for i, w in enumerate(words)}
                by_id = {w["id"]: w for w in words}
                for subj in words:
                    if subj["deprel"] not in SUBJ or subj["head"] not in by_id:
                        continue
                    for t in pick(words, subj, by_id[subj["head"]]):
                        sid = sentence.metadata.get("sent_id", "")
                        yield f"{stem}:{sid}:{index[subj['id']]}-{index[t['id']]}"


def item_arcs(items: Path) -> set:
    csv.field_size_limit(sys.maxsize)
    with open(items, encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return {r["item_id"].rsplit(":", 1)[0] for r in rows
                if r.get("relation") == "subj-verb" and r.get("variant", "0") == "0"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebank", type=Path)
    parser.add_argument("items", type=Path)
    parser.add_argument("--rule", choices=("en", "tr"), required=True)
    args = parser.parse_args()
    wanted = list(arcs(args.treebank, args.rule))
    have = item_arcs(args.items)
    reached = sum(1 for a in wanted if a in have)
    share = 100 * reached / len(wanted) if wanted else 0.0
    print(f"reach_proxy {args.rule}: {reached} of {len(wanted)} arcs are items ({share:.1f}%)")


if __name__ == "__main__":
    main()
