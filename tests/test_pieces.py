"""Text -> token ids + offsets -> words (lm/pieces.py) and shared openings
(lm/openings.py), engine-agnostic."""
from __future__ import annotations

import zlib

import itertools
import random

import numpy as np
import pytest

from lm.base import TargetQuery, Words
from lm.errors import FieldError, LMError
from lm.openings import group_openings, tokens_read
from lm.pieces import attribute, check_convention, encode, offsets_from_pieces, word_sums


def _toy_tokenize(text: str, special: bool = False):
    """A tokenizer with byte-level-BPE habits: a leading space joins the next piece,
    runs of letters split into pieces of at most 3, a mark is a piece of its own;
    ``special`` adds id 900 (BOS) first."""
    ids, offsets, i = [], [], 0
    while i < len(text):
        j = i + 1 if text[i] == " " else i
        if j < len(text) and text[j].isalpha():
            k = j
            while k < len(text) and text[k].isalpha() and k - j < 3:
                k += 1
        else:
            k = j + 1
        ids.append(10 + zlib.crc32(text[i:k].encode()) % 790)   # stable; never BOS 7 or 900
        offsets.append((i, k))
        i = k
    if special:
        return [900] + ids, [(0, 0)] + offsets
    return ids, offsets


def test_attribution_by_first_character():
    text = "Kat don't run."
    spans = [(0, 3), (4, 6), (6, 9), (10, 13), (13, 14)]   # Kat do n't run .
    # pieces: "Kat", " don" (crosses into n't), "'t", " ", "run", "."
    offsets = [(0, 3), (3, 7), (7, 9), (9, 10), (10, 13), (13, 14), (0, 0)]
    assert attribute(offsets, spans, text) == [0, 1, 2, 3, 3, 4, -1]


def test_conventions_strings_and_owners():
    words = Words(("Katherine", "can't", "help", "herself", "."), (True, True, True, False, False))
    agree = encode(_toy_tokenize, words, words.space_after, "agree", 7)
    assert agree.text == "Katherine can't help herself." and agree.ids[0] == 7 and agree.first == 1
    assert agree.owner[0] == -1 and agree.owner[-1] == 4 and sorted(set(agree.owner[1:])) == [0, 1, 2, 3, 4]
    lmeval = encode(_toy_tokenize, words, words.space_after, "lm-eval", 7)
    assert lmeval.text == " Katherine can't help herself." and lmeval.owner[1] == 0
    mini = encode(_toy_tokenize, words, words.space_after, "minicons", 7)
    assert mini.ids[0] == 900 and mini.owner[0] == -1 and mini.first == 1 and 7 not in mini.ids
    old = encode(_toy_tokenize, words, words.space_after, "words", 7)
    assert old.text == "Katherine can't help herself ." and old.ids[0] == 7
    assert old.ids[-1] == _toy_tokenize(" .")[0][0]                 # "." read as a word of its own
    plain = encode(_toy_tokenize, ("the", "dogs", "run"), None, "agree", 7)
    assert plain.text == "the dogs run"                                # no flags: single spaces


def test_word_sums_add_up_to_the_sentence():
    words = Words(("They", "don't", "run", "."), (True, True, False, False))
    enc = encode(_toy_tokenize, words, words.space_after, "agree", 7)
    lp = -np.arange(1, len(enc.ids), dtype=float)
    per_word = word_sums(enc, lp, len(words))
    assert per_word.sum() == pytest.approx(lp.sum()) and (per_word < 0).all()


def test_offsets_from_piece_bytes():
    text = "Perché l'uomo"
    pieces = [b"Per", "ché".encode(), b" l", b"'", "uomo".encode()]
    assert offsets_from_pieces(text, pieces) == [(0, 3), (3, 6), (6, 8), (8, 9), (9, 13)]
    # a sentencepiece leading space belongs to the first word
    assert offsets_from_pieces("ab", [b" a", b"b"]) == [(0, 1), (1, 2)]
    # a character split across pieces (byte fallback) stays with the piece it starts in
    assert offsets_from_pieces("é", [b"\xc3", b"\xa9"]) == [(0, 1), (0, 1)]
    with pytest.raises(LMError, match="do not spell the text"):
        offsets_from_pieces("abc", [b"ab", b"d"])


def test_bad_input_and_unknown_conventions():
    with pytest.raises(LMError, match="empty sentence"):
        encode(_toy_tokenize, (), None, "agree", 7)
    with pytest.raises(FieldError, match="unknown"):
        check_convention("peers")
    with pytest.raises(FieldError, match="sentences only"):
        check_convention("minicons", "target")
    assert check_convention("lm-eval", "target") == "lm-eval"


def test_words_pickle_keeps_spacing():
    import pickle

    w = Words(("a", "b", "."), (True, False, False))
    back = pickle.loads(pickle.dumps(w))
    assert back == ("a", "b", ".") and back.space_after == (True, False, False)
    assert TargetQuery(w, 1, ("b", "c")).space_after is None          # a field of its own


def test_group_openings_is_exact_and_covers_everything():
    """Every sequence in exactly one group; each member keeps a token of its own; the
    grouping reads no more tokens than any other cut of the sorted order (brute force)."""
    rng = random.Random(3)
    for _ in range(30):
        seqs = [[0] + [rng.randrange(3) for _ in range(rng.randrange(1, 6))] for _ in range(rng.randrange(1, 7))]
        groups = group_openings(seqs, max_group=4, min_shared=1)
        assert sorted(m for g in groups for m in g.members) == list(range(len(seqs)))
        for g in groups:
            first = seqs[g.members[0]]
            assert all(seqs[m][:g.shared] == first[:g.shared] for m in g.members)
            if len(g.members) > 1:
                assert all(len(seqs[m]) > g.shared for m in g.members)
        order = sorted(range(len(seqs)), key=lambda i: (seqs[i], i))
        best = min(_cost(seqs, order, cuts) for cuts in _cuts(len(seqs), 4))
        assert tokens_read(seqs, groups) == best


def _cuts(n, k):
    for bits in itertools.product([0, 1], repeat=max(n - 1, 0)):
        runs, start = [], 0
        for i, b in enumerate(bits, start=1):
            if b:
                runs.append((start, i))
                start = i
        runs.append((start, n))
        if all(b - a <= k for a, b in runs):
            yield runs


def _cost(seqs, order, runs):
    total = 0
    for a, b in runs:
        members = [seqs[i] for i in order[a:b]]
        if len(members) == 1:
            total += len(members[0])
            continue
        c = min(len(m) for m in members) - 1
        for m in members[1:]:
            c = min(c, next((i for i, (x, y) in enumerate(zip(members[0], m)) if x != y), len(m)))
        total += sum(len(m) for m in members) - (len(members) - 1) * max(c, 0)
    return total
