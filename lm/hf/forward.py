"""The batched forward passes of the causal transformers engine (:mod:`lm.hf.causal`).

A :class:`Request` asks for log P(ids[j] | ids[:j]) for every j from ``first`` on
and, with ``word_end``, the word-end mass after the last id (the target method).
:meth:`CausalRunner.run` answers many at once:

* sequences that open alike are grouped (:func:`lm.openings.group_openings`); a
  group's opening is read once into the key/value cache, and each member then
  reads only its own rest from a copy of that cache (explicit position ids, the
  opening's padding masked);
* groups are sorted by length and packed into batches of at most ``batch_size``
  sequences, right-padded with an attention mask, so little padding is read;
* the output layer runs only on the hidden states whose next token is scored,
  queued across passes into blocks of OUT_ROWS rows, in fp32 (an fp32 copy of the
  output embedding when the weights are bf16/fp16); the log-probability of a token
  is its logit (a dot product) minus the row's logsumexp, taken over blocks of
  VOCAB_BLOCK columns: no (rows, V) matrix, let alone a log-softmax, is kept;
* a position shared by several members (inside the opening) is computed once;
* a sequence longer than the model's context is skipped (NaN) and counted;
* on CPU with ``lanes`` > 1, the chunks go to that many threads, each reading its own
  chunks at one torch thread (see :meth:`CausalRunner._run_lanes`).

Padding and batch size never change a score beyond float noise (tests hold 1e-4).
"""
from __future__ import annotations

import copy
import math
import threading
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from transformers import DynamicCache

from lm.thread_lanes import lanes_for, side_by_side
from lm.openings import group_openings

#: hidden states queued for the output layer before it runs (a larger M for its matrix
#: product than one short pass gives)
OUT_ROWS = 512
#: vocabulary columns of one block of logits (OUT_ROWS x VOCAB_BLOCK fp32: 2 MB)
VOCAB_BLOCK = 1024
#: tokens of one forward pass at most (padded rows x width): long sentences then go
#: in smaller batches, so the activations stay small
MAX_BATCH_TOKENS = 4096
#: continuations (a few tokens each after their group's opening) per forward pass: up
#: to SHORT_ROWS x ``batch_size`` of them, within the tokens ``batch_size`` sentences of
#: SENTENCE_TOKENS would read, so that each matrix product keeps enough rows to run near
#: the machine's peak (at 2 threads a 48-row product runs at 60% of a 256-row one)
SHORT_ROWS = 4
SENTENCE_TOKENS = 12
#: batches of sequences per chunk: a chunk's openings are read (and their key/values
#: kept) before its continuations, so that each pass is sorted by its own length
CHUNK_BATCHES = 16


@dataclass(frozen=True)
class Request:
    """Score ``ids[first:]`` given what precedes each; ``word_end``: also the mass of
    word-ending tokens after ``ids[-1]``."""
    ids: tuple[int, ...]
    first: int
    word_end: bool = False

    @property
    def fed(self) -> tuple[int, ...]:
        """The ids the model must read: the last one only for its word-end mass."""
        return self.ids if self.word_end else self.ids[:-1]


