"""The batch mechanics of :mod:`lm.gguf.llamacpp`: groups of sequences that share an
opening are packed into rounds; a round is one ``llama_decode`` of every group's
opening, tagged with every member's sequence id (llama.cpp keeps one copy of a
token that several sequences share), and of all members' own tokens after it.

Each token of a batch carries a list of requests: ``(token, array, index)``
stores log P(token | sequence so far) into ``array[index]``; token ``-1`` stores
the word-end mass instead. Only tokens with requests ask llama.cpp for logits.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lm.errors import LMError

WORD_END = -1
#: logit rows copied out of llama.cpp at a time
ROWS = 32
#: logit rows asked for in one decode call (each row is n_vocab floats)
MAX_OUTPUTS = 512


@dataclass
class Group:
    """Sequences that share an opening: ``prefix`` then one ``suffix`` per member."""
    prefix: list[int]
    suffixes: list[list[int]]
    score_prefix: bool   # log-probs of prefix tokens 1.. are wanted (sentence method)
    word_end: bool       # the word-end factor after each member's last token (target method)
    prefix_lp: np.ndarray = field(default=None)
    member_lp: list = field(default_factory=list)
    member_we: list = field(default_factory=list)

    def decoded_suffix(self, m: int) -> list[int]:
        s = self.suffixes[m]
        return s if self.word_end else s[:-1]  # a sentence's last token predicts nothing

    def cells(self) -> int:
        return len(self.prefix) + sum(len(self.decoded_suffix(m)) for m in range(len(self.suffixes)))


@dataclass
class Lane:
    """One llama.cpp context and its batch: what a decode round needs (a scorer reading
    in several lanes has one per lane, all on the same model)."""
    lc: object          # the llama_cpp module
    ctx: object
    mem: object
    batch: object
    n_ctx: int
    n_vocab: int
    word_start: np.ndarray
    path: object
    share: bool = True  # a token that several sequences open with goes in once


def plan_rounds(groups, n_ctx: int, max_seqs: int):
    """(rounds, splits, skipped): the groups packed into decode rounds of at most
    ``max_seqs`` sequences, ``n_ctx`` cells and MAX_OUTPUTS logit rows; ``splits``: the
    groups too long together, read member by member (:func:`join_splits` puts their
    scores back); ``skipped``: sequences that do not fit the context window at all."""
    rounds, splits, skipped = [], [], 0
    round_, seqs, cells, outs = [], 0, 0, 0
    for g in groups:
        _init(g)
        if g.cells() > n_ctx:
            if len(g.suffixes) == 1:
                skipped += 1
                continue
            # too long together: each member on its own (any that still does not fit is skipped)
            subs = [Group(g.prefix, [s], g.score_prefix, g.word_end) for s in g.suffixes]
            sub_rounds, _, sub_skipped = plan_rounds(subs, n_ctx, max_seqs)
            rounds += sub_rounds
            skipped += sub_skipped
            splits.append((g, subs))
            continue
        n_seq, n_cells = len(g.suffixes), g.cells()
        n_out = (len(g.prefix) if g.score_prefix else 1) + n_cells - len(g.prefix)
        if round_ and (seqs + n_seq > max_seqs or cells + n_cells > n_ctx or outs + n_out > MAX_OUTPUTS):
            rounds.append(round_)
            round_, seqs, cells, outs = [], 0, 0, 0
        round_.append(g)
        seqs, cells, outs = seqs + n_seq, cells + n_cells, outs + n_out
    if round_:
        rounds.append(round_)
    return rounds, splits, skipped


def join_splits(splits) -> None:
    """A split group's scores from its members' own groups, once they are decoded."""
    for g, subs in splits:
        g.prefix_lp = next((s.prefix_lp for s in subs if s.member_lp[0] is not None), g.prefix_lp)
        g.member_lp = [s.member_lp[0] for s in subs]
        g.member_we = [s.member_we[0] for s in subs]


def _init(g) -> None:
    n = len(g.suffixes)
    g.prefix_lp = np.full(max(len(g.prefix) - 1, 0), np.nan) if g.score_prefix else np.zeros(0)
    g.member_lp = [None] * n
    g.member_we = [0.0] * n


@dataclass
class _Node:
    """A token of a round's prefix tree: the sequences that read it, and its requests."""
    pos: int
    token: int
    seqs: list = field(default_factory=list)
    reqs: list = field(default_factory=list)
    next: dict = field(default_factory=dict)


def decode_round(lane: Lane, groups) -> None:
    """One round, one decode of the round's sequences as a prefix tree: a token that
    several sequences open with (BOS in all of them, a group's opening, a first word
    that sentences of other groups share) goes into the batch once, tagged with each of
    their sequence ids (llama.cpp keeps one cell for it, shared), and its logits row
    answers each of them. On BLiMP's agreement pairs the tree holds 22% fewer tokens
    than one opening per group."""
    lane.lc.llama_memory_clear(lane.mem, True)
    root, order, seq = {}, [], 0
    for g in groups:
        n = len(g.suffixes)
        g.member_lp = [np.full(len(s), np.nan) for s in g.suffixes]
        g.member_we = [np.nan if g.word_end else 0.0] * n
        for m in range(n):
            level = root if lane.share else {}
            for pos, (token, reqs) in enumerate(_member_path(g, m)):
                node = level.get(token)
                if node is None:
                    node = level[token] = _Node(pos, token)
                    order.append(node)   # a parent always before its children
                node.seqs.append(seq + m)
                node.reqs += reqs
                level = node.next
        seq += n
    _decode(lane, [(node.seqs, node.pos, [node.token], [node.reqs]) for node in order])


