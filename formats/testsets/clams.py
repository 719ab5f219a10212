"""CLAMS (Mueller et al. 2020, Cross-Linguistic Assessment of Models on Syntax) as
published: ``xx_evalset/<suite>.txt``, headerless, one sentence per line after
``True`` or ``False`` and a tab; each ``True`` line is followed by its ``False``
partner (a grammatical sentence may come twice, once per ungrammatical partner).

A TESTSET is one suite file, a directory of suites (``en_evalset``), or a directory of
such directories. Each pair becomes an Item by
:func:`formats.testsets.blimp.pair_item`, the sentences exactly as published; the
construction is ``<lang> <suite>`` (``en obj_rel_across_anim``); the language is the
``xx`` of the ``xx_evalset`` folder, or ``lang`` when given (``--lang``).

Attractors (where derivable): the files mark no number, so it is inferred from the
pairs of all suites read together (:class:`NumberInference`): the two forms at a pair's
target differ in number; a word that, within a suite, occurs only with target forms of
one number (a subject noun with *laughs*, *is*, *likes*) has that number (words before
the target only: what follows it does not bear on agreement). An item
gets 1 attractor when a word before its target, itself never a target form, has the
other number than the correct form (M&L's and CLAMS's conditions have at most one such
noun: the intervening noun of ``across`` suites, the outer subject of ``within`` and
sentential-complement suites); 0 otherwise, which includes "unknown" (a noun whose
plural is its singular, German *Wächter*). Pairs whose target is the first word (the
NPI suites) are left out of the inference. The notes give the items with an attractor.
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Iterator

from formats.errors import AgreeError
from formats.items import Item
from formats.testsets.blimp import PairSkips, pair_item
from formats.testsets.registry import TestSet, TestSetFormat, must_exist, register

_EVALSET = re.compile(r"^([A-Za-z]{2,3})_evalset$")
_LABELS = ("True", "False")


def clams_files(path: Path) -> list[Path]:
    """The suite files of a TESTSET: the file, a directory's ``.txt`` files, or those of
    its ``xx_evalset`` subdirectories; sorted."""
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.iterdir() if p.suffix == ".txt" and p.is_file())
    if files:
        return files
    return [f for d in sorted(path.iterdir()) if d.is_dir() and _EVALSET.match(d.name)
            for f in clams_files(d)]


def language_of(path: Path, lang: str | None = None) -> str:
    """``lang`` when given, else the ``xx`` of the enclosing ``xx_evalset`` folder, else ""."""
    if lang:
        return lang
    m = _EVALSET.match(path.parent.name)
    return m.group(1).lower() if m else ""


def read_suite_pairs(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line of the True sentence, grammatical, ungrammatical) for every pair of a suite
    file; :class:`AgreeError` naming FILE:LINE for a line that is not ``True|False<TAB>text``,
    a True line without its False partner, or a False line without a True one before it."""
    pending: tuple[int, str] | None = None
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            label, tab, sentence = line.partition("\t")
            if not tab or label not in _LABELS or not sentence.strip():
                raise AgreeError(f"{path}:{lineno}: not a CLAMS line (expected True or False, a tab, "
                                 f"then the sentence; found {line[:40]!r})")
            if label == "True":
                if pending is not None:
                    raise AgreeError(f"{path}:{pending[0]}: True sentence without its False partner "
                                     f"(line {lineno} is True again)")
                pending = (lineno, sentence)
            elif pending is None:
                raise AgreeError(f"{path}:{lineno}: False sentence without a True sentence before it")
            else:
                yield pending[0], pending[1], sentence
                pending = None
    if pending is not None:
        raise AgreeError(f"{path}:{pending[0]}: True sentence without its False partner (the file ends)")