class CausalRunner:
    """Forward passes of one transformers causal LM (its body and output layer)."""

    def __init__(self, body, head, *, device, pad_id: int, batch_size: int, max_positions: int | None,
                 fp32_head: bool, config=None, threads: int | None = None):
        self.body, self.device, self.pad_id, self.config = body, device, pad_id, config
        self.batch_size, self.max_positions = batch_size, max_positions
        w = head.weight.detach()
        b = getattr(head, "bias", None)
        # fp32 output layer: bf16/fp16 weights get an fp32 copy (the reduction is fp32)
        self.weight = w.float() if fp32_head else w
        self.bias = None if b is None else b.detach().float()
        self.skipped = 0
        #: on CPU with explicit ``threads``: that many lanes (at most MAX_LANES) reading
        #: chunks side by side, each at ``threads // lanes`` torch threads; else 1
        self.lanes, self.lane_threads = lanes_for(threads, device.type == "cpu")
        self._stop: threading.Event | None = None   # set: a lane stops at its next batch
        self._queued: list = []      # hidden-state rows waiting for the output layer
        self._wants: list = []       # per queued row: ({token: owners}, [word-end owners])
        #: work done so far: tokens read (without padding), padding read, output rows
        self.counters = {"tokens": 0, "padding": 0, "rows": 0}

    def run(self, requests: Sequence[Request], word_start: torch.Tensor | None = None):
        """(per request, float64 log-probs of ``ids[first:]``; float64 word-end masses)."""
        lp = [np.full(max(len(r.ids) - r.first, 0), np.nan) for r in requests]
        we = np.full(len(requests), np.nan)
        live = [i for i, r in enumerate(requests) if r.fed and r.first < len(r.ids) + r.word_end
                and not self._too_long(r)]
        self.skipped += sum(1 for r in requests if r.fed and self._too_long(r))
        reqs = [requests[i] for i in live]
        groups = group_openings([r.fed for r in reqs])
        out = (live, lp, we, word_start)
        chunks = list(self._chunks(groups))
        if self.lanes > 1 and len(chunks) > 1:
            self._run_lanes(chunks, reqs, out)
            return lp, we
        with torch.inference_mode():
            for chunk in chunks:
                self._run_chunk(chunk, reqs, out)
            self._flush(*out)
        return lp, we

    def _run_lanes(self, chunks, reqs, out) -> None:
        """Chunk i read by lane i mod n, each lane a thread at ``lane_threads`` torch
        threads with its own output queue (:mod:`lm.thread_lanes`: the split is fixed, so the scores
        are the same on every run)."""
        lanes = [self._lane() for _ in range(min(self.lanes, len(chunks)))]

        def read(k, mine, stop) -> None:
            torch.set_num_threads(self.lane_threads)   # this thread's own (OpenMP and MKL keep it per thread)
            lanes[k]._stop = stop
            with torch.inference_mode():
                for chunk in mine:
                    lanes[k]._run_chunk(chunk, reqs, out)
                lanes[k]._flush(*out)

        side_by_side(read, chunks, len(lanes))
        for lane in lanes:
            for k, v in lane.counters.items():
                self.counters[k] += v

    def _lane(self) -> "CausalRunner":
        """A runner sharing this one's model and weights, with an empty output queue."""
        lane = copy.copy(self)
        lane._queued, lane._wants = [], []
        lane.counters = dict.fromkeys(self.counters, 0)
        return lane

    def _too_long(self, r: Request) -> bool:
        return self.max_positions is not None and len(r.fed) > self.max_positions

    def _chunks(self, groups):
        """Runs of groups holding at most CHUNK_BATCHES batches of sequences: the openings
        of a chunk are read first, then all its continuations, each sorted by length.
        With lanes, a multiple of ``lanes`` chunks of even size (the lanes finish together),
        each 1/lanes of the size: the key/values kept at once stay those of one lane (peak
        RSS 1.36 GB instead of 1.57 on BLiMP with SmolLM2, at the same speed)."""
        cap = CHUNK_BATCHES * self.batch_size
        if self.lanes > 1:
            total = sum(len(g.members) for g in groups)
            k = math.ceil(math.ceil(total * self.lanes / cap) / self.lanes) * self.lanes
            cap = max(1, math.ceil(total / k))
        chunk, seqs = [], 0
        for g in groups:
            if chunk and seqs + len(g.members) > cap:
                yield chunk
                chunk, seqs = [], 0
            chunk.append(g)
            seqs += len(g.members)
        if chunk:
            yield chunk

    def _batches(self, lengths: Sequence[int], order: Sequence[int], short: bool = False):
        """Consecutive runs of ``order`` (sorted by length) within the batch limits;
        ``short``: continuations, more of them per pass (SHORT_ROWS), a pass ending where
        the length grows once it holds ``batch_size`` (little padding)."""
        rows = self.batch_size * (SHORT_ROWS if short else 1)
        cap = min(MAX_BATCH_TOKENS, self.batch_size * SENTENCE_TOKENS) if short else MAX_BATCH_TOKENS
        batch, tokens = [], 0
        for k in order:
            if self._stop is not None and self._stop.is_set():
                return
            n = lengths[k]
            full = len(batch) + 1 > rows or (len(batch) + 1) * max(n, tokens) > cap
            if batch and (full or (short and n > tokens and len(batch) >= self.batch_size)):
                yield batch
                batch, tokens = [], 0
            batch.append(k)
            tokens = max(tokens, n)
        if batch:
            yield batch

    def _pad(self, seqs):
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, :len(s)] = torch.tensor(s, dtype=torch.long)
            mask[r, :len(s)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _run_chunk(self, groups, reqs, out) -> None:
        """Every opening of the chunk (a lone sequence whole), batched by length, its
        key/values kept for the groups of several; then every continuation, batched by
        length, reading its group's opening from those key/values."""
        opens = [reqs[g.members[0]].fed[:g.shared] for g in groups]
        kept: dict[int, tuple] = {}   # group -> (the batch's key/values, row)
        lengths = [len(o) for o in opens]
        for batch in self._batches(lengths, sorted(range(len(groups)), key=lambda k: (lengths[k], k))):
            ids, mask = self._pad([opens[k] for k in batch])
            self._count(mask)
            multi = any(len(groups[k].members) > 1 for k in batch)
            res = self.body(input_ids=ids, attention_mask=mask, use_cache=multi)
            h = res.last_hidden_state
            rows: dict = {}
            for r, k in enumerate(batch):
                for m in groups[k].members:
                    self._want(rows, reqs[m], m, range(0, groups[k].shared),
                               lambda p, r=r: r * h.shape[1] + p)
                if len(groups[k].members) > 1:
                    kept[k] = (res.past_key_values, r)
            self._output(h.reshape(-1, h.shape[-1]), rows, *out)
        members = [(k, m) for k, g in enumerate(groups) if len(g.members) > 1 for m in g.members]
        rest = [reqs[m].fed[groups[k].shared:] for k, m in members]
        lengths = [len(x) for x in rest]
        for batch in self._batches(lengths, sorted(range(len(members)), key=lambda j: (lengths[j], j)), short=True):
            shared = [groups[members[j][0]].shared for j in batch]
            cache, pmask = self._gather_cache([kept[members[j][0]] for j in batch], shared)
            sid, smask = self._pad([rest[j] for j in batch])
            self._count(smask)
            pos = torch.tensor(shared, device=self.device)[:, None] + torch.arange(sid.shape[1], device=self.device)
            h = self.body(input_ids=sid, attention_mask=torch.cat([pmask, smask], 1), position_ids=pos,
                          past_key_values=cache, use_cache=False).last_hidden_state
            rows = {}
            for r, j in enumerate(batch):
                m, sh = members[j][1], shared[r]
                self._want(rows, reqs[m], m, range(sh, len(reqs[m].fed)),
                           lambda p, r=r, sh=sh: r * h.shape[1] + (p - sh))
            self._output(h.reshape(-1, h.shape[-1]), rows, *out)

    def _gather_cache(self, sources, shared):
        """A cache holding, row by row, the opening key/values of each continuation
        (``sources``: (cache, row) of the batch that read it), zero-padded to the longest
        opening, and the attention mask of those slots. One copy per layer, filled in
        place (no intermediate copies: continuation passes are large)."""
        width = max(shared)
        by_cache: dict[int, list] = {}
        for r, (cache, row) in enumerate(sources):
            entry = by_cache.setdefault(id(cache), [cache, [], []])
            entry[1].append(row)
            entry[2].append(r)
        groups = [([tuple(kv[:2]) for kv in cache], torch.tensor(rows, device=self.device),
                   torch.tensor(dest, device=self.device)) for cache, rows, dest in by_cache.values()]
        layers = []
        for layer in range(len(groups[0][0])):
            pair = []
            for which in (0, 1):                       # keys, values: (B, heads, T, d)
                ref = groups[0][0][layer][which]
                out = ref.new_zeros((len(sources), ref.shape[1], width, ref.shape[3]))
                for kv, rows, dest in groups:
                    t = kv[layer][which]
                    w = min(width, t.shape[2])
                    out[dest, :, :w] = t.index_select(0, rows)[:, :, :w]
                pair.append(out)
            layers.append(tuple(pair))
        mask = (torch.arange(width, device=self.device)[None, :]
                < torch.tensor(shared, device=self.device)[:, None]).long()
        return DynamicCache(layers, config=self.config), mask

    def _count(self, mask) -> None:
        real = int(mask.sum())
        self.counters["tokens"] += real
        self.counters["padding"] += mask.numel() - real

    @staticmethod
    def _want(rows: dict, req: Request, m: int, positions, row_of) -> None:
        """Record, for each hidden state of ``positions`` that ``req`` needs, what it
        predicts: token ``ids[p+1]`` (its log-prob) or, after the last id, the word end."""
        for p in positions:
            if p < req.first - 1:
                continue
            nxt = p + 1
            key = row_of(p)
            want = rows.setdefault(key, ({}, []))
            if nxt < len(req.ids):
                want[0].setdefault(req.ids[nxt], []).append((m, nxt - req.first))
            elif req.word_end:
                want[1].append(m)

    def _output(self, hidden, rows: dict, live, lp, we, word_start) -> None:
        """Queue the hidden states ``rows`` asks for (flattened positions of this pass)
        with what each predicts; the queue goes through the output layer once it holds
        OUT_ROWS rows (and at the end of :meth:`run`)."""
        keys = sorted(rows)
        if not keys:
            return
        self.counters["rows"] += len(keys)
        self._queued.append(hidden[torch.tensor(keys, device=hidden.device)].to(self.weight.dtype))
        self._wants += [rows[k] for k in keys]
        if len(self._wants) >= OUT_ROWS:
            self._flush(live, lp, we, word_start)

    def _flush(self, live, lp, we, word_start) -> None:
        """The queued rows through the output layer: each observed token's logit (a dot
        product with its output embedding) minus the row's logsumexp, fp32; the
        logsumexp (and the word-start mass) a block of VOCAB_BLOCK columns at a time."""
        if not self._wants:
            return
        h, wants = torch.cat(self._queued), self._wants
        self._queued, self._wants = [], []
        we_rows = [r for r, w in enumerate(wants) if w[1]] if word_start is not None else []
        lse, mass = self._logsumexp(h, we_rows, word_start)
        r_idx, t_idx, dest = [], [], []
        for r, (tokens, _) in enumerate(wants):
            for tok, owners in tokens.items():
                r_idx.append(r)
                t_idx.append(tok)
                dest.append(owners)
        if r_idx:
            ri = torch.tensor(r_idx, device=h.device)
            ti = torch.tensor(t_idx, device=h.device)
            logit = (h[ri] * self.weight[ti]).sum(1)
            if self.bias is not None:
                logit = logit + self.bias[ti]
            for owners, v in zip(dest, (logit - lse[ri]).double().cpu().tolist()):
                for m, j in owners:
                    lp[live[m]][j] = v
        for r, v in zip(we_rows, mass):
            for m in wants[r][1]:
                we[live[m]] = v

    def _logsumexp(self, h, we_rows, word_start):
        """(logsumexp of every row's logits; per ``we_rows`` row, the logsumexp over the
        word-start tokens minus the row's, as floats). A (rows, VOCAB_BLOCK) block of
        logits at a time: the block stays in cache, where a whole (rows, V) matrix would
        not (1.5x the output layer's speed at one thread)."""
        parts, we_parts = [], []
        wi = torch.tensor(we_rows, device=h.device, dtype=torch.long)
        for s in range(0, self.weight.shape[0], VOCAB_BLOCK):
            e = min(s + VOCAB_BLOCK, self.weight.shape[0])
            b = None if self.bias is None else self.bias[s:e]
            logits = torch.nn.functional.linear(h, self.weight[s:e], b)
            parts.append(torch.logsumexp(logits, dim=1))
            if we_rows:
                cols = word_start[s:e]
                sub = logits.index_select(0, wi)[:, cols]
                we_parts.append(torch.logsumexp(sub, dim=1) if sub.shape[1] else
                                torch.full((len(we_rows),), -torch.inf, device=h.device))
        lse = torch.logsumexp(torch.stack(parts, 1), dim=1)
        if not we_rows:
            return lse, []
        mass = torch.logsumexp(torch.stack(we_parts, 1), dim=1) - lse[wi]
        return lse, mass.double().cpu().tolist()
