"""Score runs for the ``agree browse`` tests: a tiny test set of agreement items (with
POS and features, so attractors can be marked) and their nonce variants, scored by a
real unigram model (with --surprisal) and a real 3-gram KenLM model when lmplz is built."""
from __future__ import annotations

import base64
import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import run_agree, tiny_corpus
from formats.items import Item, write_items

#: (prefix words with their POS and Number, correct, wrong, cue index, attractors)
SENTENCES = [
    ("the key to the cabinets", "is", "are", 1, 1),
    ("the keys to the cabinet", "are", "is", 1, 1),
    ("the dog", "runs", "run", 1, 0),
    ("the dogs near the cat", "run", "runs", 1, 1),
    ("the cat near the dogs", "runs", "run", 1, 1),
    ("the cats", "run", "runs", 1, 0),
]
NOUNS = {"key": "Sing", "keys": "Plur", "cabinet": "Sing", "cabinets": "Plur", "dog": "Sing", "dogs": "Plur",
         "cat": "Sing", "cats": "Plur", "pen": "Sing", "pens": "Plur", "box": "Sing", "boxes": "Plur"}
#: nonce swaps: a noun by another of its number
SWAP = {"key": "pen", "keys": "pens", "cabinet": "box", "cabinets": "boxes", "dog": "box", "dogs": "boxes",
        "cat": "pen", "cats": "pens"}
LINES = ["the dog runs .", "the dogs run .", "the key to the cabinets is here .", "the keys are here .",
         "the cat near the dogs runs .", "the cats run .", "the pen is here .", "the boxes are here .",
         "the box is here ."] * 3   # "is" and "runs" more frequent: the unigram gets their pairs wrong


def _tag(word: str) -> tuple[str, str]:
    if word in NOUNS:
        return "NOUN", f"Number={NOUNS[word]}"
    if word in ("is", "are", "runs", "run"):
        return "VERB", "Number=" + ("Sing" if word in ("is", "runs") else "Plur")
    return ("DET" if word == "the" else "ADP" if word in ("to", "near") else "PUNCT"), "_"


def make_items() -> list[Item]:
    """Each sentence (variant 0) and two nonce variants (every noun swapped, then the cue only)."""
    out = []
    for n, (prefix, correct, wrong, cue, attractors) in enumerate(SENTENCES):
        words = prefix.split() + [correct, "."]
        variants = [words, [SWAP.get(w, w) for w in words],
                    [SWAP.get(w, w) if i == cue else w for i, w in enumerate(words)]]
        for v, toks in enumerate(variants):
            tags = [_tag(w) for w in toks]
            out.append(Item(f"s{n}", v, "NOUN VERB", "L", tuple(toks), tuple(t[0] for t in tags),
                            tuple(t[1] for t in tags), correct, wrong, correct, NOUNS[words[cue]][:4], cue,
                            len(toks) - 2, attractors, True, "original" if v == 0 else "nonce"))
    return out


@pytest.fixture(scope="module")
def score_runs(tmp_path_factory):
    """{name: score dir} over one test set: ``uni`` (unigram, --surprisal) and, when
    lmplz is built, ``kn`` (3-gram KenLM); and the test set's directory as ``testset``."""
    from lm.corpus.prepare import load_corpus
    from lm.errors import LMError
    from lm.unigram import train_unigram

    root = tmp_path_factory.mktemp("browse")
    corpus = load_corpus(tiny_corpus(root / "corpus", LINES))
    train_unigram(corpus, root / "m-uni")
    (root / "ext").mkdir()
    write_items(root / "ext" / "items.tsv", make_items())
    runs = {"testset": root / "ext"}
    r = run_agree("score", root / "ext", "--model", root / "m-uni", "--surprisal", "--out", root / "uni", "-q")
    assert r.exit_code == 0, r.stderr
    runs["uni"] = root / "uni"
    try:
        import kenlm  # noqa: F401
        from lm.kenlm.scorer import train_kn5
        train_kn5(corpus, root / "m-kn", order=3)
    except (ImportError, LMError):
        return runs
    r = run_agree("score", root / "ext", "--model", root / "m-kn", "--out", root / "kn", "-q")
    assert r.exit_code == 0, r.stderr
    runs["kn"] = root / "kn"
    return runs


def read_script(path: Path):
    """The JSON a page data file assigns (``window.NAME = {...};``)."""
    text = path.read_text(encoding="utf-8")
    return json.loads(re.match(r"window\.\w+ = (.*);\n\Z", text, re.S).group(1))


def page_columns(page: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """A page's meta and its decoded columns."""
    meta, raw = read_script(page / "data" / "meta.js"), read_script(page / "data" / "columns.js")
    return meta, {k: np.frombuffer(base64.b64decode(v["b64"]), dtype="<" + v["dtype"]) for k, v in raw.items()}


def page_text(page: Path) -> list[list]:
    """Every row's words, chunk after chunk."""
    rows = []
    for f in sorted((page / "data" / "text").glob("t*.js")):
        body = f.read_text(encoding="utf-8")
        rows += json.loads(body[body.index(",") + 1:body.rindex(")")])
    return rows


def scored_rows(score_dir: Path) -> list[dict]:
    with open(score_dir / "items.tsv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