class NumberInference:
    """Words' grammatical number, up to one global flip per connected group, from minimal
    pairs (module docstring). Union-find over word nodes with the parity (0 same number,
    1 other number) of each node to its parent."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.flip: dict[str, int] = {}
        self.words: set[str] = set()  # words given a number
        self.bad: set[str] = set()    # words whose evidence contradicts itself

    def find(self, x: str) -> tuple[str, int]:
        path = []
        while self.parent.get(x, x) != x:
            path.append(x)
            x = self.parent[x]
        parity = 0
        for node in reversed(path):  # compress: point every node on the path at the root
            parity ^= self.flip[node]
            self.parent[node], self.flip[node] = x, parity
        return (x, self.flip[path[0]]) if path else (x, 0)

    def union(self, a: str, b: str, parity: int) -> bool:
        """Say ``a`` and ``b`` differ in number (1) or not (0); False on a contradiction."""
        (ra, pa), (rb, pb) = self.find(a), self.find(b)
        if ra == rb:
            return pa ^ pb == parity
        self.parent[rb], self.flip[rb] = ra, pa ^ pb ^ parity
        return True

    def learn(self, pairs: list[tuple]) -> set[str]:
        """Infer from ``pairs`` of (suite, words, target index, correct, wrong); returns
        the target forms."""
        forms: set[str] = set()
        usable = [p for p in pairs if p[2] > 0]
        for _, _, _, correct, wrong in usable:
            forms.add(correct)
            forms.add(wrong)
        for correct, wrong in sorted({(p[3], p[4]) for p in usable}):
            self.union("t:" + correct, "t:" + wrong, 1)
        # suite -> word before a target -> the correct forms it occurs with
        seen: dict[int, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for suite, words, t, correct, _ in usable:
            before = seen[suite]
            for w in words[:t]:
                before[w].add(correct)
        for suite in sorted(seen):
            for word, targets in sorted(seen[suite].items()):
                if word in forms or not self._one_number(targets):
                    continue
                self.words.add(word)
                if not all(self.union("w:" + word, "t:" + t, 0) for t in sorted(targets)):
                    self.bad.add(word)
        return forms

    def _one_number(self, targets: set[str]) -> bool:
        """The forms never include both numbers of one paradigm (as linked so far)."""
        first: dict[str, int] = {}
        for t in targets:
            root, parity = self.find("t:" + t)
            if first.setdefault(root, parity) != parity:
                return False
        return True

    def numbers(self, forms: set[str]) -> tuple[dict, dict]:
        """(target form -> (group, number), word -> (group, number)) for the words
        given a number consistently, target forms left out (the lookups of
        :func:`attractors`)."""
        targets = {t: self.find("t:" + t) for t in forms}
        words = {w: self.find("w:" + w) for w in self.words - self.bad - forms}
        return targets, words


def attractors(words: list[str], t: int, correct: str, numbers: tuple[dict, dict]) -> int:
    """1 when a word before the target has the other number than the correct form."""
    target, known = numbers
    root, parity = target.get(correct, (None, 0))
    for w in words[:t]:
        r, p = known.get(w, (None, parity))
        if r == root and p != parity:
            return 1
    return 0


def read_clams(path: Path, lang: str | None = None, skips: PairSkips | None = None) -> list[Item]:
    """The Items of a CLAMS TESTSET (module docstring), with attractors where derivable."""
    files = clams_files(path)
    if not files:
        raise AgreeError(f"{path}: no CLAMS suite files (.txt, or xx_evalset directories holding them)")
    skips = skips if skips is not None else PairSkips()
    read: list[tuple[Path, list]] = []  # per file, its (good, bad) sentences
    pairs: list[tuple] = []             # what the number inference reads: whitespace words suffice
    for suite, f in enumerate(files):
        skips.files.append(f)
        sentences = []
        for _, good, bad in read_suite_pairs(f):
            g, b = good.split(), bad.split()
            t = 0  # the first differing word
            for x, y in zip(g, b):
                if x != y:
                    break
                t += 1
            sentences.append((good, bad))
            pairs.append((suite, g, t, g[t] if t < len(g) else "", b[t] if t < len(b) else ""))
        read.append((f, sentences))
    inference = NumberInference()
    numbers = inference.numbers(inference.learn(pairs))
    agree = ({"agree_attractors": 0}, {"agree_attractors": 1})
    items, k = [], 0
    for f, sentences in read:
        language = language_of(f, lang)
        construction = f"{language} {f.stem}" if language else f.stem
        prefix, extra = construction.replace(" ", ":"), {"suite": f.stem, "lang": language}
        for n, (good, bad) in enumerate(sentences):  # pair_item copies extra: one dict per file
            _, g, t, correct, _ = pairs[k]
            k += 1
            item = pair_item(f"{prefix}:{n}", construction, good, bad, extra=extra,
                             agree=agree[attractors(g, t, correct, numbers)])
            skips.keep(item, items)
    return items


def _recognise(path: Path) -> Path | None:
    """A ``.txt`` file (or a directory of them, or of ``xx_evalset`` folders) whose first
    line is ``True`` or ``False``, a tab and a sentence."""
    files = clams_files(path) if path.exists() else []
    if not files or files[0].suffix != ".txt":
        return None
    try:
        with open(files[0], encoding="utf-8") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return None
    label, tab, rest = first.partition("\t")
    return path if tab and label in _LABELS and rest.strip() else None


def _read(path: Path, label: str, lang: str | None = None, **_options) -> TestSet:
    skips = PairSkips()
    items = read_clams(path, lang, skips)
    attracted = sum(it.attractors > 0 for it in items)
    notes = [f"{label}: {n}" for n in skips.notes()]
    info = [f"{label}: {len(items)} CLAMS pairs from {len(skips.files)} suite(s); {attracted} "
            "with an attractor (a word of the other number before the target, inferred from the pairs)"]
    return TestSet(label, "clams", tuple(items), notes=tuple(notes), info=tuple(info))


FORMAT = register(TestSetFormat(
    "clams", "CLAMS suites: True/False<TAB>sentence .txt files (a file, an xx_evalset "
    "directory, or a directory of them)", _recognise, _read, resolve=must_exist,
    files=lambda p: clams_files(p) if p.exists() else [p], suffixes=(".txt",)))