def _member_path(g, m: int) -> list[tuple[int, list]]:
    """(token, requests) of member m's decoded tokens: its group's opening (whose own
    log-probs are asked for once, by member 0), then its own tokens."""
    c, first = len(g.prefix), g.suffixes[m][:1]
    path = []
    for p in range(c):
        r = [(g.prefix[p + 1], g.prefix_lp, p)] if g.score_prefix and p < c - 1 and m == 0 else []
        if p == c - 1 and first:
            r.append((first[0], g.member_lp[m], 0))
        path.append((g.prefix[p], r))
    return path + list(zip(g.decoded_suffix(m), _member_reqs(g, m)))


def _member_reqs(g, m: int) -> list[list]:
    """Requests of member m's decoded tokens: the next token, then the word end."""
    s, out = g.suffixes[m], []
    for i in range(len(g.decoded_suffix(m))):
        r = [(s[i + 1], g.member_lp[m], i + 1)] if i + 1 < len(s) else []
        if g.word_end and i == len(s) - 1:
            r.append((WORD_END, g.member_we, m))
        out.append(r)
    return out


def _decode(lane: Lane, entries) -> None:
    """Put ``(sequence ids, start position, tokens, requests)`` entries in one batch, decode
    it and answer the requests from the fp32 log-softmax of the logits."""
    lc, batch = lane.lc, lane.batch
    n = sum(len(t) for _, _, t, _ in entries)
    if n == 0:
        return
    token = np.ctypeslib.as_array(batch.token, shape=(lane.n_ctx,))
    pos = np.ctypeslib.as_array(batch.pos, shape=(lane.n_ctx,))
    n_seq = np.ctypeslib.as_array(batch.n_seq_id, shape=(lane.n_ctx,))
    flags = np.ctypeslib.as_array(batch.logits, shape=(lane.n_ctx,))
    requests, where, i = [], [], 0
    for seq, start, toks, reqs in entries:
        k = len(toks)
        token[i:i + k] = toks
        pos[i:i + k] = np.arange(start, start + k)
        n_seq[i:i + k] = len(seq)
        for j in range(i, i + k):
            for m, sid in enumerate(seq):
                batch.seq_id[j][m] = sid
        for r in reqs:
            flags[i] = 1 if r else 0
            if r:
                requests.append(r)
                where.append(i)
            i += 1
    batch.n_tokens = n
    rc = lc.llama_decode(lane.ctx, batch)
    if rc != 0:
        raise LMError(f"{lane.path}: llama_decode failed (code {rc}) on a batch of {n} tokens")
    # llama_get_logits is every requested row in batch order (llama.cpp puts back in order
    # what it computed out of order across sequences): one view, no copy; the rows are
    # answered a few at a time so the log-softmax's scratch stays small
    logits = np.ctypeslib.as_array(lc.llama_get_logits(lane.ctx), shape=(len(where), lane.n_vocab))
    scratch = np.empty((min(ROWS, len(where)), lane.n_vocab), dtype=np.float32)
    for lo in range(0, len(where), ROWS):
        _answer(lane, logits[lo:lo + ROWS], requests[lo:lo + ROWS], scratch)


def _answer(lane: Lane, logits: np.ndarray, requests, scratch: np.ndarray) -> None:
    """Store the requested log-probs (and word-end masses) of these logit rows."""
    lse = _logsumexp(logits, scratch[:len(logits)])
    rows, toks, dest, we_rows, we_dest = [], [], [], [], []
    for row, r in enumerate(requests):
        for tok, arr, idx in r:
            if tok == WORD_END:
                we_rows.append(row)
                we_dest.append((arr, idx))
            else:
                rows.append(row)
                toks.append(tok)
                dest.append((arr, idx))
    values = logits[rows, toks] - lse[rows]
    for (arr, idx), v in zip(dest, values.tolist()):
        arr[idx] = v
    if we_rows:
        masked = logits[we_rows][:, lane.word_start]
        we = _logsumexp(masked, np.empty_like(masked)) - lse[we_rows]
        for (arr, idx), v in zip(we_dest, we.tolist()):
            arr[idx] = v


def _logsumexp(x: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Row-wise log-sum-exp in float32 (the log-softmax denominator); ``scratch``, shaped
    like ``x``, takes exp(x - max) in place of two fresh arrays."""
    m = x.max(axis=1)
    np.subtract(x, m[:, None], out=scratch)
    np.exp(scratch, out=scratch)
    return m + np.log(scratch.sum(axis=1))
