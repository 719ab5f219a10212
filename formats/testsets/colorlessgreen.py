"""The paper's test-set files (Gulordava et al. 2018), written and read.

A test set in that format is four files sharing a prefix (``generated``):

``.text``  one sentence per row, words separated by spaces, ending in ``<eos>``;
``.gold``  per row, tab-separated: pattern id (``L!NOUN_VERB_VERB!Number=Plur!Number=Sing``),
           construction id, variant id (0 = original), target index, target POS,
           target features, correct form, wrong form, lemma, cue index, cue POS,
           and a free field (the paper's English files: the words up to the
           target; Italian: the POS sequence from cue to target);
``.eval``  per row, the target index;
``.tab``   two rows per sentence (correct form, then wrong form), with a header:
           pattern (``L__NOUN_VERB_VERB``), constr_id, sent_id, correct_number
           (``sing``/``plur``), form, class (correct/wrong), type
           (original/generated), prefix, n_attr, punct (True/False), freq,
           len_context (target index - cue index: one more than the words
           between, as the paper counts), len_prefix, sent (the ``.text`` row; quoted CSV-style
           when it holds a ``"``), and (Italian files) full_id.

:func:`write_colorlessgreen` writes our items that way (``freq`` is the form's
count in the frequencies given, the treebank's by default in ``agree extract``:
the paper's is the LM training corpus's). :func:`read_colorlessgreen` turns
the paper's files into :class:`Item` records so that their test sets can be
scored like ours. Their files do not give the POS and features of most words:
those are ``_`` except for the cue and target (and, in the Italian files, the
POS from cue to target). Their nonce rows carry in ``.text`` a target word
other than the forms they score; our items put the correct form at the target
position (the paper's word is kept in ``item.extra["text_target"]``).
"""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from formats.errors import AgreeError
from formats.tsv import checked_rows, header_of
from formats.items import Item
from formats.testsets.registry import TestSet, TestSetFormat, register
from treebanks.features import format_feats, parse_feats

SUFFIXES = (".text", ".gold", ".eval", ".tab")
TAB_COLUMNS = ("pattern", "constr_id", "sent_id", "correct_number", "form", "class", "type", "prefix",
               "n_attr", "punct", "freq", "len_context", "len_prefix", "sent", "full_id")
EOS = "<eos>"


def _prefix(path: str | os.PathLike) -> Path:
    path = Path(path)
    if path.is_dir():
        return path / "generated"
    if path.suffix in SUFFIXES:
        return path.with_suffix("")
    return path


