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


def run_groups(sc, groups) -> int:
    """Fill ``prefix_lp``, ``member_lp`` and ``member_we`` of every group; returns
    how many sequences were skipped for not fitting the context window."""
    skipped, round_, seqs, cells, outs = 0, [], 0, 0, 0
    for g in groups:
        _init(g)
        if g.cells() > sc.n_ctx:
            if len(g.suffixes) == 1:
                skipped += 1
                continue
            # too long together: each member on its own (any that still does not fit is skipped)
            subs = [Group(g.prefix, [s], g.score_prefix, g.word_end) for s in g.suffixes]
            skipped += run_groups(sc, subs)
            g.prefix_lp = next((s.prefix_lp for s in subs if s.member_lp[0] is not None), g.prefix_lp)
            g.member_lp = [s.member_lp[0] for s in subs]
            g.member_we = [s.member_we[0] for s in subs]
            continue
        n_seq, n_cells = len(g.suffixes), g.cells()
        n_out = (len(g.prefix) if g.score_prefix else 1) + n_cells - len(g.prefix)
        if round_ and (seqs + n_seq > sc.batch_size or cells + n_cells > sc.n_ctx
                       or outs + n_out > MAX_OUTPUTS):
            _round(sc, round_)
            round_, seqs, cells, outs = [], 0, 0, 0
        round_.append(g)
        seqs, cells, outs = seqs + n_seq, cells + n_cells, outs + n_out
    if round_:
        _round(sc, round_)
    return skipped


def _init(g) -> None:
    n = len(g.suffixes)
    g.prefix_lp = np.full(max(len(g.prefix) - 1, 0), np.nan) if g.score_prefix else np.zeros(0)
    g.member_lp = [None] * n
    g.member_we = [0.0] * n


def _round(sc, groups) -> None:
    """One round, one decode: each group's opening carries all its members' sequence
    ids (llama.cpp stores it once, shared), followed by each member's own tokens."""
    sc._lc.llama_memory_clear(sc.mem, True)
    entries, seq = [], 0
    for g in groups:
        c, n = len(g.prefix), len(g.suffixes)
        g.member_lp = [np.full(len(s), np.nan) for s in g.suffixes]
        g.member_we = [np.nan if g.word_end else 0.0] * n
        reqs = []
        for p in range(c):
            r = [(g.prefix[p + 1], g.prefix_lp, p)] if g.score_prefix and p < c - 1 else []
            if p == c - 1:
                r += [(s[0], g.member_lp[m], 0) for m, s in enumerate(g.suffixes) if s]
            reqs.append(r)
        entries.append((list(range(seq, seq + n)), 0, g.prefix, reqs))
        entries += [([seq + m], c, g.decoded_suffix(m), _member_reqs(g, m)) for m in range(n)]
        seq += n
    _decode(sc, entries)


def _member_reqs(g, m: int) -> list[list]:
    """Requests of member m's decoded tokens: the next token, then the word end."""
    s, out = g.suffixes[m], []
    for i in range(len(g.decoded_suffix(m))):
        r = [(s[i + 1], g.member_lp[m], i + 1)] if i + 1 < len(s) else []
        if g.word_end and i == len(s) - 1:
            r.append((WORD_END, g.member_we, m))
        out.append(r)
    return out


def _decode(sc, entries) -> None:
    """Put ``(sequence ids, start position, tokens, requests)`` entries in one batch, decode
    it and answer the requests from the fp32 log-softmax of the logits."""
    lc, batch = sc._lc, sc._batch
    n = sum(len(t) for _, _, t, _ in entries)
    if n == 0:
        return
    token = np.ctypeslib.as_array(batch.token, shape=(sc.n_ctx,))
    pos = np.ctypeslib.as_array(batch.pos, shape=(sc.n_ctx,))
    n_seq = np.ctypeslib.as_array(batch.n_seq_id, shape=(sc.n_ctx,))
    flags = np.ctypeslib.as_array(batch.logits, shape=(sc.n_ctx,))
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
    rc = lc.llama_decode(sc.ctx, batch)
    if rc != 0:
        raise LMError(f"{sc.path}: llama_decode failed (code {rc}) on a batch of {n} tokens")
    # row by batch index (llama_get_logits_ith): llama.cpp may compute outputs out of
    # batch order when a batch holds several sequences; a few rows at a time keeps
    # the copies small (each row is n_vocab floats)
    for lo in range(0, len(where), ROWS):
        logits = np.stack([np.ctypeslib.as_array(lc.llama_get_logits_ith(sc.ctx, j), shape=(sc.n_vocab,))
                           for j in where[lo:lo + ROWS]])
        _answer(sc, logits, requests[lo:lo + ROWS])


def _answer(sc, logits: np.ndarray, requests) -> None:
    """Store the requested log-probs (and word-end masses) of these logit rows."""
    lse = _logsumexp(logits)
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
        we = _logsumexp(logits[we_rows][:, sc._word_start]) - lse[we_rows]
        for (arr, idx), v in zip(we_dest, we.tolist()):
            arr[idx] = v


def _logsumexp(x: np.ndarray) -> np.ndarray:
    """Row-wise log-sum-exp in float32 (the log-softmax denominator)."""
    m = x.max(axis=1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=1))
