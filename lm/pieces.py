"""Text -> token ids + character offsets -> words: what a subword model reads, and
which word each of its pieces belongs to. One step shared by every subword engine
(transformers, llama.cpp, vLLM): an engine supplies only its tokenizer.

The string a model reads is set by a **convention** (``--convention``):

=========== ===================================================================
agree       (default) BOS + the text as written (the items' spacing: ``herself.``,
            ``don't``), tokenized once; every piece after BOS is scored. The same
            string and scores as minicons' ``sequence_score(..., bos_token=True)``.
lm-eval     BOS + ``" "`` + the text as written: lm-evaluation-harness's BLiMP
            request (empty context, the target delimiter before the sentence), so
            its first word reads ``ĠKatherine``, not ``K`` + ``atherine``.
minicons    minicons' default (``bos_token=False``): the text as written with the
            tokenizer's own special tokens (``add_special_tokens=True``; none for
            GPT-2 or SmolLM2), no BOS of ours; the first token only conditions
            (it is never scored). Sentence method only.
words       the tokenized words (agree before 0.2): BOS + words joined by single
            spaces, word 0 encoded alone and word i>0 as ``" " + word``, so no
            piece crosses a word (``herself .``). For comparisons.
=========== ===================================================================

Word attribution: a piece belongs to the word holding its first non-space
character (a space-only piece, to the word after it); special tokens belong to
none (-1). Word-level values (a word's log-prob, ``tokens.tsv``'s pieces) are the
sums over the pieces a word owns, so they add up to the sentence's exactly. A piece
that crosses a word boundary (``don`` of ``don't`` = ``do`` + ``n't``) belongs to
the word it starts in.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from formats.spacing import render, word_spans
from lm.errors import FieldError, LMError, literal

#: name -> what the model reads (the manifest's ``scoring.text``)
CONVENTIONS = {
    "agree": "BOS + the text as written (the items' spacing), tokenized once; every piece "
             "after BOS scored (= minicons sequence_score with bos_token=True)",
    "lm-eval": "BOS + ' ' + the text as written (lm-evaluation-harness: empty context, target "
               "delimiter ' ' before the sentence); every piece after BOS scored",
    "minicons": "the text as written with the tokenizer's own special tokens, no BOS added; the "
                "first token conditions only (minicons sequence_score default, bos_token=False)",
    "words": "BOS + the words joined by single spaces, each word encoded alone (' ' + word after "
             "the first): no piece crosses a word",
}
DEFAULT = "agree"

#: a tokenizer as the engines give it: text -> (ids, (start, end) character offsets);
#: ``special=True`` asks for the tokenizer's own special tokens (offsets (0, 0))
Tokenize = Callable[..., tuple[Sequence[int], Sequence[tuple[int, int]]]]


def check_convention(name: str, method: str | None = None) -> str:
    """``name`` when known (and usable with ``method``); :class:`FieldError` otherwise."""
    if name not in CONVENTIONS:
        raise FieldError(f"{{convention}} {literal(repr(name))}: unknown (known: {', '.join(CONVENTIONS)})")
    if name == "minicons" and method == "target":
        raise FieldError("{convention} minicons scores whole sentences only (its first token is "
                         "never scored); use {method} sentence")
    return name


def spaces_of(words: Sequence[str], space_after: Sequence[bool] | None) -> tuple[bool, ...]:
    """The flags, or single spaces between the words when none are given."""
    if space_after is not None and len(space_after) == len(words):
        return tuple(space_after)
    return tuple(i < len(words) - 1 for i in range(len(words)))


@dataclass(frozen=True)
class Encoded:
    """One sentence as a model reads it.

    ids    the token ids fed, BOS (or the tokenizer's own specials) included
    owner  per id, the index of the word it belongs to; -1 for BOS/special tokens
    first  the first position whose log-prob is scored (1: after BOS)
    text   the string that was tokenized (the convention's)
    """
    ids: tuple[int, ...]
    owner: tuple[int, ...]
    first: int
    text: str

    def word_pieces(self, n_words: int, to_str: Callable[[int], str]) -> list[list[str]]:
        """Per word, the pieces it owns (as ``to_str`` spells an id), scored or not."""
        out: list[list[str]] = [[] for _ in range(n_words)]
        for i, w in zip(self.ids, self.owner):
            if w >= 0:
                out[w].append(to_str(i))
        return out


def attribute(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]],
              text: str) -> list[int]:
    """Owner word of each piece (rule in the module docstring)."""
    starts = [s for s, _ in spans]
    owners = []
    for s, e in offsets:
        if e <= s:
            owners.append(-1)
            continue
        p = s
        while p < e and text[p].isspace():
            p += 1
        w = max(bisect.bisect_right(starts, p) - 1, 0)
        if p >= spans[w][1] and w + 1 < len(spans):  # in the gap after word w
            w += 1
        owners.append(w)
    return owners


def encode(tokenize: Tokenize, words: Sequence[str], space_after: Sequence[bool] | None,
           convention: str, bos: int | None) -> Encoded:
    """One sentence under ``convention``; ``bos`` is the id the convention prepends
    (None: nothing is prepended and every piece is scored, for masked models, whose
    caller adds the tokenizer's frame)."""
    words = list(words)
    if not words or any(not w for w in words):
        raise LMError("an empty sentence or an empty word cannot be scored")
    if convention == "words":
        return _encode_words(tokenize, words, bos)
    flags = spaces_of(words, space_after)
    text, spans = render(words, flags), word_spans(words, flags)
    if convention == "lm-eval":
        text, spans = " " + text, [(s + 1, e + 1) for s, e in spans]
    special = convention == "minicons"
    ids, offsets = tokenize(text, special=special)
    ids = list(ids)
    if not ids:
        raise LMError(f"the tokenizer gives no piece for {text!r}")
    owner = attribute(offsets, spans, text)
    if special:
        return Encoded(tuple(ids), tuple(owner), 1, text)
    if bos is None:
        return Encoded(tuple(ids), tuple(owner), 0, text)
    return Encoded((bos, *ids), (-1, *owner), 1, text)


def _encode_words(tokenize: Tokenize, words: list[str], bos: int | None) -> Encoded:
    ids, owner = ([], []) if bos is None else ([bos], [-1])
    for i, w in enumerate(words):
        piece_ids, _ = tokenize(w if i == 0 else " " + w, special=False)
        if not piece_ids:
            raise LMError(f"the tokenizer gives no piece for {w!r}")
        ids += piece_ids
        owner += [i] * len(piece_ids)
    return Encoded(tuple(ids), tuple(owner), 0 if bos is None else 1, " ".join(words))


#: sentences whose encodings a scorer keeps (tokenizing is a few percent of scoring time)
ENCODING_CACHE = 200_000


class EncodingCache:
    """The text -> pieces step of a subword scorer, cached: the scorer supplies
    ``tokenize`` (:data:`Tokenize`), ``convention`` and ``prepend`` (the id the convention
    prepends; None: nothing), and keeps ``_enc = {}`` and ``skipped_unencodable = 0``."""

    prepend: int | None = None

    def encoded(self, words: Sequence[str], space_after=None) -> Encoded:
        """The sentence as this model reads it (cached); ``space_after`` defaults to the
        flags ``words`` carries (:class:`lm.base.Words`)."""
        flags = space_after if space_after is not None else getattr(words, "space_after", None)
        key = (tuple(words), flags)
        enc = self._enc.get(key)
        if enc is None:
            enc = encode(self.tokenize, list(words), flags, self.convention, self.prepend)
            if len(self._enc) >= ENCODING_CACHE:
                self._enc.clear()
            self._enc[key] = enc
        return enc

    def try_encoded(self, words: Sequence[str], space_after=None) -> Encoded | None:
        """:meth:`encoded`, or None (counted) for a sentence that cannot be encoded."""
        try:
            return self.encoded(words, space_after)
        except LMError:
            self.skipped_unencodable += 1
            return None


def offsets_from_pieces(text: str, pieces: Sequence[bytes]) -> list[tuple[int, int]]:
    """Character offsets of pieces given as the bytes they spell (engines without an
    offsets API: llama.cpp). The pieces must spell the text, or ``" " + text`` (a
    sentencepiece tokenizer's added leading space, which then belongs to word 0)."""
    raw = text.encode("utf-8")
    joined = b"".join(pieces)
    shift = 0
    if joined != raw:
        if joined == b" " + raw:
            shift = 1
        else:
            raise LMError(f"the tokenizer's pieces do not spell the text {text!r} (it normalises "
                          "the text), so they cannot be attributed to words")
    # byte offset -> character offset, for every byte where a character starts
    char_at = {}
    pos = 0
    for k, ch in enumerate(text):
        char_at[pos] = k
        pos += len(ch.encode("utf-8"))
    char_at[pos] = len(text)
    out, b = [], -shift
    for p in pieces:
        s, e = max(b, 0), max(b + len(p), 0)
        # a piece that starts or ends inside a character (byte fallback) covers all of it
        out.append((_char(char_at, s, -1), _char(char_at, e, 1) if e > s else _char(char_at, s, -1)))
        b += len(p)
    return out


def _char(char_at: dict, b: int, step: int) -> int:
    """The character offset at byte ``b``, moving by ``step`` to a character boundary."""
    while b not in char_at:
        b += step
    return char_at[b]


def word_sums(enc: Encoded, lp: np.ndarray, n_words: int) -> np.ndarray:
    """Each word's share of the scored log-probs ``lp`` (of ``enc.ids[enc.first:]``): the
    sum over the pieces it owns; a special token after the first belongs to the word
    before it, so that the words sum to the sentence."""
    owners = np.asarray(enc.owner[enc.first:], dtype=np.int64)
    if owners.size and owners[0] < 0:
        owners[0] = 0
    for k in range(1, owners.size):
        if owners[k] < 0:
            owners[k] = owners[k - 1]
    return np.bincount(owners, weights=lp, minlength=n_words)[:n_words] if owners.size \
        else np.zeros(n_words)