def write_colorlessgreen(items: Iterable[Item], out_dir: str | os.PathLike, *,
                         features: Sequence[str] = ("Number",),
                         frequencies: Mapping[str, int] | None = None,
                         name: str = "generated") -> int:
    """Write ``<out_dir>/<name>.text/.gold/.eval/.tab``; returns the number of sentences."""
    items = list(items)
    prefix = Path(out_dir) / name
    values: dict[tuple, set] = {}
    for it in items:
        values.setdefault((it.direction, it.construction), set()).add(_agreement_feats(it, features))
    pattern_ids = {k: f"{k[0]}!{k[1].replace(' ', '_')}!" + "!".join(sorted(v)) for k, v in values.items()}
    constr_ids: dict[tuple, dict[str, int]] = {}
    freq = frequencies or {}
    with open(f"{prefix}.text", "w", encoding="utf-8", newline="") as text, \
            open(f"{prefix}.gold", "w", encoding="utf-8", newline="") as gold, \
            open(f"{prefix}.eval", "w", encoding="utf-8", newline="") as ev, \
            open(f"{prefix}.tab", "w", encoding="utf-8", newline="") as tab:
        writer = csv.writer(tab, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(TAB_COLUMNS)
        for it in items:
            key = (it.direction, it.construction)
            ids = constr_ids.setdefault(key, {})
            # the paper's own items keep their construction ids; ours are numbered
            cid = ids.setdefault(it.item_id, it.extra.get("constr_id", len(ids)))
            pattern = pattern_ids[key]
            t, c = it.target_index, it.cue_index
            sentence = " ".join(it.tokens) + f" {EOS}"
            text.write(sentence + "\n")
            gold.write("\t".join((pattern, str(cid), str(it.variant), str(t), it.pos[t], it.feats[t],
                                  it.correct, it.wrong, it.lemma, str(c), it.pos[c],
                                  " ".join(it.tokens[:t + 1]))) + "\n")
            ev.write(f"{t}\n")
            for form, cls in ((it.correct, "correct"), (it.wrong, "wrong")):
                # len_context as the paper counts it: target index - cue index
                writer.writerow((f"{it.direction}__{it.construction.replace(' ', '_')}", cid, it.variant,
                                 it.number.lower(), form, cls, "original" if it.variant == 0 else "generated",
                                 " ".join(it.prefix), it.attractors, "True" if it.punct else "False",
                                 freq.get(form, it.extra.get(f"freq_{cls}", 0)), t - c, it.prefix_length, sentence,
                                 f"{pattern}__{cid}__{it.variant}"))
    return len(items)


def _agreement_feats(item: Item, features: Sequence[str]) -> str:
    feats = parse_feats(item.feats[item.target_index])
    picked = {f: feats[f] for f in features if f in feats}
    if not picked:  # no features known: fall back to the number column
        picked = dict(zip(features, item.number.split(",")))
    return format_feats(picked)


def read_colorlessgreen(path_prefix_or_dir: str | os.PathLike,
                        features: Sequence[str] = ("Number",)) -> list[Item]:
    """The paper's ``generated.text/.gold/.tab`` (and ``.eval`` when present) as Items.

    ``item_id`` is ``<pattern>:<constr_id>`` (``L__NOUN_VERB_VERB:0``), shared by an
    original and its nonce variants; ``variant`` is the paper's sent_id;
    ``perturbation`` is ``original`` or ``nonce``. ``extra`` holds the paper's
    ``pattern`` id, ``constr_id``, ``freq_correct``/``freq_wrong`` and ``text_target``."""
    prefix = _prefix(path_prefix_or_dir)
    paths = {s: Path(f"{prefix}{s}") for s in SUFFIXES}
    for s in (".text", ".gold"):
        if not paths[s].exists():
            raise AgreeError(f"{paths[s]}: no such file (expected the paper's generated.text/.gold "
                             "and optionally .eval/.tab)")
    text = _lines(paths[".text"])
    gold = _lines(paths[".gold"])
    evals = _lines(paths[".eval"]) if paths[".eval"].exists() else None
    if not paths[".tab"].exists():
        return read_gold_only(text, gold, evals, paths, features)
    with open(paths[".tab"], encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = [c for c in TAB_COLUMNS[:-1] if c not in (header_of(reader, paths[".tab"]) or [])]
        if missing:
            raise AgreeError(f"{paths['.tab']}:1: missing columns {', '.join(missing)}")
        tab = list(checked_rows(reader, paths[".tab"]))
    if len(gold) != len(text) or len(tab) != 2 * len(text) or (evals is not None and len(evals) != len(text)):
        raise AgreeError(f"{prefix}: row counts disagree (.text {len(text)}, .gold {len(gold)}, "
                         f".tab {len(tab)} = 2 per sentence{'' if evals is None else f', .eval {len(evals)}'})")
    return [_item(i, text[i], gold[i], tab[2 * i], tab[2 * i + 1], evals, paths, features)
            for i in range(len(text))]


def read_gold_only(text: list[str], gold: list[str], evals: list[str] | None, paths: dict,
                   features: Sequence[str] = ("Number",)) -> list[Item]:
    """A ``.text/.gold(/.eval)`` set without ``.tab``: the paper's 12-column ``.gold``
    (its Russian and Hebrew sets) or the Linzen et al. (2016) subset's 4-column one.

    Without ``.tab`` the attractor count and punctuation flag of a 12-column set are
    unknown (0 / False). A 4-column ``.gold`` row is: target index, correct form, wrong
    form, number of attractors; its items are subject-verb pairs (construction
    ``NOUN VERB``, cue unknown: index 0), ``item_id`` ``linzen:<row>``."""
    if len(gold) != len(text) or (evals is not None and len(evals) != len(text)):
        raise AgreeError(f"{paths['.gold'].with_suffix('')}: row counts disagree (.text {len(text)}, "
                         f".gold {len(gold)}{'' if evals is None else f', .eval {len(evals)}'})")
    out = []
    for i, (line, g) in enumerate(zip(text, gold)):
        fields = g.split("\t")
        where = f"{paths['.gold']}:{i + 1}"
        tokens = [w for w in line.split(" ") if w]
        if tokens and tokens[-1] == EOS:
            tokens = tokens[:-1]
        if len(fields) == 12:
            item = _gold12_item(fields, tokens, where, features)
        elif len(fields) == 4:
            item = _linzen_item(i, fields, tokens, where)
        else:
            raise AgreeError(f"{where}: expected 12 tab-separated fields (the paper's .gold) or 4 "
                             f"(target index, correct, wrong, attractors), found {len(fields)}")
        if evals is not None and evals[i].strip() != str(item.target_index):
            raise AgreeError(f"{paths['.eval']}:{i + 1}: target index {evals[i]!r} differs from "
                             f".gold's {item.target_index}")
        out.append(item)
    return out


def _int(text: str, where: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise AgreeError(f"{where}: {what} {text!r} is not an integer") from None


def _gold12_item(fields, tokens, where, features) -> Item:
    pattern, cid, sid, t, tpos, tfeats, correct, wrong, lemma, c, cpos, _free = fields
    cid, sid, t, c = (_int(v, where, w) for v, w in ((cid, "construction id"), (sid, "variant"),
                                                       (t, "target index"), (c, "cue index")))
    if not 0 <= c < t < len(tokens):
        raise AgreeError(f"{where}: cue {c} / target {t} outside the sentence of {len(tokens)} words")
    direction, pos_seq = (pattern.split("!") + [""])[:2]
    pos, feats = ["_"] * len(tokens), ["_"] * len(tokens)
    pos[c], pos[t], feats[t] = cpos, tpos, tfeats
    text_target, tokens[t] = tokens[t], correct
    tf = parse_feats(tfeats)
    return Item(item_id=f"{direction}__{pos_seq}:{cid}", variant=sid,
                construction=pos_seq.replace("_", " "), direction=direction, tokens=tuple(tokens),
                pos=tuple(pos), feats=tuple(feats), correct=correct, wrong=wrong, lemma=lemma,
                number=",".join(tf[f] for f in features if f in tf) or "_", cue_index=c,
                target_index=t, attractors=0, punct=False,
                perturbation="original" if sid == 0 else "nonce",
                extra={"pattern": pattern, "constr_id": cid, "text_target": text_target})


def _linzen_item(i, fields, tokens, where) -> Item:
    t = _int(fields[0], where, "target index")
    attractors = _int(fields[3], where, "number of attractors")
    if not 0 < t < len(tokens):
        raise AgreeError(f"{where}: target {t} outside the sentence of {len(tokens)} words")
    text_target, tokens[t] = tokens[t], fields[1]
    return Item(item_id=f"linzen:{i + 1}", variant=0, construction="NOUN VERB", direction="L",
                tokens=tuple(tokens), pos=("_",) * len(tokens), feats=("_",) * len(tokens),
                correct=fields[1], wrong=fields[2], lemma="_", number="_", cue_index=0,
                target_index=t, attractors=attractors, punct=False, perturbation="original",
                extra={"text_target": text_target})


def _lines(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return [line.rstrip("\r\n") for line in fh]
    except UnicodeDecodeError:
        raise AgreeError(f"{path}: not UTF-8 text") from None


def _item(i, text_line, gold_line, row_a, row_b, evals, paths, features) -> Item:
    where = f"{paths['.gold']}:{i + 1}"
    g = gold_line.split("\t")
    if len(g) != 12:
        raise AgreeError(f"{where}: expected 12 tab-separated fields, found {len(g)}")
    pattern, cid, sid, t, tpos, tfeats, correct, wrong, lemma, c, cpos, free = g
    try:
        cid, sid, t, c = int(cid), int(sid), int(t), int(c)
    except ValueError:
        raise AgreeError(f"{where}: construction, variant, target and cue ids must be integers") from None
    tokens = text_line.split(" ")
    if tokens and tokens[-1] == EOS:
        tokens = tokens[:-1]
    if not 0 <= c < t < len(tokens):
        raise AgreeError(f"{paths['.text']}:{i + 1}: cue {c} / target {t} outside the sentence of {len(tokens)} words")
    if evals is not None and evals[i].strip() != str(t):
        raise AgreeError(f"{paths['.eval']}:{i + 1}: target index {evals[i]!r} differs from .gold's {t}")
    direction, pos_seq = pattern.split("!")[:2]
    rows = {r["class"]: r for r in (row_a, row_b)}
    if set(rows) != {"correct", "wrong"} or rows["correct"]["form"] != correct or rows["wrong"]["form"] != wrong:
        raise AgreeError(f"{paths['.tab']}:{2 * i + 2}: rows do not match .gold row {i + 1} "
                         f"(expected the forms {correct!r} (correct) and {wrong!r} (wrong))")
    r = rows["correct"]
    if (r["constr_id"], r["sent_id"]) != (str(cid), str(sid)):
        raise AgreeError(f"{paths['.tab']}:{2 * i + 2}: ids {r['constr_id']}/{r['sent_id']} "
                         f"differ from .gold's {cid}/{sid}")
    pos = ["_"] * len(tokens)
    span = free.split("_")
    if len(span) == t - c + 1 and span[0] == cpos and span[-1] == tpos and all(p.isupper() for p in span):
        pos[c:t + 1] = span  # the Italian files give the POS from cue to target
    pos[c], pos[t] = cpos, tpos
    feats = ["_"] * len(tokens)
    feats[t] = tfeats
    text_target = tokens[t]
    tokens[t] = correct
    tf = parse_feats(tfeats)
    number = ",".join(tf[f] for f in features if f in tf) or r["correct_number"].capitalize()
    return Item(item_id=f"{r['pattern']}:{cid}", variant=sid, construction=pos_seq.replace("_", " "),
                direction=direction, tokens=tuple(tokens), pos=tuple(pos), feats=tuple(feats),
                correct=correct, wrong=wrong, lemma=lemma, number=number, cue_index=c, target_index=t,
                attractors=int(r["n_attr"]), punct=r["punct"] == "True",
                perturbation="original" if r["type"] == "original" else "nonce",
                extra={"pattern": pattern, "constr_id": cid, "text_target": text_target,
                       "freq_correct": int(r["freq"]), "freq_wrong": int(rows["wrong"]["freq"])})


# --------------------------------------------------------------------------- registry

_GENERATED = ("generated.text", "generated.gold", "generated.eval")


def _recognise(path: Path) -> Path | None:
    """A directory holding generated.text and .gold, one of those files, or a prefix."""
    if path.is_dir():
        return path / "generated" if all((path / f).is_file() for f in _GENERATED[:2]) else None
    if path.is_file():
        if path.name in _GENERATED or (path.suffix in (".text", ".gold", ".eval")
                                       and path.with_suffix(".gold").is_file()):
            return path.with_suffix("")
        return None
    return path if path.with_name(path.name + ".gold").is_file() else None


def _read(path: Path, label: str, **_options) -> TestSet:
    return TestSet(label, "colorlessgreen", tuple(read_colorlessgreen(path)))


def _resolve(path: Path) -> Path:
    """The prefix of a set named with ``--format colorlessgreen``; a file that is not one
    of the set's is an error saying so (it has no ``FILE.text`` to look for)."""
    if path.is_file() and path.suffix not in SUFFIXES:
        raise AgreeError(f"{path}: not one of the paper's set files (colorlessgreen reads a directory "
                         "holding generated.text and generated.gold, the prefix .../generated, or one "
                         f"of its {'/'.join(SUFFIXES)} files)")
    return _prefix(path)


FORMAT = register(TestSetFormat(
    "colorlessgreen", "the paper's generated.text/.gold/.eval set (a directory, the prefix "
    ".../generated, or one of those files; with or without .tab)",
    _recognise, _read, resolve=_resolve, suffixes=SUFFIXES))
